package billing

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// openRouterFixture is a models-endpoint answer in OpenRouter's format.
const openRouterFixture = `{"data":[
 {"id":"meta-llama/llama-3.3-70b-instruct","context_length":131072,
  "pricing":{"prompt":"0.0000001","completion":"0.00000032","request":"0","input_cache_read":"0"},
  "top_provider":{"context_length":131072,"max_completion_tokens":16384}},
 {"id":"anthropic/claude-sonnet-4.5","context_length":1000000,
  "pricing":{"prompt":"0.000003","completion":"0.000015","input_cache_read":"0.0000003","input_cache_write":"0.00000375"},
  "top_provider":{"context_length":1000000,"max_completion_tokens":64000}},
 {"id":"openrouter/auto","context_length":2000000,"pricing":{"prompt":"-1","completion":"-1"},"top_provider":{}}
]}`

func openRouterBiller(t *testing.T) *Biller {
	t.Helper()
	l, err := ratecard.ParseOpenRouter(strings.NewReader(openRouterFixture), time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 2 {
		t.Fatalf("%d models listed, want 2 (the -1 router left out)", l.Len())
	}
	p := &ratecard.OpenRouterPrices{}
	p.Set(l)
	return New(defaultCard(t), Options{OpenRouter: p})
}

// Issue 19.4 and 21.2: OpenRouter answers without a usable cost are
// priced from its own list; holds are sized from the listed price.
func TestOpenRouterListPricing(t *testing.T) {
	b := openRouterBiller(t)
	tests := []struct {
		name   string
		model  string
		u      gw.Usage
		charge gw.Money
		note   string
	}{
		{
			// llama 3.3 70b at $0.10/$0.32 per M: 1,000 x 10 + 2,000 x 32
			// = 74,000 micro-cents; x1.09 = 80,660.
			name: "no usage.cost", model: "meta-llama/llama-3.3-70b-instruct",
			u:      gw.Usage{InputTokens: 1_000, OutputTokens: 2_000, Reported: true},
			charge: 80_660, note: "models list of 2026-11-25",
		},
		{
			// Negative cost: sonnet 4.5 at $3/$15, cache reads $0.30:
			// 100 x 300 + 1,000 x 30 + 500 x 1,500 = 810,000; x1.09 = 882,900.
			name: "negative usage.cost", model: "anthropic/claude-sonnet-4.5",
			u:      gw.Usage{InputTokens: 100, CacheReadTokens: 1_000, OutputTokens: 500, Reported: true, ReportedCost: -5, HasReportedCost: true},
			charge: 882_900, note: "negative usage.cost",
		},
		{
			// A reported cost still wins: $0.0042 = 420,000 micro-cents;
			// x1.09 = 457,800.
			name: "reported cost", model: "anthropic/claude-sonnet-4.5",
			u:      gw.Usage{InputTokens: 100, OutputTokens: 500, Reported: true, ReportedCost: 420_000, HasReportedCost: true},
			charge: 457_800, note: "reported cost",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := b.Price("openrouter", tc.model, tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Charge != tc.charge || !strings.Contains(q.Note, tc.note) {
				t.Errorf("quote %+v, want charge %d and a note with %q", q, tc.charge, tc.note)
			}
		})
	}

	// Hold from the listed price: 90 bytes -> 30 tokens at the dearest
	// prompt rate (cache write $3.75: 375) = 11,250; 2 answers x 4,000 x
	// 1,500 = 12,000,000; x1.09 = 13,092,262.5 -> 13,092,263.
	plan, err := b.Hold(HoldRequest{Vendor: "openrouter", Model: "anthropic/claude-sonnet-4.5", BodyBytes: 90, MaxOutput: 4_000, Choices: 2, Available: -1, CallerLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Amount != 13_092_263 || plan.OutputBound != 8_000 {
		t.Errorf("hold %+v, want 13,092,263 bounding 8,000 output tokens", plan)
	}
	// No limit: the top provider's max completion, 16,384 on llama:
	// 30 x 10 + 16,384 x 32 = 524,588; x1.09 = 571,800.92 -> 571,801.
	plan, err = b.Hold(HoldRequest{Vendor: "openrouter", Model: "meta-llama/llama-3.3-70b-instruct", BodyBytes: 90, Available: -1})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Amount != 571_801 || plan.MaxOutput != 16_384 {
		t.Errorf("hold %+v, want 571,801 for 16,384 tokens", plan)
	}
	// An unlisted model holds the configured amount, unbounded.
	plan, err = b.Hold(HoldRequest{Vendor: "openrouter", Model: "x/unlisted", BodyBytes: 90, Available: -1})
	if err != nil || plan.Amount != DefaultOpenRouterHold || plan.OutputBound != 0 {
		t.Errorf("unlisted hold %+v, %v", plan, err)
	}
}

// Issue 29 item 4: usage.cost is rated once. 0.0000000149 USD is 1.49
// micro-cents: the cost rounds to 1, and the charge is 1.49 x 1.09 =
// 1.6241 -> 2 (before: the rounded 1 x 1.09 = 1.09 -> 1).
func TestOpenRouterCostRatedOnce(t *testing.T) {
	b := openRouterBiller(t)
	for _, c := range []struct {
		exact        string
		cost, charge gw.Money
	}{
		{"149/10000000000", 1, 2},
		// 0.00000046 USD = 46 uc exactly: 50.14 -> 50 either way.
		{"23/50000000", 46, 50},
		// No exact figure kept: the rounded cost, x1.09 once.
		{"", 1, 1},
	} {
		q, err := b.Price(OpenRouter, "meta-llama/llama-3.3-70b-instruct", gw.Usage{Reported: true, ReportedCost: c.cost, HasReportedCost: true, ReportedCostUSD: c.exact})
		if err != nil || q.Cost != c.cost || q.Charge != c.charge {
			t.Errorf("%q: cost %d charge %d (%v), want %d, %d", c.exact, q.Cost, q.Charge, err, c.cost, c.charge)
		}
	}
}
