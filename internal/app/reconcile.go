package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/route"
)

// ReconcileJob builds reconciliation over st (see package reconcile) for
// c's vendors, logging to logger; holder names this instance in the
// job's lease ("" for a random name).
func ReconcileJob(c Config, st gw.Store, holder string, logger *slog.Logger) (*reconcile.Job, error) {
	rs, ok := st.(gw.ReconcileStore)
	if !ok {
		return nil, fmt.Errorf("reconcile: the store %T keeps no reconciliation", st)
	}
	card, err := LoadCard(c.RateCardFile)
	if err != nil {
		return nil, err
	}
	// Report rows name models as the ledger does: the rate card's ids.
	set := c.VendorReports(nil, billing.New(card, billing.Options{}).CanonicalModel)
	cfg := reconcile.Config{Store: rs, Vendors: route.Vendors(), Holder: holder, Logger: logger, Balances: set.Balances}
	for _, s := range set.Sources {
		cfg.Sources = append(cfg.Sources, s)
	}
	if set.Generations != nil {
		cfg.Generations = set.Generations
	}
	return reconcile.New(cfg)
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
