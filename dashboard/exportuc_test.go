package dashboard

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Issue 46 item 6 (before -> after): the export printed a reported cost
// of 1.49 uc as 0.00000001 beside a 2 uc charge, so the charge could not
// be checked from it. Now the *_uc columns carry every money figure in
// micro-cents, the reported cost exactly.
func TestExportCSVMicroCents(t *testing.T) {
	fx := newFixture(t)
	fx.store.add(gw.Record{
		RequestID: "req_alpha_uc", AccountID: "acc_alpha", KeyID: "key_alpha", Endpoint: gw.ShapeC,
		Vendor: "openrouter", Model: "meta-llama/llama-3.3-70b-instruct", Status: 200, CreatedAt: testNow.Add(-time.Second),
		Usage: gw.Usage{InputTokens: 1, OutputTokens: 1, Reported: true, ReportedCost: 1, HasReportedCost: true},
		Cost:  1, Charge: 2, Guard: "pass", Note: "openrouter reported cost; reported_cost_uc=1.49",
	})
	rows, err := csv.NewReader(strings.NewReader(fx.get("/dashboard/logs.csv?account=acc_alpha", fx.session(adminToken)).Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, x := range rows[1:] {
		if x[1] == "req_alpha_uc" {
			row = x
		}
	}
	head := rows[0]
	for col, want := range map[string]string{"charge_uc": "2", "vendor_cost_uc": "1", "reported_cost_uc": "1.49", "disputed_cost_uc": "0", "reported_cost_usd": "0.00000001"} {
		if i := slices.Index(head, col); i < 0 || i >= len(row) || row[i] != want {
			t.Errorf("column %q at %d of %v; want %q", col, i, row, want)
		}
	}
}
