package reconcile

import (
	"fmt"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

var day0 = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// usd is an amount given in ten-thousandths of a dollar (97_9999 is
// $97.9999) as Money.
func usd(tenThousandths int64) gw.Money { return gw.Money(tenThousandths) * gw.USD / 10_000 }

// alerts lists the lines that alert as "level/model/class:alert".
func alerts(lines []gw.ReconLine) []string {
	var out []string
	for _, l := range lines {
		if l.Alert != "" {
			out = append(out, fmt.Sprintf("%s/%s/%s:%s", l.Level, l.Model, l.Class, l.Alert))
		}
	}
	return out
}

func sum(model string, cost gw.Money, in, out int64) gw.LedgerSum {
	return gw.LedgerSum{Vendor: "openai", Model: model, Requests: 10, Cost: cost,
		Usage: gw.Usage{InputTokens: in, OutputTokens: out}}
}

func costRow(model string, cost gw.Money) Row { return Row{Model: model, Cost: cost, HasCost: true} }

func tokRow(model string, cost gw.Money, in, out int64) Row {
	return Row{Model: model, Cost: cost, HasCost: true, Tokens: map[string]int64{TokensInput: in, TokensOutput: out}}
}

func TestCompareAlerts(t *testing.T) {
	tests := []struct {
		name   string
		ledger []gw.LedgerSum
		rows   []Row
		want   []string
	}{
		{"matching: no alert", []gw.LedgerSum{sum("m", usd(100_0000), 1000, 100)}, []Row{tokRow("m", usd(100_0000), 1000, 100)}, nil},

		// Vendor-day: beyond 2% and $1 (the report has no tokens, so the
		// rate card is not in question).
		{"vendor-day exactly 2%", []gw.LedgerSum{sum("m", usd(100_0000), 0, 0)}, []Row{costRow("m", usd(98_0000))}, nil},
		{"vendor-day just beyond 2%", []gw.LedgerSum{sum("m", usd(100_0000), 0, 0)}, []Row{costRow("m", usd(97_9999))}, []string{"vendor//:vendor_day_drift"}},
		{"vendor-day 10% but exactly $1", []gw.LedgerSum{sum("m", usd(10_0000), 0, 0)}, []Row{costRow("m", usd(9_0000)), costRow("", 0)}, []string{"model/m/:model_day_drift"}},
		{"vendor-day 10% and just beyond $1", []gw.LedgerSum{sum("m", usd(10_0000), 0, 0)}, []Row{costRow("m", usd(8_9999))}, []string{"vendor//:vendor_day_drift", "model/m/:model_day_drift"}},
		{"vendor-day drift from a line item only", []gw.LedgerSum{sum("m", usd(100_0000), 0, 0)}, []Row{costRow("m", usd(100_0000)), {LineItem: "web search", Cost: usd(5_0000), HasCost: true}}, []string{"vendor//:vendor_day_drift"}},

		// Model-day: beyond 5% and $0.50.
		{"model-day exactly 5%", []gw.LedgerSum{sum("m", usd(10_0000), 0, 0)}, []Row{costRow("m", usd(9_5000))}, nil},
		{"model-day just beyond 5%", []gw.LedgerSum{sum("m", usd(10_0000), 0, 0)}, []Row{costRow("m", usd(9_4999))}, []string{"model/m/:model_day_drift"}},
		{"model-day 50% but exactly $0.50", []gw.LedgerSum{sum("m", usd(1_0000), 0, 0)}, []Row{costRow("m", usd(5000))}, nil},
		{"model-day 50% and just beyond $0.50", []gw.LedgerSum{sum("m", usd(1_0000), 0, 0)}, []Row{costRow("m", usd(4999))}, []string{"model/m/:model_day_drift"}},
		{"model the vendor billed and the ledger never saw", []gw.LedgerSum{sum("m", usd(1_0000), 0, 0)}, []Row{costRow("m", usd(1_0000)), costRow("ghost", usd(2_0000))}, []string{"vendor//:vendor_day_drift", "model/ghost/:model_day_drift"}},

		// Token classes: beyond 0.5%.
		{"tokens exactly 0.5% apart", []gw.LedgerSum{sum("m", usd(1_0000), 1000, 100)}, []Row{tokRow("m", usd(1_0000), 995, 100)}, nil},
		{"tokens just beyond 0.5%", []gw.LedgerSum{sum("m", usd(1_0000), 1000, 100)}, []Row{tokRow("m", usd(1_0000), 994, 100)}, []string{"tokens/m/input:token_drift"}},
		{"tokens beyond, the vendor counting more", []gw.LedgerSum{sum("m", usd(1_0000), 1000, 100)}, []Row{tokRow("m", usd(1_0000), 1000, 101)}, []string{"tokens/m/output:token_drift"}},

		// Tokens matching, cost beyond 2%: the rate card is stale.
		{"tokens match, cost exactly 2% apart", []gw.LedgerSum{sum("m", usd(10_0000), 1000, 100)}, []Row{tokRow("m", usd(9_8000), 1000, 100)}, nil},
		{"tokens match, cost just beyond 2%", []gw.LedgerSum{sum("m", usd(10_0000), 1000, 100)}, []Row{tokRow("m", usd(9_7999), 1000, 100)}, []string{"model/m/:price_table_stale"}},
		{"tokens match, cost far apart: stale, not model drift", []gw.LedgerSum{sum("m", usd(10_0000), 1000, 100)}, []Row{tokRow("m", usd(20_0000), 1000, 100)}, []string{"vendor//:vendor_day_drift", "model/m/:price_table_stale"}},
		{"tokens and cost both apart: model drift", []gw.LedgerSum{sum("m", usd(10_0000), 1000, 100)}, []Row{tokRow("m", usd(5_0000), 500, 50)}, []string{"vendor//:vendor_day_drift", "model/m/:model_day_drift", "tokens/m/input:token_drift", "tokens/m/output:token_drift"}},
		{"a model billed without token rows: cost compared, no token class", []gw.LedgerSum{sum("m", usd(1_0000), 1000, 100), sum("emb", usd(1000), 5000, 0)}, []Row{tokRow("m", usd(1_0000), 1000, 100), costRow("emb", usd(1000))}, nil},
		{"an empty report: zero billed, the tokens missing", []gw.LedgerSum{sum("m", usd(1000), 1000, 100)}, nil, []string{"tokens/m/input:token_drift", "tokens/m/output:token_drift"}},
		{"tokens match, cost apart by rounding only", []gw.LedgerSum{sum("m", 100, 1000, 100)}, []Row{tokRow("m", 95, 1000, 100)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := alerts(Compare(Report{Vendor: "openai", Day: day0, Rows: tt.rows, Complete: true}, tt.ledger, false, day0))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("alerts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompareFigures(t *testing.T) {
	ledger := []gw.LedgerSum{{Vendor: "openai", Model: "m", Requests: 3, Cost: usd(10_0000),
		Usage: gw.Usage{InputTokens: 600_000, CacheReadTokens: 100_000, CacheWrite5mTokens: 50_000, CacheWrite1hTokens: 50_000, OutputTokens: 200_000, OptimizerTokens: 1000}}}
	rows := []Row{
		{Model: "m", VendorKey: "key_a", Cost: usd(6_0000), HasCost: true, Tokens: map[string]int64{TokensInput: 300_000, TokensCacheRead: 50_000, TokensCacheWrite: 50_000, TokensOutput: 100_000}},
		{Model: "m", VendorKey: "key_a", Cost: usd(6_0000), HasCost: true, Tokens: map[string]int64{TokensInput: 300_000, TokensCacheRead: 50_000, TokensCacheWrite: 50_000, TokensOutput: 100_000}},
	}
	lines := Compare(Report{Vendor: "openai", Day: day0, Rows: rows, Complete: true}, ledger, true, day0.Add(48*time.Hour))
	if len(lines) != 6 {
		t.Fatalf("lines = %+v, want vendor, model and four token classes", lines)
	}
	m := lines[1]
	if m.Level != gw.ReconModel || m.Alert != gw.AlertPriceStale || m.Ledger != int64(usd(10_0000)) || m.Reported != int64(usd(12_0000)) || m.VendorKey != "key_a" || !m.Final {
		t.Errorf("model line = %+v", m)
	}
	// drift = (10 - 12) / 12 = -16.6666%
	if m.DriftPPM != -166_666 {
		t.Errorf("drift = %d ppm, want -166666", m.DriftPPM)
	}
	// A million tokens in all: $10 ours, $12 implied, per million.
	if m.OurPrice != usd(10_0000) || m.ImpliedPrice != usd(12_0000) {
		t.Errorf("prices = ours %d implied %d, want $10 and $12 per million", m.OurPrice, m.ImpliedPrice)
	}
	for _, l := range lines[2:] {
		if l.Status != gw.ReconMatch || l.Ledger != l.Reported {
			t.Errorf("token line %s = %d vs %d (%s), want matching: the cache writes of both TTLs add up", l.Class, l.Ledger, l.Reported, l.Status)
		}
	}
}

func TestCompareTokensOnlyReportNeverMatchesCost(t *testing.T) {
	rows := []Row{{Model: "m", Tokens: map[string]int64{TokensInput: 1000, TokensOutput: 100}}}
	lines := Compare(Report{Vendor: "openai", Day: day0, Rows: rows, Complete: true}, []gw.LedgerSum{sum("m", usd(5_0000), 1000, 100)}, false, day0)
	if lines[0].Status != gw.ReconUnreconcilable || lines[1].Status != gw.ReconUnreconcilable {
		t.Errorf("cost lines without a reported cost = %s, %s; want unreconcilable", lines[0].Status, lines[1].Status)
	}
}

func TestUnreconcilable(t *testing.T) {
	l := Unreconcilable("groq", day0, []gw.LedgerSum{{Vendor: "groq", Model: "x", Requests: 2, Cost: 500}}, "no report", false, day0)
	if l.Status != gw.ReconUnreconcilable || l.Alert != gw.AlertUnreconcilable || l.Ledger != 500 || l.Reported != 0 {
		t.Errorf("with traffic = %+v, want unreconcilable with its alert and the ledger's cost", l)
	}
	l = Unreconcilable("groq", day0, nil, "no report", false, day0)
	if l.Status != gw.ReconUnreconcilable || l.Alert != "" {
		t.Errorf("without traffic = %+v, want unreconcilable, no alert", l)
	}
}

func TestCompareBalance(t *testing.T) {
	rd := func(h int, bal gw.Money) gw.BalanceReading {
		return gw.BalanceReading{Vendor: "deepseek", At: day0.Add(time.Duration(h) * time.Hour), Balance: bal}
	}
	tests := []struct {
		name   string
		spans  []BalanceSpan
		status string
		alert  string
		ledger int64
		spent  int64
	}{
		{"fell by what the ledger spent", []BalanceSpan{{rd(0, usd(100_0000)), rd(1, usd(90_0000)), usd(10_0000)}}, gw.ReconMatch, "", int64(usd(10_0000)), int64(usd(10_0000))},
		{"exactly 2% apart", []BalanceSpan{{rd(0, usd(200_0000)), rd(1, usd(100_0000)), usd(98_0000)}}, gw.ReconMatch, "", int64(usd(98_0000)), int64(usd(100_0000))},
		{"just beyond 2% and $1", []BalanceSpan{{rd(0, usd(200_0000)), rd(1, usd(100_0000)), usd(97_9999)}}, gw.ReconDrift, gw.AlertBalanceDrift, int64(usd(97_9999)), int64(usd(100_0000))},
		{"beyond 2% but exactly $1", []BalanceSpan{{rd(0, usd(20_0000)), rd(1, usd(10_0000)), usd(9_0000)}}, gw.ReconMatch, "", int64(usd(9_0000)), int64(usd(10_0000))},
		{"two spans summed, a top-up between left out", []BalanceSpan{
			{rd(0, usd(100_0000)), rd(1, usd(95_0000)), usd(5_0000)},
			{rd(1, usd(95_0000)), rd(2, usd(195_0000)), usd(1_0000)},
			{rd(2, usd(195_0000)), rd(3, usd(190_0000)), usd(5_0000)},
		}, gw.ReconMatch, "", int64(usd(10_0000)), int64(usd(10_0000))},
		{"no span yet", nil, gw.ReconUnreconcilable, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := CompareBalance("deepseek", day0, tt.spans, false, day0)
			if l.Status != tt.status || l.Alert != tt.alert || l.Ledger != tt.ledger || l.Reported != tt.spent || l.Level != gw.ReconBalance {
				t.Errorf("line = %+v, want %s %q ledger %d spent %d", l, tt.status, tt.alert, tt.ledger, tt.spent)
			}
		})
	}
}

func TestDriftPPM(t *testing.T) {
	for _, tt := range []struct{ l, v, want int64 }{
		{0, 0, 0}, {100, 100, 0}, {100, 0, 1_000_000}, {0, 100, -1_000_000}, {98, 100, -20_000},
		{1 << 62, 1<<62 - 1, 0}, // no overflow on the largest amounts
	} {
		if got := DriftPPM(tt.l, tt.v); got != tt.want {
			t.Errorf("DriftPPM(%d, %d) = %d, want %d", tt.l, tt.v, got, tt.want)
		}
	}
}
