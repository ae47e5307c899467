package billing

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// Issue 19.1: the charge is rounded once, from the exact cost, never from
// the cost already rounded to the micro-cent.
func TestChargeRoundedOnce(t *testing.T) {
	b := New(defaultCard(t), Options{})
	tests := []struct {
		name          string
		vendor, model string
		u             gw.Usage
		cost, charge  gw.Money
	}{
		{
			name: "deepseek flash", vendor: "deepseek", model: "deepseek-flash",
			// 10,009 prompt of which 9,004 cache hits, 2,003 output.
			// 1,005x30 + 9,004x0.6 + 2,003x120 = 30,150 + 5,402.4 + 240,360
			// = 275,912.4 micro-cents -> cost 275,912; x1.09 = 300,744.516
			// -> 300,745 (the rounded cost x 1.09 = 300,744.08 gave 300,744).
			u:    gw.Usage{InputTokens: 1_005, CacheReadTokens: 9_004, OutputTokens: 2_003},
			cost: 275_912, charge: 300_745,
		},
		{
			name: "groq five cached tokens", vendor: "groq", model: "openai/gpt-oss-20b",
			// 5 x 3.7 = 18.5 micro-cents -> cost 19 (half up); x1.09 = 20.165
			// -> 20 (the rounded cost x 1.09 = 20.71 gave 21).
			u:    gw.Usage{CacheReadTokens: 5},
			cost: 19, charge: 20,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := b.Price(tc.vendor, tc.model, tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Cost != tc.cost || q.Charge != tc.charge {
				t.Errorf("cost %d charge %d, want %d and %d", q.Cost, q.Charge, tc.cost, tc.charge)
			}
		})
	}
}

// exactCharge is the reference: round_half_up(exact cost x 1.09) in
// micro-cents, all in big.Rat.
func exactCharge(t *testing.T, b *Biller, vendor, model string, u gw.Usage) *big.Int {
	t.Helper()
	m, ok := b.Card().Lookup(vendor, model)
	if !ok {
		t.Fatalf("%s/%s not on the card", vendor, model)
	}
	in, read, w5, w1 := refBuckets(t, m.PriceFor(refPrompt(u)-u.OptimizerTokens).Resolved(), u)
	p := m.PriceFor(refPrompt(u) - u.OptimizerTokens).Resolved()
	sum := new(big.Rat)
	for _, x := range []struct {
		n    int64
		rate *big.Rat
	}{
		{in, p.Input}, {read, p.CachedInput}, {w5, p.CacheWrite5m},
		{w1, p.CacheWrite1h}, {u.OutputTokens, p.Output},
	} {
		sum.Add(sum, new(big.Rat).Mul(x.rate, new(big.Rat).SetInt64(x.n)))
	}
	// USD per million tokens -> micro-cents: x 1e8 / 1e6 = x 100; then x 1.09.
	sum.Mul(sum, big.NewRat(100*gw.MarkupNum, gw.MarkupDen))
	q, r := new(big.Int).QuoRem(sum.Num(), sum.Denom(), new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).Cmp(sum.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// TestChargePropertyExact: for random usage in every bucket on every
// rate-card entry, the charge is round_half_up(exact cost x 1.09).
func TestChargePropertyExact(t *testing.T) {
	b := New(defaultCard(t), Options{})
	r := rand.New(rand.NewPCG(19, 1))
	n := func() int64 {
		switch r.IntN(5) {
		case 0:
			return 0
		case 1:
			return r.Int64N(10)
		case 2:
			return r.Int64N(10_000)
		case 3:
			return r.Int64N(2_000_000)
		}
		return r.Int64N(1 << 40)
	}
	for _, m := range b.Card().Models() {
		for range 300 {
			u := gw.Usage{InputTokens: n(), CacheReadTokens: n(), CacheWrite5mTokens: n(), CacheWrite1hTokens: n(), OutputTokens: n(), Reported: true}
			u.OptimizerTokens = min(n(), refPrompt(u))
			q, err := b.Price(m.Vendor, m.ID, u)
			if err != nil {
				t.Fatal(err)
			}
			want := exactCharge(t, b, m.Vendor, m.ID, u)
			if !want.IsInt64() || q.Charge != gw.Money(want.Int64()) {
				t.Fatalf("%s %+v: charge %d, exact %s", m.Name(), u, q.Charge, want)
			}
		}
	}
}

// refBuckets takes the optimizer's tokens off the prompt buckets, the
// dearest first (a plain loop over the four, independent of billed).
func refBuckets(t *testing.T, p ratecard.Price, u gw.Usage) (in, read, w5, w1 int64) {
	t.Helper()
	in, read, w5, w1 = u.InputTokens, u.CacheReadTokens, u.CacheWrite5mTokens, u.CacheWrite1hTokens
	opt := u.OptimizerTokens
	for opt > 0 {
		var best *int64
		var bestRate *big.Rat
		for _, c := range []struct {
			n    *int64
			rate *big.Rat
		}{{&w1, p.CacheWrite1h}, {&w5, p.CacheWrite5m}, {&in, p.Input}, {&read, p.CachedInput}} {
			if *c.n > 0 && (best == nil || c.rate.Cmp(bestRate) > 0) {
				best, bestRate = c.n, c.rate
			}
		}
		if best == nil {
			break
		}
		take := min(opt, *best)
		*best -= take
		opt -= take
	}
	return
}

// refPrompt is every prompt token the vendor saw.
func refPrompt(u gw.Usage) int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWrite5mTokens + u.CacheWrite1hTokens
}

// Issue 19.8: DeepSeek's off-peak window is priced by the time the
// request started (the standard price at every hour charged off-peak
// users 2.18x cost).
func TestDeepSeekOffPeak(t *testing.T) {
	b := New(defaultCard(t), Options{})
	u := gw.Usage{InputTokens: 1_005, CacheReadTokens: 9_004, OutputTokens: 2_003, Reported: true}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 25, h, m, 0, 0, time.UTC) }
	tests := []struct {
		name   string
		at     time.Time
		charge gw.Money
	}{
		// Standard: 300,745 (TestChargeRoundedOnce).
		{"noon UTC", day(12, 0), 300_745},
		{"16:29 UTC", day(16, 29), 300_745},
		// Off-peak, half: 1,005 x 15 + 9,004 x 0.3 + 2,003 x 60 =
		// 137,956.2; x1.09 = 150,372.258 -> 150,372.
		{"16:30 UTC", day(16, 30), 150_372},
		{"23:59 UTC", day(23, 59), 150_372},
		{"00:29 UTC", day(0, 29), 150_372},
		{"00:30 UTC", day(0, 30), 300_745},
		{"17:00 in UTC+8 is 09:00 UTC", time.Date(2026, 11, 25, 17, 0, 0, 0, time.FixedZone("CST", 8*3600)), 300_745},
		{"no start time", time.Time{}, 300_745},
	}
	for _, tc := range tests {
		q, err := b.PriceAt("deepseek", "deepseek-flash", u, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if q.Charge != tc.charge {
			t.Errorf("%s: charge %d, want %d", tc.name, q.Charge, tc.charge)
		}
	}
}
