package app

import (
	"context"
	"time"

	gw "github.com/gwlabs/gateway"
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
