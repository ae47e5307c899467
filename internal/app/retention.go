package app

import (
	"context"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/proxy"
)

// sweepRefused bounds the incidents and the records of refused requests
// each account leaves (GATEWAY_REFUSED_RETENTION,
// GATEWAY_REFUSED_MAX_PER_ACCOUNT), at each store sweep.
func (m *Main) sweepRefused(ctx context.Context) {
	rs, ok := m.store.(gw.RefusedSweeper)
	c := m.Config
	if !ok || c.RefusedRetention <= 0 && c.RefusedMaxPerAccount <= 0 {
		return
	}
	var before time.Time
	if c.RefusedRetention > 0 {
		before = time.Now().Add(-c.RefusedRetention)
	}
	n, err := rs.SweepRefused(ctx, before, int(min(c.RefusedMaxPerAccount, 1<<31-1)))
	if err != nil {
		m.Logger.Warn("sweep refused requests' incidents and records", "err", err)
	} else if n > 0 {
		m.Logger.Info("deleted old incidents and records of refused requests", "count", n)
	}
}

// sweepCounts deletes the optimizer's kept counts no request reads
// any more (another directive, a model spelled other than the rate
// card's id, older than a day), at each store sweep.
func (m *Main) sweepCounts(ctx context.Context) {
	n, err := m.optimizer.SweepCounts(ctx)
	if err != nil {
		m.Logger.Warn("sweep the optimizer's kept counts", "err", err)
	} else if n > 0 {
		m.Logger.Info("deleted the optimizer's stale counts", "count", n)
	}
}

// newOptimizer builds the optimization layer (newOptimizer) and keeps
// it for the store sweep.
func (m *Main) newOptimizer(c Config, providers map[string]gw.Provider, biller proxy.Biller) *optimize.Optimizer {
	m.optimizer = newOptimizer(c, providers, m.store, biller, m.Logger)
	return m.optimizer
}

// renewLeases renews the leases of this process's live holds until
// Close (proxy.Gateway.RenewLeases).
func (m *Main) renewLeases() {
	defer m.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	stop := m.stop
	go func() {
		<-stop
		cancel()
	}()
	m.gateway.RenewLeases(ctx)
}

// sweepEvery is the store sweep's period: a minute, or half a hold's
// lease when that is shorter.
func sweepEvery(holdTTL time.Duration) time.Duration {
	if holdTTL > 0 && holdTTL/2 < time.Minute {
		return max(holdTTL/2, 500*time.Millisecond)
	}
	return time.Minute
}
