package billing

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

func defaultCard(t testing.TB) *ratecard.Card {
	t.Helper()
	c, err := ratecard.Default()
	if err != nil {
		t.Fatalf("ratecard.Default: %v", err)
	}
	return c
}

// Expected values are in micro-cents (gw.Money). A price of P USD per
// million tokens is P x 100 micro-cents per token, so e.g. Sonnet 5.5's
// 2.00 input is 200 per token. Charges are cost x 1.09, rounded half up.
func TestPriceByVendorUsageShape(t *testing.T) {
	b := New(defaultCard(t), Options{})
	tests := []struct {
		name          string
		vendor, model string
		u             gw.Usage
		cost, charge  gw.Money
		// vendorCost and share, for usage with optimizer tokens: the
		// vendor's cost of every token (the directive's included) and the
		// directive's part of its charge; cost is then the billed cost.
		vendorCost, share gw.Money
	}{
		{
			// Pitfall 1 golden: Anthropic input_tokens excludes the cache write.
			name: "anthropic cache write golden", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: 3, CacheWrite5mTokens: 12304, OutputTokens: 550},
			// 3x200 + 12304x250 + 550x1000 = 600 + 3_076_000 + 550_000 = 3_626_600; x1.09 = 3_952_994
			cost: 3_626_600, charge: 3_952_994,
		},
		{
			name: "anthropic reads and both write TTLs", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: 50, CacheReadTokens: 20_000, CacheWrite5mTokens: 1_000, CacheWrite1hTokens: 2_000, OutputTokens: 800, ReasoningTokens: 300},
			// 50x200 + 20000x10 + 1000x250 + 2000x400 + 800x1000
			// = 10_000 + 200_000 + 250_000 + 800_000 + 800_000 = 2_060_000; x1.09 = 2_245_400
			cost: 2_060_000, charge: 2_245_400,
		},
		{
			name: "anthropic haiku 5.5 long-context tier", vendor: "anthropic", model: "claude-haiku-5-5",
			u: gw.Usage{InputTokens: 10, CacheReadTokens: 100_000, OutputTokens: 1_000},
			// prompt 100_010 > 100K: x5 prices. 10x50 + 100000x5 + 1000x250 = 500 + 500_000 + 250_000 = 750_500
			// x1.09 = 818_045
			cost: 750_500, charge: 818_045,
		},
		{
			name: "anthropic haiku 5.5 at the tier threshold", vendor: "anthropic", model: "claude-haiku-5-5",
			u: gw.Usage{CacheReadTokens: 100_000, OutputTokens: 1_000},
			// prompt exactly 100K: base. 100000x1 + 1000x50 = 150_000; x1.09 = 163_500
			cost: 150_000, charge: 163_500,
		},
		{
			// Pitfall 1 golden: OpenAI prompt_tokens 1816 includes cached_tokens 1792.
			name: "openai cached tokens", vendor: "openai", model: "gpt-6-sol",
			u: gw.Usage{InputTokens: 24, CacheReadTokens: 1_792, OutputTokens: 300, ReasoningTokens: 200},
			// 24x200 + 1792x20 + 300x1000 = 4_800 + 35_840 + 300_000 = 340_640; x1.09 = 371_297.6 -> 371_298
			cost: 340_640, charge: 371_298,
		},
		{
			name: "openai cache write", vendor: "openai", model: "gpt-6-sol",
			u: gw.Usage{InputTokens: 100, CacheWrite5mTokens: 2_048, OutputTokens: 10},
			// 100x200 + 2048x250 + 10x1000 = 20_000 + 512_000 + 10_000 = 542_000; x1.09 = 590_780
			cost: 542_000, charge: 590_780,
		},
		{
			name: "openai above 272K", vendor: "openai", model: "gpt-6-sol",
			u: gw.Usage{InputTokens: 300_000, OutputTokens: 1_000},
			// tier 4.00/15.00: 300000x400 + 1000x1500 = 120_000_000 + 1_500_000 = 121_500_000; x1.09 = 132_435_000
			cost: 121_500_000, charge: 132_435_000,
		},
		{
			// DeepSeek prompt_cache_hit_tokens 1000, miss 500; peak price billed.
			name: "deepseek hit and miss", vendor: "deepseek", model: "deepseek-flash",
			u: gw.Usage{InputTokens: 500, CacheReadTokens: 1_000, OutputTokens: 200},
			// 500x30 + 1000x0.6 + 200x120 = 15_000 + 600 + 24_000 = 39_600; x1.09 = 43_164
			cost: 39_600, charge: 43_164,
		},
		{
			// Pitfall 9: candidates 198 + thoughts 405 = output 603.
			name: "gemini thoughts are output", vendor: "google", model: "gemini-3.1-pro",
			u: gw.Usage{InputTokens: 20, OutputTokens: 603, ReasoningTokens: 405},
			// 20x200 + 603x1200 = 4_000 + 723_600 = 727_600; x1.09 = 793_084
			cost: 727_600, charge: 793_084,
		},
		{
			name: "gemini above 200K", vendor: "google", model: "gemini-3.1-pro-preview",
			u: gw.Usage{InputTokens: 200_000, CacheReadTokens: 50_000, OutputTokens: 1_000},
			// prompt 250K: tier 4.00/0.40/18.00. 200000x400 + 50000x40 + 1000x1800
			// = 80_000_000 + 2_000_000 + 1_800_000 = 83_800_000; x1.09 = 91_342_000
			cost: 83_800_000, charge: 91_342_000,
		},
		{
			name: "gemini at 200K is base price", vendor: "google", model: "gemini-3.1-pro",
			u: gw.Usage{InputTokens: 200_000},
			// 200000x200 = 40_000_000; x1.09 = 43_600_000
			cost: 40_000_000, charge: 43_600_000,
		},
		{
			name: "groq cached, cost rounds half up", vendor: "groq", model: "openai/gpt-oss-120b",
			u: gw.Usage{InputTokens: 1_000, CacheReadTokens: 501, OutputTokens: 333},
			// 1000x15 + 501x7.5 + 333x60 = 15_000 + 3_757.5 + 19_980 = 38_737.5 -> 38_738
			// x1.09 = 42_224.42 -> 42_224
			cost: 38_738, charge: 42_224,
		},
		{
			name: "mistral, charge rounds half up", vendor: "mistral", model: "mistral-medium-latest",
			u: gw.Usage{InputTokens: 1_234, OutputTokens: 567},
			// 1234x150 + 567x750 = 185_100 + 425_250 = 610_350; x1.09 = 665_281.5 -> 665_282
			cost: 610_350, charge: 665_282,
		},
		{
			name: "together cached at input price", vendor: "together", model: "meta-llama/Llama-3.3-70B-Instruct-Turbo",
			u: gw.Usage{InputTokens: 900, CacheReadTokens: 100, OutputTokens: 500},
			// (900+100)x88 + 500x88 = 88_000 + 44_000 = 132_000; x1.09 = 143_880
			cost: 132_000, charge: 143_880,
		},
		{
			name: "fireworks cached", vendor: "fireworks", model: "accounts/fireworks/models/kimi-k2p6",
			u: gw.Usage{InputTokens: 2_000, CacheReadTokens: 3_000, OutputTokens: 700},
			// 2000x95 + 3000x16 + 700x400 = 190_000 + 48_000 + 280_000 = 518_000; x1.09 = 564_620
			cost: 518_000, charge: 564_620,
		},
		{
			// usage.cost 0.0012345 USD = 123_450 micro-cents; x1.09 = 134_560.5 -> 134_561
			name: "openrouter pass-through", vendor: "openrouter", model: "anthropic/claude-opus-5.5",
			u:    gw.Usage{InputTokens: 10, OutputTokens: 10, ReportedCost: mustUSD(t, "0.0012345"), HasReportedCost: true},
			cost: 123_450, charge: 134_561,
		},
		{
			name: "openrouter free model", vendor: "openrouter", model: "x/y:free",
			u:    gw.Usage{InputTokens: 10, ReportedCost: 0, HasReportedCost: true},
			cost: 0, charge: 0,
		},
		{
			name: "optimizer tokens not billed", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: 1_000, OptimizerTokens: 40},
			// (1000-40)x200 = 192_000; x1.09 = 209_280. The vendor bills
			// 1000x200 = 200_000; x1.09 = 218_000: share 8_720.
			cost: 192_000, charge: 209_280, vendorCost: 200_000, share: 8_720,
		},
		{
			// Issue 19 item 9: the 10 optimizer tokens left after the
			// input go to the next dearest bucket, the cache read.
			name: "optimizer above input comes off the cache read", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: 30, OptimizerTokens: 40, CacheReadTokens: 100},
			// 0x200 + 90x10 = 900; x1.09 = 981. The vendor bills 30x200
			// + 100x10 = 7_000; x1.09 = 7_630: share 6_649.
			cost: 900, charge: 981, vendorCost: 7_000, share: 6_649,
		},
		{
			// The optimizer's segment sits in a cached prefix written for
			// an hour: it comes off the dearest bucket, the 1h write.
			name: "optimizer tokens off the dearest bucket", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: 100, CacheWrite1hTokens: 1_000, OptimizerTokens: 40, OutputTokens: 0},
			// 100x200 + 960x400 = 20_000 + 384_000 = 404_000; x1.09 = 440_360.
			// The vendor bills 100x200 + 1000x400 = 420_000; x1.09 =
			// 457_800: share 17_440 (40x400x1.09).
			cost: 404_000, charge: 440_360, vendorCost: 420_000, share: 17_440,
		},
		{
			// 40 + 100,000 prompt tokens, 40 of them the optimizer's: the
			// tier is picked by 100,000, the base price (the whole prompt
			// picked the x5 tier: 817,500).
			name: "optimizer tokens do not pick the tier", vendor: "anthropic", model: "claude-haiku-5-5",
			u: gw.Usage{InputTokens: 40, CacheReadTokens: 100_000, OptimizerTokens: 40, OutputTokens: 1_000},
			// 0x10 + 100000x1 + 1000x50 = 150_000; x1.09 = 163_500. The
			// vendor bills the x5 tier on 100,040: 40x50 + 100000x5 +
			// 1000x250 = 752_000; x1.09 = 819_680: share 656_180.
			cost: 150_000, charge: 163_500, vendorCost: 752_000, share: 656_180,
		},
		{
			name: "negative buckets count as zero", vendor: "anthropic", model: "claude-sonnet-5-5",
			u: gw.Usage{InputTokens: -5, CacheReadTokens: -3, CacheWrite5mTokens: -2, CacheWrite1hTokens: -1, OptimizerTokens: -7, OutputTokens: 10},
			// 10x1000 = 10_000; x1.09 = 10_900
			cost: 10_000, charge: 10_900,
		},
		{
			name: "reasoning not added to output", vendor: "openai", model: "gpt-6-sol",
			u: gw.Usage{OutputTokens: 100, ReasoningTokens: 100},
			// 100x1000 = 100_000; x1.09 = 109_000
			cost: 100_000, charge: 109_000,
		},
		{
			name: "exactly half rounds up", vendor: "openai", model: "gpt-6-luna",
			u: gw.Usage{CacheWrite5mTokens: 1},
			// 1x12.5 = 12.5 -> 13; x1.09 = 14.17 -> 14
			cost: 13, charge: 14,
		},
		{
			name: "below half rounds down", vendor: "groq", model: "openai/gpt-oss-20b",
			u: gw.Usage{CacheReadTokens: 2},
			// 2x3.7 = 7.4 -> 7; x1.09 = 7.63 -> 8
			cost: 7, charge: 8,
		},
		{
			name: "rounded once, not per bucket", vendor: "openai", model: "gpt-6-luna",
			u: gw.Usage{CacheWrite5mTokens: 1, CacheWrite1hTokens: 1},
			// 1x12.5 + 1x12.5 (1h at the 5m price) = 25 exactly, not 13 + 13; x1.09 = 27.25 -> 27
			cost: 25, charge: 27,
		},
		{
			name: "huge counts stay exact", vendor: "openai", model: "gpt-6-astra",
			u: gw.Usage{OutputTokens: 1_000_000_000_000_000},
			// 1e15 x 5000 = 5e18 (fits int64); x1.09 = 5.45e18 (past gw.Charge's int64 product)
			cost: 5_000_000_000_000_000_000, charge: 5_450_000_000_000_000_000,
		},
		{
			name: "beyond range saturates", vendor: "anthropic", model: "claude-fable-5-1",
			u:    gw.Usage{InputTokens: math.MaxInt64, CacheReadTokens: math.MaxInt64, OutputTokens: math.MaxInt64},
			cost: math.MaxInt64, charge: math.MaxInt64,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := b.Price(tt.vendor, tt.model, tt.u)
			if err != nil {
				t.Fatalf("Price: %v", err)
			}
			wantCost := tt.cost
			if tt.vendorCost != 0 {
				wantCost = tt.vendorCost
			}
			if q.Cost != wantCost || q.Charge != tt.charge || q.DirectiveShare != tt.share {
				t.Errorf("cost %d charge %d share %d, want cost %d charge %d share %d", q.Cost, q.Charge, q.DirectiveShare, wantCost, tt.charge, tt.share)
			}
			if tt.vendor == OpenRouter {
				return
			}
			// Cost agrees with the big.Rat reference.
			m, _ := b.Card().Lookup(tt.vendor, tt.model)
			if ref, refCharge := costRat(m.PriceFor(billed(m, tt.u, time.Time{}).prompt()).Resolved(), billed(m, tt.u, time.Time{})); ref != tt.cost || refCharge != q.Charge {
				t.Errorf("big.Rat reference %d/%d, Cost %d/%d", ref, refCharge, q.Cost, q.Charge)
			}
		})
	}
}

func mustUSD(t *testing.T, s string) gw.Money {
	t.Helper()
	m, err := gw.ParseUSD(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPriceNotes(t *testing.T) {
	b := New(defaultCard(t), Options{})
	q, _ := b.Price("google", "gemini-3.1-pro", gw.Usage{InputTokens: 200_001})
	if q.Note != "long-context price: prompt above 200000 tokens" {
		t.Errorf("tier note %q", q.Note)
	}
	// Optimizer tokens are the gateway's: they never push the caller into
	// a dearer tier (the vendor's tier surcharge on them is the
	// gateway's cost). 199,991 x 200 = 39,998,200 at the base price,
	// x1.09 = 43,598,038. The vendor bills 200,001 x 400 = 80,000,400;
	// x1.09 = 87,200,436: the directive's share is 43,602,398.
	q, _ = b.Price("google", "gemini-3.1-pro", gw.Usage{InputTokens: 200_001, OptimizerTokens: 10})
	if q.Charge != 43_598_038 || q.Cost != 80_000_400 || q.DirectiveShare != 43_602_398 || q.Note != "" {
		t.Errorf("cost %d charge %d share %d note %q, want the base price on 199,991 billed tokens", q.Cost, q.Charge, q.DirectiveShare, q.Note)
	}
	q, _ = b.Price("google", "gemini-3.1-pro", gw.Usage{InputTokens: 200_000})
	if q.Note != "" {
		t.Errorf("base-price note %q, want none", q.Note)
	}
}

func TestPriceErrors(t *testing.T) {
	b := New(defaultCard(t), Options{OpenRouterHold: 7 * gw.Cent})

	q, err := b.Price("openrouter", "openai/gpt-9", gw.Usage{InputTokens: 5, OutputTokens: 5, Reported: true})
	if !errors.Is(err, ErrCostMissing) {
		t.Fatalf("openrouter without cost: err %v, want ErrCostMissing", err)
	}
	// Issue 19.4: never a flat fee (it was the whole hold).
	if q.Charge != 0 || q.Cost != 0 || !strings.Contains(q.Note, "cost_missing") {
		t.Errorf("quote %+v, want no charge and a cost_missing note", q)
	}
	// A negative cost is not a price (it was charged 0 silently).
	if _, err := b.Price("openrouter", "x/y", gw.Usage{ReportedCost: -1, HasReportedCost: true}); !errors.Is(err, ErrCostMissing) {
		t.Errorf("negative reported cost: err %v, want ErrCostMissing", err)
	}

	_, err = b.Price("openai", "gpt-3.9-unlisted", gw.Usage{InputTokens: 1})
	if !errors.Is(err, ErrUnknownModel) || gw.ErrorCode(err) != gw.CodeInvalidRequest {
		t.Fatalf("unknown model: err %v (code %s), want invalid_request wrapping ErrUnknownModel", err, gw.ErrorCode(err))
	}
	if msg := gw.AsError(err).Message; !strings.Contains(msg, `"openai/gpt-3.9-unlisted"`) {
		t.Errorf("message %q does not name the model", msg)
	}
}

func TestKnown(t *testing.T) {
	b := New(defaultCard(t), Options{})
	for _, tt := range []struct {
		vendor, model string
		want          bool
	}{
		{"anthropic", "claude-opus-5-5", true},
		{"anthropic", "claude-haiku-4-5-20251001", true},
		// Issue 29 item 4: an OpenRouter model on no price list is
		// refused (its answers without usage.cost went unbilled).
		{"openrouter", "anyone/any-model", false},
		{"openai", "gpt-4o", false},
		{"mistral", "claude-opus-5-5", false},
		{"acme", "m", false},
	} {
		if got := b.Known(tt.vendor, tt.model); got != tt.want {
			t.Errorf("Known(%s, %s) = %v, want %v", tt.vendor, tt.model, got, tt.want)
		}
	}
	if New(nil, Options{}).Known("openai", "gpt-6-sol") {
		t.Error("a Biller without a card knows a model")
	}
	if err := b.Priceable("openrouter", "anyone/any-model"); err == nil || !strings.Contains(err.Error(), "price list could not be read") {
		t.Errorf("unlisted OpenRouter model without a list: %v", err)
	}
	or := openRouterBiller(t)
	if err := or.Priceable("openrouter", "meta-llama/llama-3.3-70b-instruct"); err != nil {
		t.Errorf("listed OpenRouter model: %v", err)
	}
	err := or.Priceable("openrouter", "anyone/any-model")
	if gw.ErrorCode(err) != gw.CodeInvalidRequest || !strings.Contains(err.Error(), `"openrouter/anyone/any-model"`) || !strings.Contains(err.Error(), "not on OpenRouter's price list of 2026-11-25") {
		t.Errorf("unlisted OpenRouter model: %v", err)
	}
}

func TestHoldAmount(t *testing.T) {
	b := New(defaultCard(t), Options{})
	tests := []struct {
		name          string
		vendor, model string
		body          int
		maxOut        int64
		want          gw.Money
	}{
		{
			name: "input at the highest write rate plus max output", vendor: "anthropic", model: "claude-sonnet-5-5", body: 3_000, maxOut: 1_000,
			// 3000/3 = 1000 tokens x max(200, 250, 400) + 1000 x 1000 = 400_000 + 1_000_000 = 1_400_000; x1.09 = 1_526_000
			want: 1_526_000,
		},
		{
			name: "bytes per token rounds up", vendor: "anthropic", model: "claude-sonnet-5-5", body: 3_001, maxOut: 1_000,
			// ceil(3001/3) = 1001 x 400 + 1_000_000 = 1_400_400; x1.09 = 1_526_436
			want: 1_526_436,
		},
		{
			name: "no max tokens uses the model max", vendor: "anthropic", model: "claude-sonnet-5-5", body: 3_000, maxOut: 0,
			// 400_000 + 128000 x 1000 = 128_400_000; x1.09 = 139_956_000
			want: 139_956_000,
		},
		{
			name: "max tokens capped at the model max", vendor: "anthropic", model: "claude-sonnet-5-5", body: 3_000, maxOut: 10_000_000,
			want: 139_956_000,
		},
		{
			name: "no write surcharge", vendor: "deepseek", model: "deepseek-flash", body: 300, maxOut: 100,
			// 100 x 30 + 100 x 120 = 15_000; x1.09 = 16_350
			want: 16_350,
		},
		{
			name: "long prompt takes the tier price", vendor: "google", model: "gemini-3.1-pro", body: 900_003, maxOut: 1_000,
			// 300001 tokens > 200K: 300001 x 400 + 1000 x 1800 = 120_000_400 + 1_800_000 = 121_800_400; x1.09 = 132_762_436
			want: 132_762_436,
		},
		{
			name: "estimate capped at the context window", vendor: "anthropic", model: "claude-haiku-4-5", body: 3_000_000, maxOut: 10,
			// min(1_000_000, 200_000) x max(100, 125, 200) + 10 x 500 = 40_000_000 + 5_000 = 40_005_000; x1.09 = 43_605_450
			want: 43_605_450,
		},
		{
			name: "empty body", vendor: "groq", model: "llama-3.1-8b-instant", body: -1, maxOut: 1_000,
			// 0 + 1000 x 8 = 8_000; x1.09 = 8_720
			want: 8_720,
		},
		{name: "openrouter default hold", vendor: "openrouter", model: "a/b", body: 10_000_000, maxOut: 1_000_000, want: DefaultOpenRouterHold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.HoldAmount(tt.vendor, tt.model, tt.body, tt.maxOut)
			if err != nil || got != tt.want {
				t.Errorf("HoldAmount = %d, %v; want %d", got, err, tt.want)
			}
		})
	}

	if got, _ := New(nil, Options{OpenRouterHold: 3 * gw.Cent}).HoldAmount("openrouter", "a/b", 1, 1); got != 3*gw.Cent {
		t.Errorf("configured openrouter hold %d, want %d", got, 3*gw.Cent)
	}
	if _, err := b.HoldAmount("openai", "gpt-0", 10, 10); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model hold: %v", err)
	}
}

// A hold covers the real cost of any answer that fits it: the prompt came
// in at no more tokens than the estimate and the output at most maxOut.
func TestHoldCoversCharge(t *testing.T) {
	b := New(defaultCard(t), Options{})
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range b.Card().Models() {
		for range 50 {
			body := r.IntN(2_000_000)
			maxOut := r.Int64N(m.MaxOutputTokens) + 1
			hold, err := b.HoldAmount(m.Vendor, m.ID, body, maxOut)
			if err != nil {
				t.Fatal(err)
			}
			prompt := int64(body+2) / 3
			if m.ContextWindow > 0 {
				prompt = min(prompt, m.ContextWindow)
			}
			// Spread the prompt over the buckets at random.
			w1 := r.Int64N(prompt + 1)
			w5 := r.Int64N(prompt - w1 + 1)
			rd := r.Int64N(prompt - w1 - w5 + 1)
			u := gw.Usage{InputTokens: prompt - w1 - w5 - rd, CacheReadTokens: rd, CacheWrite5mTokens: w5, CacheWrite1hTokens: w1, OutputTokens: maxOut}
			q, err := b.Price(m.Vendor, m.ID, u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Charge > hold {
				t.Fatalf("%s body %d maxOut %d usage %+v: charge %d above hold %d", m.Name(), body, maxOut, u, q.Charge, hold)
			}
		}
	}
}

// Cost's integer path agrees with an exact big.Rat computation for random
// usage on every model of the card, tiers included.
func TestCostMatchesRatReference(t *testing.T) {
	card := defaultCard(t)
	r := rand.New(rand.NewPCG(3, 4))
	n := func() int64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.Int64N(1_000)
		case 2:
			return r.Int64N(1_000_000)
		}
		return r.Int64N(1 << 50)
	}
	for _, m := range card.Models() {
		lm, _ := card.Lookup(m.Vendor, m.ID)
		for range 200 {
			u := gw.Usage{InputTokens: n(), CacheReadTokens: n(), CacheWrite5mTokens: n(), CacheWrite1hTokens: n(), OutputTokens: n(), OptimizerTokens: n()}
			tk := billed(lm, u, time.Time{})
			want, wantCharge := costRat(lm.PriceFor(tk.prompt()).Resolved(), tk)
			if got, gotCharge := CostCharge(lm, u); got != want || gotCharge != wantCharge {
				t.Fatalf("%s %+v: Cost %d/%d, big.Rat %d/%d", m.Name(), u, got, gotCharge, want, wantCharge)
			}
		}
	}
}

func TestCostHandBuiltModel(t *testing.T) {
	// 1/3 USD per million tokens is not an integer at the 1e8 scale, so
	// Cost takes the big.Rat path: 3_000_000 tokens x 1/3 = 1 USD.
	m := &ratecard.Model{Vendor: "openai", ID: "x", MaxOutputTokens: 1, Price: ratecard.Price{Input: big.NewRat(1, 3), Output: big.NewRat(1, 1)}}
	if got := Cost(m, gw.Usage{InputTokens: 3_000_000}); got != gw.USD {
		t.Errorf("Cost = %d, want %d", got, gw.USD)
	}
	// 1 token x 1/3 USD/M = 33.33.. micro-cents -> 33; 2 tokens -> 66.67 -> 67
	if got := Cost(m, gw.Usage{InputTokens: 1}); got != 33 {
		t.Errorf("Cost(1 token) = %d, want 33", got)
	}
	if got := Cost(m, gw.Usage{InputTokens: 2}); got != 67 {
		t.Errorf("Cost(2 tokens) = %d, want 67", got)
	}
	if got := Cost(m, gw.Usage{OutputTokens: math.MaxInt64}); got != math.MaxInt64 {
		t.Errorf("huge Cost on the big.Rat path = %d, want saturation", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	if err := (Options{OpenRouterHold: -1}).Validate(); err == nil {
		t.Error("negative hold accepted")
	}
}

func BenchmarkCost(b *testing.B) {
	card := defaultCard(b)
	m, _ := card.Lookup("anthropic", "claude-sonnet-5-5")
	u := gw.Usage{InputTokens: 1_234, CacheReadTokens: 45_000, CacheWrite5mTokens: 2_000, CacheWrite1hTokens: 500, OutputTokens: 812, ReasoningTokens: 300, OptimizerTokens: 31}
	var sink gw.Money
	for b.Loop() {
		sink += Cost(m, u)
	}
	_ = sink
}

func BenchmarkCostTier(b *testing.B) {
	card := defaultCard(b)
	m, _ := card.Lookup("anthropic", "claude-haiku-5-5")
	u := gw.Usage{InputTokens: 150_000, OutputTokens: 812}
	for b.Loop() {
		Cost(m, u)
	}
}

// BenchmarkCostRat is the big.Rat reference path, for comparison.
func BenchmarkCostRat(b *testing.B) {
	card := defaultCard(b)
	m, _ := card.Lookup("anthropic", "claude-sonnet-5-5")
	u := gw.Usage{InputTokens: 1_234, CacheReadTokens: 45_000, CacheWrite5mTokens: 2_000, CacheWrite1hTokens: 500, OutputTokens: 812}
	for b.Loop() {
		t := billed(m, u, time.Time{})
		costRat(m.PriceFor(t.prompt()).Resolved(), t)
	}
}

func BenchmarkPrice(b *testing.B) {
	bl := New(defaultCard(b), Options{})
	u := gw.Usage{InputTokens: 24, CacheReadTokens: 1_792, OutputTokens: 300}
	for b.Loop() {
		if _, err := bl.Price("openai", "gpt-6-sol", u); err != nil {
			b.Fatal(err)
		}
	}
}

func TestChargeMatchesGW(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	limit := gw.Money(math.MaxInt64 / gw.MarkupNum) // gw.Charge wraps above this
	costs := []gw.Money{0, 1, 49, 50, 51, 99, 100, 123_450, limit - 1, limit}
	for range 10_000 {
		costs = append(costs, gw.Money(r.Int64N(int64(limit)+1)))
	}
	for _, c := range costs {
		if got, want := charge(c), gw.Charge(c); got != want {
			t.Fatalf("charge(%d) = %d, gw.Charge = %d", c, got, want)
		}
	}
	// Past gw.Charge's int64 range: still exact, still half up.
	// (1e17 + 50) x 1.09 = 109_000_000_000_000_054.5 -> ..._055
	if got := charge(100_000_000_000_000_050); got != 109_000_000_000_000_055 {
		t.Errorf("charge(1e17+50) = %d, want 109000000000000055", got)
	}
	if got := charge(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("charge(MaxInt64) = %d, want saturation", got)
	}
}
