package dashboard

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The CSV export carries every money column of a record: the vendor
// cost, the directive's share, the operator's loss, the disputed cost
// (migration 0019) and the vendor's reported cost for the administrator;
// whether the usage was the vendor's for everyone. A customer's export
// has none of the cost columns.
func TestExportCSVRecordColumns(t *testing.T) {
	fx := newFixture(t)
	r := gw.Record{
		RequestID: "req_alpha_columns", AccountID: "acc_alpha", KeyID: "key_alpha", Endpoint: gw.ShapeC,
		Vendor: "openrouter", Model: "anthropic/claude-sonnet-4.5", Status: 200, CreatedAt: testNow.Add(-time.Second),
		Usage: gw.Usage{InputTokens: 4300, OptimizerTokens: 51, OutputTokens: 5, Reported: true, ReportedCost: 12_600, HasReportedCost: true},
		Cost:  12_600, Charge: 8_175, DirectiveShare: 5_559, Loss: 1_000, DisputedCost: 7_479_543,
		Guard: "pass", Note: "usage_disputed",
	}
	fx.store.add(r)
	read := func(c string) (head, row []string) {
		t.Helper()
		rows, err := csv.NewReader(strings.NewReader(fx.get("/dashboard/logs.csv?account=acc_alpha", fx.session(c)).Body.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range rows[1:] {
			if x[1] == "req_alpha_columns" {
				return rows[0], x
			}
		}
		t.Fatalf("req_alpha_columns not exported: %v", rows)
		return nil, nil
	}
	head, row := read(adminToken)
	for col, want := range map[string]string{
		"charge_usd":          "0.00008175",
		"vendor_cost_usd":     "0.00012600",
		"directive_share_usd": "0.00005559",
		"loss_usd":            "0.00001000",
		"disputed_cost_usd":   "0.07479543",
		"reported_cost_usd":   "0.00012600",
		"usage_reported":      "true",
		"optimizer_tokens":    "51",
	} {
		i := slices.Index(head, col)
		if i < 0 || i >= len(row) || row[i] != want {
			t.Errorf("admin export: column %q at %d of %v; want %q", col, i, row, want)
		}
	}
	head, row = read(alphaKey)
	for _, col := range []string{"vendor_cost_usd", "directive_share_usd", "loss_usd", "disputed_cost_usd", "reported_cost_usd"} {
		if slices.Contains(head, col) {
			t.Errorf("a customer's export has %s", col)
		}
	}
	if i := slices.Index(head, "usage_reported"); i < 0 || row[i] != "true" || len(row) != len(head) {
		t.Errorf("customer export %v / %v", head, row)
	}
	if strings.Contains(strings.Join(row, ","), "0.0747") {
		t.Error("a customer's export shows the disputed cost")
	}
}
