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

// OpenRouter's reported cost covers the directive the gateway added: its
// tokens come off at the model's listed prompt price before x 1.09,
// never below the caller's own tokens at the listed prices, never above
// the reported cost, never below zero, summed exactly and rounded once.
// sonnet 4.5 is listed at 300 uc a prompt token and 1,500 an output
// token; llama 3.3 70b at 10 and 32.
func TestOpenRouterDirectiveNotCharged(t *testing.T) {
	b := openRouterBiller(t)
	sonnet, llama := "anthropic/claude-sonnet-4.5", "meta-llama/llama-3.3-70b-instruct"
	for _, c := range []struct {
		name                string
		model               string
		u                   gw.Usage
		cost, charge, share gw.Money
	}{
		{
			// 1,000 prompt tokens (120 the directive's), 200 output,
			// $0.0063 = 630,000 uc reported: 630,000 - 120 x 300 =
			// 594,000 (own at list: 880 x 300 + 200 x 1,500 = 564,000,
			// below it); x 1.09 = 647,460; 630,000 x 1.09 = 686,700, so
			// the share is 39,240.
			name: "reported", model: sonnet,
			u:    gw.Usage{InputTokens: 1_000, OutputTokens: 200, OptimizerTokens: 120, Reported: true, ReportedCost: 630_000, HasReportedCost: true, ReportedCostUSD: "0.0063"},
			cost: 630_000, charge: 647_460, share: 39_240,
		},
		{
			// $0.0058 = 580,000 reported: 580,000 - 36,000 = 544,000 is
			// below the caller's own 564,000: 564,000 x 1.09 = 614,760;
			// share 632,200 - 614,760 = 17,440.
			name: "floor: the caller's own tokens", model: sonnet,
			u:    gw.Usage{InputTokens: 1_000, OutputTokens: 200, OptimizerTokens: 120, Reported: true, ReportedCost: 580_000, HasReportedCost: true, ReportedCostUSD: "0.0058"},
			cost: 580_000, charge: 614_760, share: 17_440,
		},
		{
			// $0.0005 = 50,000 reported, below even the caller's own
			// tokens at list: never more than reported, 54,500, share 0.
			name: "ceiling: the reported cost", model: sonnet,
			u:    gw.Usage{InputTokens: 1_000, OutputTokens: 200, OptimizerTokens: 120, Reported: true, ReportedCost: 50_000, HasReportedCost: true, ReportedCostUSD: "0.0005"},
			cost: 50_000, charge: 54_500, share: 0,
		},
		{
			// The whole prompt the directive's, no output: 10,000 -
			// 300,000 < 0 -> 0; the share is the whole 10,900.
			name: "never below zero", model: sonnet,
			u:    gw.Usage{InputTokens: 1_000, OptimizerTokens: 1_000, Reported: true, ReportedCost: 10_000, HasReportedCost: true, ReportedCostUSD: "0.0001"},
			cost: 10_000, charge: 0, share: 10_900,
		},
		{
			// Rounded once: $0.000001375 = 137.5 uc (cost 138);
			// 137.5 - 3 x 10 = 107.5 x 1.09 = 117.175 -> 117 (rounding
			// 107.5 first: 108 x 1.09 = 117.72 -> 118); 137.5 x 1.09 =
			// 149.875 -> 150, share 33.
			name: "exact decimal", model: llama,
			u:    gw.Usage{InputTokens: 10, OutputTokens: 1, OptimizerTokens: 3, Reported: true, ReportedCost: 138, HasReportedCost: true, ReportedCostUSD: "0.000001375"},
			cost: 138, charge: 117, share: 33,
		},
		{
			// No usage.cost: the list prices every token (cost
			// 1,000 x 10 + 2,000 x 32 = 74,000) and charges the caller's
			// own (900 x 10 + 64,000) x 1.09 = 79,570; 80,660 - 79,570 =
			// 1,090.
			name: "from the list", model: llama,
			u:    gw.Usage{InputTokens: 1_000, OutputTokens: 2_000, OptimizerTokens: 100, Reported: true},
			cost: 74_000, charge: 79_570, share: 1_090,
		},
		{
			// No directive: as before, 630,000 x 1.09.
			name: "no directive", model: sonnet,
			u:    gw.Usage{InputTokens: 1_000, OutputTokens: 200, Reported: true, ReportedCost: 630_000, HasReportedCost: true, ReportedCostUSD: "0.0063"},
			cost: 630_000, charge: 686_700, share: 0,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := b.Price(OpenRouter, c.model, c.u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Cost != c.cost || q.Charge != c.charge || q.DirectiveShare != c.share {
				t.Errorf("cost %d charge %d share %d; want %d, %d, %d", q.Cost, q.Charge, q.DirectiveShare, c.cost, c.charge, c.share)
			}
			if full := gw.Charge(q.Cost); c.u.ReportedCostUSD == "0.0063" && q.Charge+q.DirectiveShare != full {
				t.Errorf("charge %d + share %d != cost x 1.09 = %d", q.Charge, q.DirectiveShare, full)
			}
		})
	}
	// A model that left the list while its request ran: the directive
	// cannot be priced, the reported cost is charged and noted.
	q, err := b.Price(OpenRouter, "x/unlisted", gw.Usage{InputTokens: 100, OptimizerTokens: 10, Reported: true, ReportedCost: 1_000, HasReportedCost: true, ReportedCostUSD: "0.00001"})
	if err != nil || q.Charge != 1_090 || !strings.Contains(q.Note, "directive_unpriced") {
		t.Errorf("unlisted: %+v (%v); want 1,090 noted directive_unpriced", q, err)
	}
}
