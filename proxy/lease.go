package proxy

import (
	"context"
	"errors"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// DefaultHoldTTL is a hold's lease (Config.HoldTTL): the process that
// placed it renews it every third of it while its request runs
// (RenewLeases, and KeepAlive on every stream event), so a hold outlives
// its process by at most this long after a crash (kill -9, a lost
// machine): the customer's money is never locked for long.
const DefaultHoldTTL = 90 * time.Second

// maxLease bounds how long the process renews one hold: a request
// that somehow never finished must not lock its money for the life of
// the process.
const maxLease = 24 * time.Hour

// leases are the holds this process placed and has not finished, with
// when each was placed.
type leases struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (l *leases) add(id string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]time.Time{}
	}
	l.m[id] = now
}

func (l *leases) done(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, id)
}

// ids returns the holds to renew at now, dropping those placed more
// than maxLease ago.
func (l *leases) ids(now time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.m))
	for id, at := range l.m {
		if now.Sub(at) > maxLease {
			delete(l.m, id)
			continue
		}
		out = append(out, id)
	}
	return out
}

// RenewLeases renews the lease of every hold this process placed and
// has not finished, every third of HoldTTL, until ctx ends: a request
// waiting long for its vendor keeps its hold, and a crashed process's
// holds lapse within HoldTTL.
func (g *Gateway) RenewLeases(ctx context.Context) {
	t := time.NewTicker(max(g.cfg.HoldTTL/3, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.renewLeases(ctx)
	}
}

// renewLeases renews every live hold once.
func (g *Gateway) renewLeases(ctx context.Context) {
	for _, id := range g.leases.ids(g.cfg.Now()) {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := g.cfg.Store.RenewHold(wctx, id, g.cfg.Now().Add(g.cfg.HoldTTL))
		cancel()
		switch {
		case errors.Is(err, gw.ErrNotFound):
			g.leases.done(id) // finished meanwhile, or lapsed
		case err != nil && ctx.Err() == nil:
			g.cfg.Logger.Warn("renew hold lease", "request_id", id, "err", err)
		}
	}
}
