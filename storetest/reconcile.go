package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Reconcile runs the reconciliation tests (gw.ReconcileStore) on stores
// from open. second, when not nil, opens another store on the same
// database as the one open returned last (a second instance): the lease
// test then races the two.
func Reconcile(t *testing.T, open func(t *testing.T) gw.Store, second func(t *testing.T) gw.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, a, b gw.ReconcileStore, s gw.Store)
	}{
		{"LedgerSumsPerVendorAndModel", testLedgerSums},
		{"LeaseHasOneHolder", testLease},
		{"ReconLinesReplacedPerVendorDay", testReconLines},
		{"BalanceReadingsNewestFirst", testBalanceReadings},
		{"AdjustmentsReviewedOnce", testAdjustments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			a := s.(gw.ReconcileStore)
			b := a
			if second != nil {
				b = second(t).(gw.ReconcileStore)
			}
			tt.run(t, a, b, s)
		})
	}
}

var reconT0 = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func testLedgerSums(t *testing.T, a, _ gw.ReconcileStore, s gw.Store) {
	ctx := t.Context()
	mk := func(id, vendor, model string, cost, disputed gw.Money, at time.Time) {
		r := record(id, "acct_a", 0, at)
		r.Vendor, r.Model, r.Cost, r.DisputedCost = vendor, model, cost, disputed
		if err := s.Log(ctx, r); err != nil {
			t.Fatalf("Log(%s): %v", id, err)
		}
	}
	mk("req_1", "openai", "gpt-x", 1000, 0, reconT0)
	mk("req_2", "openai", "gpt-x", 2000, 5, reconT0.Add(23*time.Hour))
	mk("req_3", "openai", "gpt-y", 300, 0, reconT0.Add(time.Hour))
	mk("req_4", "anthropic", "claude-x", 70, 0, reconT0.Add(time.Hour))
	mk("req_5", "openai", "gpt-x", 9999, 0, reconT0.Add(24*time.Hour)) // the next day
	mk("req_6", "openai", "gpt-x", 9999, 0, reconT0.Add(-time.Microsecond))

	got, err := a.LedgerSums(ctx, "openai", reconT0, reconT0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	base := record("", "", 0, reconT0).Usage
	want := []gw.LedgerSum{
		{Vendor: "openai", Model: "gpt-x", Requests: 2, Cost: 3005},
		{Vendor: "openai", Model: "gpt-y", Requests: 1, Cost: 300},
	}
	if len(got) != len(want) {
		t.Fatalf("LedgerSums = %+v, want %d rows", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		n := w.Requests
		if g.Vendor != w.Vendor || g.Model != w.Model || g.Requests != n || g.Cost != w.Cost {
			t.Errorf("row %d = %s/%s %d requests cost %d, want %s/%s %d cost %d", i, g.Vendor, g.Model, g.Requests, g.Cost, w.Vendor, w.Model, n, w.Cost)
		}
		u := g.Usage
		if u.InputTokens != n*base.InputTokens || u.CacheReadTokens != n*base.CacheReadTokens ||
			u.CacheWrite5mTokens != n*base.CacheWrite5mTokens || u.CacheWrite1hTokens != n*base.CacheWrite1hTokens ||
			u.OutputTokens != n*base.OutputTokens || u.OptimizerTokens != n*base.OptimizerTokens {
			t.Errorf("row %d usage = %+v, want %d times %+v", i, u, n, base)
		}
	}
	all, err := a.LedgerSums(ctx, "", reconT0, reconT0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Vendor != "anthropic" || all[0].Cost != 70 {
		t.Errorf("LedgerSums(all vendors) = %+v, want anthropic first then openai's two models", all)
	}
}

func testLease(t *testing.T, a, b gw.ReconcileStore, _ gw.Store) {
	ctx := t.Context()
	now := reconT0
	ok, err := a.TakeLease(ctx, "reconcile", "one", now, time.Minute)
	if err != nil || !ok {
		t.Fatalf("first TakeLease = %v, %v; want taken", ok, err)
	}
	if ok, err := b.TakeLease(ctx, "reconcile", "two", now.Add(30*time.Second), time.Minute); err != nil || ok {
		t.Fatalf("TakeLease by another while it runs = %v, %v; want refused", ok, err)
	}
	if ok, err := a.TakeLease(ctx, "reconcile", "one", now.Add(30*time.Second), time.Minute); err != nil || !ok {
		t.Fatalf("renewal by its holder = %v, %v; want renewed", ok, err)
	}
	// Renewed to now+90s: at now+60s (the first expiry) it still runs.
	if ok, _ := b.TakeLease(ctx, "reconcile", "two", now.Add(60*time.Second), time.Minute); ok {
		t.Fatal("lease taken at its first expiry although renewed")
	}
	if ok, err := b.TakeLease(ctx, "reconcile", "two", now.Add(90*time.Second), time.Minute); err != nil || !ok {
		t.Fatalf("TakeLease after it lapsed = %v, %v; want taken", ok, err)
	}
	if err := a.DropLease(ctx, "reconcile", "one"); err != nil { // not its lease any more: no effect
		t.Fatal(err)
	}
	if ok, _ := a.TakeLease(ctx, "reconcile", "one", now.Add(100*time.Second), time.Minute); ok {
		t.Fatal("a former holder's DropLease released the new holder's lease")
	}
	if err := b.DropLease(ctx, "reconcile", "two"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.TakeLease(ctx, "reconcile", "one", now.Add(100*time.Second), time.Minute); !ok {
		t.Fatal("lease not free after its holder dropped it")
	}

	// Many instances at once: exactly one takes a free lease.
	at := now.Add(time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []string
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("inst-%d", i)
			ok, err := s.TakeLease(ctx, "race", holder, at, time.Minute)
			if err != nil {
				t.Errorf("TakeLease(%s): %v", holder, err)
			}
			if ok {
				mu.Lock()
				won = append(won, holder)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("holders of one lease taken at once = %v, want exactly one", won)
	}
}

func testReconLines(t *testing.T, a, b gw.ReconcileStore, _ gw.Store) {
	ctx := t.Context()
	day := reconT0
	lines := []gw.ReconLine{
		{Vendor: "openai", Day: day, Level: gw.ReconModel, Model: "gpt-x", Ledger: 100, Reported: 90, DriftPPM: 100000,
			Status: gw.ReconDrift, Alert: gw.AlertPriceStale, OurPrice: 5, ImpliedPrice: 6, CheckedAt: day.Add(time.Hour), Note: "n"},
		{Vendor: "openai", Day: day, Level: gw.ReconVendor, Ledger: 100, Reported: 90, DriftPPM: 100000, Status: gw.ReconMatch, CheckedAt: day.Add(time.Hour)},
		{Vendor: "openai", Day: day, Level: gw.ReconTokens, Model: "gpt-x", Class: "input", Ledger: 10, Reported: 10, Status: gw.ReconMatch, CheckedAt: day.Add(time.Hour)},
	}
	if err := a.SaveRecon(ctx, "openai", day, lines); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveRecon(ctx, "anthropic", day.Add(-24*time.Hour), []gw.ReconLine{
		{Vendor: "anthropic", Day: day.Add(-24 * time.Hour), Level: gw.ReconVendor, Status: gw.ReconUnreconcilable, Alert: gw.AlertUnreconcilable, CheckedAt: day},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Recon(ctx, gw.ReconFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("Recon = %d lines, want 4: %+v", len(got), got)
	}
	if got[0].Level != gw.ReconVendor || got[1].Level != gw.ReconModel || got[2].Level != gw.ReconTokens || got[3].Vendor != "anthropic" {
		t.Errorf("order = %v %v %v %v, want the newest day's vendor, model, tokens lines, then the older day", got[0].Level, got[1].Level, got[2].Level, got[3].Vendor)
	}
	m := got[1]
	if m.Vendor != "openai" || !m.Day.Equal(day) || m.Model != "gpt-x" || m.Ledger != 100 || m.Reported != 90 || m.DriftPPM != 100000 ||
		m.Alert != gw.AlertPriceStale || m.OurPrice != 5 || m.ImpliedPrice != 6 || !m.CheckedAt.Equal(day.Add(time.Hour)) || m.Note != "n" || m.Final {
		t.Errorf("model line read back = %+v", m)
	}
	alerts, err := b.Recon(ctx, gw.ReconFilter{AlertsOnly: true, Vendor: "openai"})
	if err != nil || len(alerts) != 1 || alerts[0].Alert != gw.AlertPriceStale {
		t.Errorf("Recon(alerts of openai) = %+v, %v; want the price_table_stale line", alerts, err)
	}
	// A final run replaces the provisional lines of its vendor-day.
	if err := b.SaveRecon(ctx, "openai", day, []gw.ReconLine{{Vendor: "openai", Day: day, Level: gw.ReconVendor, Status: gw.ReconMatch, Final: true, CheckedAt: day.Add(48 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	got, err = a.Recon(ctx, gw.ReconFilter{Vendor: "openai", Since: day, Until: day.Add(24 * time.Hour)})
	if err != nil || len(got) != 1 || !got[0].Final {
		t.Errorf("after the final run = %+v, %v; want its one final line", got, err)
	}
}

func testBalanceReadings(t *testing.T, a, b gw.ReconcileStore, _ gw.Store) {
	ctx := t.Context()
	for i, bal := range []gw.Money{500, 400, 350} {
		if err := a.AddBalanceReading(ctx, gw.BalanceReading{Vendor: "deepseek", At: reconT0.Add(time.Duration(i) * time.Hour), Balance: bal}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.BalanceReadings(ctx, "deepseek", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Balance != 350 || got[1].Balance != 400 || !got[0].At.Equal(reconT0.Add(2*time.Hour)) {
		t.Errorf("BalanceReadings = %+v, want 350 then 400", got)
	}
}

func testAdjustments(t *testing.T, a, b gw.ReconcileStore, s gw.Store) {
	ctx := t.Context()
	r := record("req_gen", "acct_a", 0, reconT0.Add(time.Hour))
	r.Vendor, r.VendorResponseID = "openrouter", "gen-123"
	plain := record("req_plain", "acct_a", 0, reconT0.Add(time.Hour))
	plain.Vendor = "openrouter"
	for _, rec := range []*gw.Record{r, plain} {
		if err := s.Log(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	back, err := s.Record(ctx, "req_gen")
	if err != nil || back.VendorResponseID != "gen-123" {
		t.Fatalf("Record(req_gen) vendor response id = %+v, %v; want gen-123", back, err)
	}
	un, err := a.UncheckedRecords(ctx, "openrouter", reconT0, reconT0.Add(24*time.Hour), 0)
	if err != nil || len(un) != 1 || un[0].RequestID != "req_gen" {
		t.Fatalf("UncheckedRecords = %+v, %v; want req_gen only (the other has no generation id)", un, err)
	}
	adj := gw.Adjustment{RequestID: "req_gen", AccountID: "acct_a", Vendor: "openrouter", Model: "m", GenerationID: "gen-123",
		Ledger: 100, Reported: 150, Charge: 109, Status: gw.AdjustmentPending, CreatedAt: reconT0.Add(2 * time.Hour)}
	if err := a.AddAdjustment(ctx, adj); err != nil {
		t.Fatal(err)
	}
	adj.Reported = 999 // a second check of the same request changes nothing
	if err := b.AddAdjustment(ctx, adj); err != nil {
		t.Fatal(err)
	}
	if un, _ := a.UncheckedRecords(ctx, "openrouter", reconT0, reconT0.Add(24*time.Hour), 0); len(un) != 0 {
		t.Errorf("UncheckedRecords after its check = %+v, want none", un)
	}
	if g, err := b.GenerationSums(ctx, "openrouter", reconT0, reconT0.Add(24*time.Hour)); err != nil ||
		g != (gw.GenerationSum{Checked: 1, Adjustments: 1, Ledger: 100, Reported: 150}) {
		t.Errorf("GenerationSums = %+v, %v; want one checked, one adjustment, 100 vs 150", g, err)
	}
	got, err := b.Adjustments(ctx, gw.AdjustmentPending, 0)
	if err != nil || len(got) != 1 || got[0].Reported != 150 || got[0].GenerationID != "gen-123" || got[0].Charge != 109 {
		t.Fatalf("Adjustments(pending) = %+v, %v", got, err)
	}
	if err := a.DecideAdjustment(ctx, "req_gen", gw.AdjustmentDismissed, "ops", reconT0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := b.DecideAdjustment(ctx, "req_gen", gw.AdjustmentApproved, "ops", reconT0.Add(4*time.Hour)); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("second decision = %v, want ErrNotFound (decided once)", err)
	}
	got, err = a.Adjustments(ctx, "", 0)
	if err != nil || len(got) != 1 || got[0].Status != gw.AdjustmentDismissed || got[0].DecidedBy != "ops" || !got[0].DecidedAt.Equal(reconT0.Add(3*time.Hour)) {
		t.Errorf("Adjustments after the decision = %+v, %v", got, err)
	}
}
