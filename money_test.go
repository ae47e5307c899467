package gw

import (
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

func TestUsageMergeReplaces(t *testing.T) {
	u := Usage{InputTokens: 10, OutputTokens: 1, Reported: true}
	u.Merge(Usage{OutputTokens: 50, CacheReadTokens: 5})
	if u.InputTokens != 10 || u.OutputTokens != 50 || u.CacheReadTokens != 5 || !u.Reported {
		t.Fatalf("merge = %+v", u)
	}
	if u.PromptTokens() != 15 || u.TotalTokens() != 65 {
		t.Fatalf("totals %d %d", u.PromptTokens(), u.TotalTokens())
	}
}
