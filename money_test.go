package gw

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

func TestCharge(t *testing.T) {
	tests := []struct {
		cost, want Money
	}{
		{0, 0},
		{100, 109},
		{1, 1},             // 1.09 -> 1
		{50, 55},           // 54.5 -> 55 (half up)
		{-50, -55},         // half away from zero
		{123_456, 134_567}, // 134567.04
		{math.MaxInt64 / 2, Money(new(big.Int).Div(new(big.Int).Add(new(big.Int).Mul(big.NewInt(math.MaxInt64/2), big.NewInt(109)), big.NewInt(50)), big.NewInt(100)).Int64())},
	}
	for _, tt := range tests {
		if got := Charge(tt.cost); got != tt.want {
			t.Errorf("Charge(%d) = %d, want %d", tt.cost, got, tt.want)
		}
	}
}

func TestMoneyStrings(t *testing.T) {
	tests := []struct {
		m          Money
		cents, usd string
	}{
		{0, "0.000000", "0.00000000"},
		{12_345, "0.012345", "0.00012345"},
		{USD, "100.000000", "1.00000000"},
		{-Cent, "-1.000000", "-0.01000000"},
	}
	for _, tt := range tests {
		if got := tt.m.CentsString(); got != tt.cents {
			t.Errorf("%d.CentsString() = %q, want %q", tt.m, got, tt.cents)
		}
		if got := tt.m.USDString(); got != tt.usd {
			t.Errorf("%d.USDString() = %q, want %q", tt.m, got, tt.usd)
		}
	}
}

func TestParseUSD(t *testing.T) {
	good := map[string]Money{"10": 10 * USD, "0.5": 50 * Cent, "0.00000001": 1, " 2 ": 2 * USD}
	for s, want := range good {
		got, err := ParseUSD(s)
		if err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "abc", "0.000000001", "1e30"} {
		if _, err := ParseUSD(s); err == nil {
			t.Errorf("ParseUSD(%q): no error", s)
		}
	}
}

func TestRatToMoney(t *testing.T) {
	r, _ := new(big.Rat).SetString("0.0012345") // USD -> 123450 micro-cents
	if got := RatToMoney(r); got != 123_450 {
		t.Fatalf("RatToMoney = %d", got)
	}
	half, _ := new(big.Rat).SetString("0.000000005") // half a micro-cent
	if got := RatToMoney(half); got != 1 {
		t.Fatalf("half rounds to %d, want 1", got)
	}
}

// Issue 19.5: a later report replaces every vendor count, zeros included.
func TestUsageMergeLatestReportWins(t *testing.T) {
	tests := []struct {
		name        string
		first, then Usage
		want        Usage
	}{
		{
			// Gemini: the first chunk's usageMetadata lacks
			// cachedContentTokenCount (6,003 uncached); the last reports
			// all 6,003 as cached, leaving 0 uncached.
			name:  "gemini cached arrives late",
			first: Usage{InputTokens: 6_003, Reported: true},
			then:  Usage{CacheReadTokens: 6_003, OutputTokens: 210, Reported: true},
			want:  Usage{CacheReadTokens: 6_003, OutputTokens: 210, Reported: true},
		},
		{
			// Anthropic: message_start reported 5,003 cache writes, the
			// message_delta (laid over it by the decoder) reports 0.
			name:  "anthropic cache write lowered to 0",
			first: Usage{InputTokens: 3, CacheWrite5mTokens: 5_003, OutputTokens: 1, Reported: true},
			then:  Usage{InputTokens: 3, OutputTokens: 412, Reported: true},
			want:  Usage{InputTokens: 3, OutputTokens: 412, Reported: true},
		},
		{
			name:  "optimizer count and reported cost survive a vendor report",
			first: Usage{InputTokens: 100, OptimizerTokens: 12, ReportedCost: 7, HasReportedCost: true, Reported: true},
			then:  Usage{InputTokens: 90, OutputTokens: 5, Reported: true},
			want:  Usage{InputTokens: 90, OutputTokens: 5, OptimizerTokens: 12, ReportedCost: 7, HasReportedCost: true, Reported: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.first
			u.Merge(tc.then)
			if u != tc.want {
				t.Errorf("merge = %+v, want %+v", u, tc.want)
			}
		})
	}
}

func TestUsageMergeEstimateOverlays(t *testing.T) {
	u := Usage{InputTokens: 10, OutputTokens: 1, Reported: true}
	u.Merge(Usage{OutputTokens: 50, CacheReadTokens: 5})
	if u.InputTokens != 10 || u.OutputTokens != 50 || u.CacheReadTokens != 5 || !u.Reported {
		t.Fatalf("merge = %+v", u)
	}
	if u.PromptTokens() != 15 || u.TotalTokens() != 65 {
		t.Fatalf("totals %d %d", u.PromptTokens(), u.TotalTokens())
	}
}

// Issue 29 item 5: a count decodes whatever the vendor sent; only a
// non-negative integer literal within int64 is valid.
func TestCountDecodes(t *testing.T) {
	for raw, want := range map[string]Count{
		`12`: {12, true}, `0`: {0, true}, `9223372036854775807`: {1<<63 - 1, true},
		`9223372036854775808`: {}, `-1`: {}, `1.5`: {}, `1e3`: {}, `"12"`: {}, `{}`: {}, `null`: {},
	} {
		var c Count
		if err := c.UnmarshalJSON([]byte(raw)); err != nil || c != want {
			t.Errorf("%s: %+v, %v; want %+v", raw, c, err, want)
		}
	}
	// Malformed is sticky through Merge: a later valid report does not
	// clear it.
	u := Usage{Malformed: true}
	u.Merge(Usage{InputTokens: 3, OutputTokens: 4, Reported: true})
	if !u.Malformed || u.InputTokens != 3 {
		t.Errorf("after merge %+v, want still malformed", u)
	}
}

func TestDecimalMatchesPaddedFormat(t *testing.T) {
	old := func(m Money, scale int) string {
		neg := m < 0
		u := uint64(m)
		if neg {
			u = uint64(-m)
		}
		s := fmt.Sprintf("%0*d", scale+1, u)
		out := s[:len(s)-scale] + "." + s[len(s)-scale:]
		if neg {
			return "-" + out
		}
		return out
	}
	for _, m := range []Money{0, 1, -1, 9, 10, 99, 100, 123456, 999999, 1000000, 1000001, -1000000, 12345678, 100000000, -123456789, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		for _, scale := range []int{6, 8} {
			if got, want := m.decimal(scale), old(m, scale); got != want {
				t.Errorf("%d at scale %d: %q, want %q", int64(m), scale, got, want)
			}
		}
	}
}
