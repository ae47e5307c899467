package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/route"
)

// reconcilable reports whether the vendor has a report the gateway reads
// with an admin credential (GATEWAY_<VENDOR>_ADMIN_KEY).
func reconcilable(vendor string) bool {
	switch vendor {
	case route.OpenAI, route.Anthropic, route.OpenRouter, route.DeepSeek:
		return true
	}
	return false
}

// ReconcileJob builds reconciliation over st (see package reconcile) for
// c's vendors, logging to logger; holder names this instance in the
// job's lease ("" for a random name).
func ReconcileJob(c Config, st gw.Store, holder string, logger *slog.Logger) (*reconcile.Job, error) {
	rs, ok := st.(gw.ReconcileStore)
	if !ok {
		return nil, fmt.Errorf("reconcile: the store %T keeps no reconciliation", st)
	}
	cfg := reconcile.Config{Store: rs, Vendors: route.Vendors(), Holder: holder, Logger: logger}
	cfg.Sources, cfg.Balances, cfg.Generations = reconcileReaders(c)
	return reconcile.New(cfg)
}

// reconcileReaders builds the vendors' report readers from c. Until the
// readers are wired every vendor is unreconcilable.
func reconcileReaders(Config) ([]reconcile.Source, []reconcile.Balances, reconcile.Generations) {
	return nil, nil, nil
}

// reconcileLines reads the lines the metrics export: the last three
// days'.
func reconcileLines(st gw.Store) func() []gw.ReconLine {
	rs, ok := st.(gw.ReconcileStore)
	if !ok {
		return func() []gw.ReconLine { return nil }
	}
	return func() []gw.ReconLine {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lines, err := rs.Recon(ctx, gw.ReconFilter{Since: reconcile.Day(time.Now()).Add(-72 * time.Hour)})
		if err != nil {
			return nil
		}
		return lines
	}
}

// reconcileLoop runs the reconciliation job until Close: every instance
// runs it, the one holding its lease in the store reconciles.
func (m *Main) reconcileLoop() {
	defer m.wg.Done()
	j, err := ReconcileJob(m.Config, m.store, m.Config.InstanceName, m.Logger)
	if err != nil {
		m.Logger.Warn("reconciliation off", "err", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := m.stop
	go func() {
		<-stop
		cancel()
	}()
	j.Run(ctx)
}
