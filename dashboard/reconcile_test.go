package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/browsertest"
	"github.com/gwlabs/gateway/sqlite"
)

// reconFixture is a dashboard over an SQLite store holding two weeks of
// reconciliation: openai matching but for a price change on one day,
// anthropic drifting a little, deepseek's balance, groq unreconcilable,
// and one OpenRouter adjustment to review.
func reconFixture(t *testing.T) (*Dashboard, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	today := time.Date(testNow.Year(), testNow.Month(), testNow.Day(), 0, 0, 0, 0, time.UTC)
	for i := range reconDays {
		day := today.Add(-time.Duration(reconDays-1-i) * 24 * time.Hour)
		final := i < reconDays-3
		at := day.Add(26 * time.Hour)
		led := int64(40*gw.USD) + int64(i)*int64(3*gw.USD)
		oa := []gw.ReconLine{{Vendor: "openai", Day: day, Level: gw.ReconVendor, Ledger: led, Reported: led, Status: gw.ReconMatch, Final: final, CheckedAt: at},
			{Vendor: "openai", Day: day, Level: gw.ReconModel, Model: "gpt-4o", Ledger: led, Reported: led, Status: gw.ReconMatch, Final: final, CheckedAt: at},
			{Vendor: "openai", Day: day, Level: gw.ReconTokens, Model: "gpt-4o", Class: "input", Ledger: 1_200_000, Reported: 1_200_000, Status: gw.ReconMatch, Final: final, CheckedAt: at}}
		if i == 9 { // the vendor raised gpt-4o's price that day
			rep := led * 112 / 100
			for k := range oa[:2] {
				oa[k].Reported, oa[k].DriftPPM, oa[k].Status = rep, (led-rep)*1_000_000/rep, gw.ReconDrift
			}
			oa[0].Alert = gw.AlertVendorDrift
			oa[1].Alert, oa[1].OurPrice, oa[1].ImpliedPrice = gw.AlertPriceStale, 250*gw.Cent, 280*gw.Cent
		}
		an := led / 2
		anRep := an + int64(i%4-1)*int64(20*gw.Cent)
		ds := int64(5 * gw.USD)
		for _, save := range []struct {
			vendor string
			lines  []gw.ReconLine
		}{
			{"openai", oa},
			{"anthropic", []gw.ReconLine{{Vendor: "anthropic", Day: day, Level: gw.ReconVendor, Ledger: an, Reported: anRep, DriftPPM: (an - anRep) * 1_000_000 / max(an, anRep), Status: gw.ReconMatch, Final: final, CheckedAt: at}}},
			{"deepseek", []gw.ReconLine{{Vendor: "deepseek", Day: day, Level: gw.ReconBalance, Ledger: ds, Reported: ds + int64(i%3)*int64(2*gw.Cent), DriftPPM: -int64(i%3) * 4000, Status: gw.ReconMatch, Final: final, CheckedAt: at}}},
			{"groq", []gw.ReconLine{{Vendor: "groq", Day: day, Level: gw.ReconVendor, Ledger: int64(2 * gw.USD), Status: gw.ReconUnreconcilable, Alert: gw.AlertUnreconcilable, Final: final, CheckedAt: at, Note: "the vendor publishes no report to reconcile against"}}},
		} {
			if err := db.SaveRecon(t.Context(), save.vendor, day, save.lines); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.AddAdjustment(t.Context(), gw.Adjustment{RequestID: "req_or_0042", AccountID: "acc_alpha", Vendor: "openrouter", Model: "meta-llama/llama-3.3-70b",
		GenerationID: "gen-1764412345-abc", Ledger: 41_200, Reported: 52_750, Charge: 44_908, Status: gw.AdjustmentPending, CreatedAt: today.Add(-20 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Store: db, AdminToken: adminToken, Admin: &admin.Local{Store: db, Now: func() time.Time { return testNow }}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return d, db
}

// TestReconciliationPageIsTheOperators: the administrator's page shows
// the alerts with their figures, the unreconcilable vendor and the
// adjustment to review.
func TestReconciliationPageIsTheOperators(t *testing.T) {
	d, _ := reconFixture(t)
	fx := &fixture{t: t, d: d, now: testNow}
	page := fx.page("/dashboard/reconciliation", fx.session(adminToken))
	for _, want := range []string{"price_table_stale", "our price $2.50000000/Mtok, implied $2.80000000/Mtok", "unreconcilable", "req_or_0042", "$0.00011550"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if err := checkHTML(page); err != nil {
		t.Error(err)
	}
}

// TestBrowserReconciliation drives headless Chromium to the operator's
// reconciliation page: the drift chart draws one line per reconciled
// vendor (not the unreconcilable one), the alerting rows stand out, the
// tables fit 1280 px, and approving the adjustment takes it off the
// list. With GATEWAY_DASHBOARD_SCREENSHOTS=<dir> it saves
// reconciliation.png there.
func TestBrowserReconciliation(t *testing.T) {
	d, db := reconFixture(t)
	mux := http.NewServeMux()
	mux.Handle("/dashboard", d)
	mux.Handle("/dashboard/", d)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	parent, stop := context.WithTimeout(t.Context(), 2*time.Minute)
	defer stop()
	ctx := browsertest.Start(t, parent)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), adminToken),
		chromedp.Click(chromedp.CSS(`.signin-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("nav.tabs")),
		chromedp.Click(chromedp.CSS(`nav.tabs a[href="/dashboard/reconciliation"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.recon")),
	); err != nil {
		t.Fatalf("open the reconciliation page: %v", err)
	}
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#recon-drift g.drift")].filter(g => g.querySelector("polyline").getBBox().width > 500).map(g => g.dataset.vendor)`))
	if err != nil || fmt.Sprint(lines) != "[anthropic deepseek openai]" {
		t.Errorf("drift lines drawn across the chart = %v (%v), want anthropic, deepseek, openai", lines, err)
	}
	alerting, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.recon tr.alerting").length`))
	if err != nil || alerting != reconDays+2 {
		t.Errorf("alerting rows = %d (%v), want %d (groq every day, openai's vendor and model on the price change)", alerting, err, reconDays+2)
	}
	fits(t, ctx, "reconciliation")
	if dir := os.Getenv("GATEWAY_DASHBOARD_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "reconciliation.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`table.adjustments form[action$="/approve"] button`)),
		chromedp.WaitNotPresent(chromedp.CSS("table.adjustments")),
		chromedp.WaitVisible(chromedp.CSS("table.recon")),
	); err != nil {
		t.Fatalf("approve the adjustment: %v", err)
	}
	left, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.adjustments tbody tr").length`))
	if err != nil || left != 0 {
		t.Errorf("adjustments left after approving = %d (%v), want 0", left, err)
	}
	approved, err := db.Adjustments(t.Context(), gw.AdjustmentApproved, 0)
	if err != nil || len(approved) != 1 || approved[0].Charge != 44_908 {
		t.Errorf("approved = %+v, %v; want req_or_0042, its charge unchanged", approved, err)
	}
}
