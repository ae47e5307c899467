package admin_test

import (
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/sqlite"
)

// TestReconciliationOverTheAPI: lines read back in the API's shape,
// filtered to alerts; an adjustment is decided once and the customer's
// charge never moves.
func TestReconciliationOverTheAPI(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: db, Now: func() time.Time { return day.Add(50 * time.Hour) }}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &admin.Client{BaseURL: srv.URL, Token: token}

	if err := db.SaveRecon(ctx, "openai", day, []gw.ReconLine{
		{Vendor: "openai", Day: day, Level: gw.ReconVendor, Ledger: int64(10 * gw.USD), Reported: int64(12 * gw.USD), DriftPPM: -166_666, Status: gw.ReconDrift, Alert: gw.AlertVendorDrift, CheckedAt: day},
		{Vendor: "openai", Day: day, Level: gw.ReconModel, Model: "gpt-x", Ledger: int64(10 * gw.USD), Reported: int64(12 * gw.USD), DriftPPM: -166_666,
			Status: gw.ReconDrift, Alert: gw.AlertPriceStale, OurPrice: 5 * gw.USD, ImpliedPrice: 6 * gw.USD, CheckedAt: day},
		{Vendor: "openai", Day: day, Level: gw.ReconTokens, Model: "gpt-x", Class: "input", Ledger: 1000, Reported: 1000, Status: gw.ReconMatch, CheckedAt: day},
	}); err != nil {
		t.Fatal(err)
	}
	lines, err := c.Reconciliation(ctx, admin.ReconQuery{Since: "2026-06-01", Until: "2026-06-01"})
	if err != nil || len(lines) != 3 {
		t.Fatalf("Reconciliation = %+v, %v; want 3 lines", lines, err)
	}
	m := lines[1]
	if m.Alert != gw.AlertPriceStale || m.Unit != "usd" || m.LedgerUSD != "10.00000000" || m.ReportedUSD != "12.00000000" ||
		m.Drift != "-0.166666" || m.OurPriceUSD != "5.00000000" || m.ImpliedPriceUSD != "6.00000000" || m.Day != "2026-06-01" {
		t.Errorf("model line = %+v", m)
	}
	if tl := lines[2]; tl.Unit != "tokens" || tl.LedgerTokens == nil || *tl.LedgerTokens != 1000 || tl.LedgerUSD != "" {
		t.Errorf("tokens line = %+v", tl)
	}
	alerts, err := c.Reconciliation(ctx, admin.ReconQuery{AlertsOnly: true, Vendor: "openai"})
	if err != nil || len(alerts) != 2 {
		t.Errorf("alerts = %+v, %v; want 2", alerts, err)
	}
	if _, err := c.Reconciliation(ctx, admin.ReconQuery{Since: "June"}); err == nil {
		t.Error("a since that is no day was accepted")
	}
	if other, err := c.Reconciliation(ctx, admin.ReconQuery{Since: "2026-06-02"}); err != nil || len(other) != 0 {
		t.Errorf("lines since the next day = %+v, %v; want none", other, err)
	}

	if err := db.AddAdjustment(ctx, gw.Adjustment{RequestID: "req_1", AccountID: "acct_1", Vendor: "openrouter", Model: "m", GenerationID: "gen-1",
		Ledger: 1000, Reported: 1500, Charge: 1090, Status: gw.AdjustmentPending, CreatedAt: day}); err != nil {
		t.Fatal(err)
	}
	pending, err := c.Adjustments(ctx, gw.AdjustmentPending)
	if err != nil || len(pending) != 1 || pending[0].DiffUSD != "0.00000500" || pending[0].GenerationID != "gen-1" {
		t.Fatalf("pending adjustments = %+v, %v", pending, err)
	}
	a, err := c.DecideAdjustment(ctx, "req_1", gw.AdjustmentApproved)
	if err != nil || a.Status != gw.AdjustmentApproved || a.DecidedAt == nil || a.ChargeUSD != "0.00001090" {
		t.Fatalf("approve = %+v, %v", a, err)
	}
	_, err = c.DecideAdjustment(ctx, "req_1", gw.AdjustmentDismissed)
	var ge *gw.Error
	if !errors.As(err, &ge) || ge.Code != gw.CodeNotFound {
		t.Errorf("second decision = %v, want not found (decided once)", err)
	}
}
