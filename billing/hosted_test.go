package billing

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Issue 29 items 4 and 6 (before -> after): units a vendor bills beyond
// tokens, priced from the embedded card, each figure worked by hand in
// micro-cents (uc; $1 = 1e8 uc, $X per million tokens = 100X uc per
// token). Before, each request was refused with 400, or, let through by
// the operator, charged for its tokens only (the "before" charge) while
// the operator paid the rest.
func TestHostedUnitsPriced(t *testing.T) {
	b := New(defaultCard(t), Options{})
	tests := []struct {
		name, vendor, model string
		u                   gw.Usage
		cost, charge        gw.Money
		before              gw.Money // the tokens-only charge
		note                string
	}{
		{
			// 1,000 in x 400 + 500 out x 2,000 = 1,400,000 uc of tokens;
			// 3 searches x $10/1,000 = $0.03 = 3,000,000 uc. Cost
			// 4,400,000; x1.09 = 4,796,000.
			name: "anthropic web search 3 calls", vendor: "anthropic", model: "claude-opus-5-5",
			u:    gw.Usage{InputTokens: 1000, OutputTokens: 500, Hosted: gw.Hosted{WebSearches: 3}, Reported: true},
			cost: 4_400_000, charge: 4_796_000, before: 1_526_000, note: "3 web searches",
		},
		{
			// Priority x2 on every rate: (1,000 x 200 + 2,000 cached x 20
			// + 300 x 1,000) x 2 = 540,000 x 2 = 1,080,000; x1.09 =
			// 1,177,200.
			name: "openai priority tier", vendor: "openai", model: "gpt-6-sol",
			u:    gw.Usage{InputTokens: 1000, CacheReadTokens: 2000, OutputTokens: 300, Hosted: gw.Hosted{ServiceTier: "priority"}, Reported: true},
			cost: 1_080_000, charge: 1_177_200, before: 588_600, note: "service tier priority x2",
		},
		{
			// Flex x1/2: (1,001 x 10 + 7 cached x 1 + 333 x 50) / 2 =
			// 26,667/2 = 13,333.5 -> 13,334 (half up, once); charge
			// 13,333.5 x 1.09 = 14,533.515 -> 14,534 from the exact sum.
			name: "openai flex tier, a half micro-cent", vendor: "openai", model: "gpt-6-luna",
			u:    gw.Usage{InputTokens: 1001, CacheReadTokens: 7, OutputTokens: 333, Hosted: gw.Hosted{ServiceTier: "flex"}, Reported: true},
			cost: 13_334, charge: 14_534, before: 29_067, note: "service tier flex x1/2",
		},
		{
			// Fast mode x2: (2,000 x 500 + 100 x 2,500) x 2 = 2,500,000;
			// x1.09 = 2,725,000.
			name: "anthropic fast mode", vendor: "anthropic", model: "claude-opus-5",
			u:    gw.Usage{InputTokens: 2000, OutputTokens: 100, Hosted: gw.Hosted{Fast: true}, Reported: true},
			cost: 2_500_000, charge: 2_725_000, before: 1_362_500, note: "fast mode x2",
		},
		{
			// Gemini 3: 400 x 50 + 100 x 300 = 50,000; 4 queries x
			// $14/1,000 = 5,600,000. 5,650,000; x1.09 = 6,158,500.
			name: "gemini 3 grounding per query", vendor: "google", model: "gemini-3-flash",
			u:    gw.Usage{InputTokens: 400, OutputTokens: 100, Hosted: gw.Hosted{GroundingQueries: 4}, Reported: true},
			cost: 5_650_000, charge: 6_158_500, before: 54_500, note: "4 grounding queries",
		},
		{
			// Gemini 2.5: once per grounded request whatever the queries:
			// 1,000 x 30 + 200 x 250 = 80,000 + $0.035 = 3,580,000;
			// x1.09 = 3,902,200.
			name: "gemini 2.5 grounding per request", vendor: "google", model: "gemini-2.5-flash",
			u:    gw.Usage{InputTokens: 1000, OutputTokens: 200, Hosted: gw.Hosted{GroundingQueries: 5}, Reported: true},
			cost: 3_580_000, charge: 3_902_200, before: 87_200, note: "(billed per request)",
		},
		{
			// Code execution, no duration reported: the 5-minute minimum
			// at $0.05/hour = $1/240 = 416,666 2/3 uc; tokens 100 x 100 +
			// 50 x 500 = 35,000. 451,666 2/3 -> 451,667; charge
			// 492,316 2/3 -> 492,317.
			name: "anthropic code execution container", vendor: "anthropic", model: "claude-haiku-4-5",
			u:    gw.Usage{InputTokens: 100, OutputTokens: 50, Hosted: gw.Hosted{CodeContainers: 1}, Reported: true},
			cost: 451_667, charge: 492_317, before: 38_150, note: "code execution 300 s",
		},
		{
			// Web fetch: tokens only ($0 a call), named in the note.
			name: "anthropic web fetch is tokens only", vendor: "anthropic", model: "claude-haiku-4-5",
			u:    gw.Usage{InputTokens: 100, OutputTokens: 50, Hosted: gw.Hosted{WebFetches: 2}, Reported: true},
			cost: 35_000, charge: 38_150, before: 38_150, note: "2 web fetches",
		},
		{
			// Stacked: priority x2 and 2 searches on gpt-6-sol: 1,000 x
			// 200 x 2 = 400,000 + 2,000,000 = 2,400,000; x1.09 =
			// 2,616,000.
			name: "tier and searches together", vendor: "openai", model: "gpt-6-sol",
			u:    gw.Usage{InputTokens: 1000, Hosted: gw.Hosted{ServiceTier: "priority", WebSearches: 2}, Reported: true},
			cost: 2_400_000, charge: 2_616_000, before: 218_000, note: "2 web searches",
		},
		{
			// A unit the card cannot price for the model (the operator
			// let it through): tokens only, the calls the operator's.
			name: "unpriced unit is the operator's", vendor: "anthropic", model: "claude-opus-5",
			u:    gw.Usage{InputTokens: 1000, Hosted: gw.Hosted{WebFetches: 4}, Reported: true},
			cost: 500_000, charge: 545_000, before: 545_000, note: "4 web fetches: not on the card, the operator's cost",
		},
		{
			// A tier the card has no multiplier for: the standard price.
			name: "tier without a multiplier", vendor: "anthropic", model: "claude-haiku-4-5",
			u:    gw.Usage{InputTokens: 100, Hosted: gw.Hosted{ServiceTier: "priority"}, Reported: true},
			cost: 10_000, charge: 10_900, before: 10_900, note: "at the standard price",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := b.Price(tt.vendor, tt.model, tt.u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Cost != tt.cost || q.Charge != tt.charge || !strings.Contains(q.Note, tt.note) {
				t.Errorf("cost %d charge %d note %q, want %d, %d, %q", q.Cost, q.Charge, q.Note, tt.cost, tt.charge, tt.note)
			}
			plain := tt.u
			plain.Hosted = gw.Hosted{}
			if p, _ := b.Price(tt.vendor, tt.model, plain); p.Charge != tt.before {
				t.Errorf("before (tokens only) %d, want %d", p.Charge, tt.before)
			}
		})
	}
}

// The directive's share is unchanged by hosted units: both the charge and
// the whole vendor cost carry them.
func TestHostedUnitsWithDirective(t *testing.T) {
	b := New(defaultCard(t), Options{})
	u := gw.Usage{InputTokens: 1000, OutputTokens: 500, OptimizerTokens: 100, Hosted: gw.Hosted{WebSearches: 3}, Reported: true}
	q, err := b.Price("anthropic", "claude-opus-5-5", u)
	if err != nil {
		t.Fatal(err)
	}
	// Vendor cost: 4,400,000 (as above). Charge: 900 x 400 + 500 x
	// 2,000 + 3,000,000 = 4,360,000 x 1.09 = 4,752,400; the directive's
	// 100 x 400 x 1.09 = 43,600.
	if q.Cost != 4_400_000 || q.Charge != 4_752_400 || q.DirectiveShare != 43_600 {
		t.Errorf("cost %d charge %d share %d, want 4,400,000, 4,752,400, 43,600", q.Cost, q.Charge, q.DirectiveShare)
	}
}

// Issue 29 item 2: the hold covers hosted tools at their limits and the
// tier at its multiplier, so the settle of an honest request is never
// capped.
func TestHoldCoversHostedUnits(t *testing.T) {
	b := New(defaultCard(t), Options{})
	base := HoldRequest{Vendor: "anthropic", Model: "claude-opus-5-5", BodyBytes: 3000, MaxOutput: 1000, Available: -1}
	plain, err := b.Hold(base)
	if err != nil {
		t.Fatal(err)
	}
	search := base
	search.Hosted = gw.Hosted{WebSearches: 50}
	p, err := b.Hold(search)
	if err != nil {
		t.Fatal(err)
	}
	// max_uses 50 x $0.01 x 1.09 = $0.545 = 54,500,000 uc on top.
	if p.Amount-plain.Amount != 54_500_000 {
		t.Errorf("search hold %d - plain %d = %d, want 54,500,000", p.Amount, plain.Amount, p.Amount-plain.Amount)
	}
	fast := base
	fast.Hosted = gw.Hosted{Fast: true}
	if p, _ := b.Hold(fast); p.Amount != 2*plain.Amount {
		t.Errorf("fast hold %d, want 2 x %d", p.Amount, plain.Amount)
	}
	// Flex (x1/2) is held at the standard price: never below it.
	flex := HoldRequest{Vendor: "openai", Model: "gpt-6-sol", BodyBytes: 3000, MaxOutput: 1000, Available: -1}
	pf, _ := b.Hold(flex)
	flex.Hosted = gw.Hosted{ServiceTier: "flex"}
	if p, _ := b.Hold(flex); p.Amount != pf.Amount {
		t.Errorf("flex hold %d, want the standard %d", p.Amount, pf.Amount)
	}
	// The settle of the largest honest answer fits the hold: 50
	// searches and the whole output.
	q, _ := b.Price("anthropic", "claude-opus-5-5", gw.Usage{InputTokens: 1000, OutputTokens: 1000, Hosted: gw.Hosted{WebSearches: 50}, Reported: true})
	if q.Charge > p.Amount {
		t.Errorf("charge %d above the hold %d", q.Charge, p.Amount)
	}
	// A balance too small for the searches: the output is cut to fit,
	// never the searches' price.
	small := search
	small.MaxOutput, small.Available = 0, 60_000_000
	sp, err := b.Hold(small)
	if err != nil || sp.Amount > 60_000_000 || !sp.Imposed {
		t.Errorf("small balance: %+v %v, want an imposed hold within 60,000,000", sp, err)
	}
}
