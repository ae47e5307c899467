package gw

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Money is an exact amount in micro-cents (1e-6 US cent). 1 USD is
// 100_000_000 Money. It is never a float.
type Money int64

// Money units.
const (
	MicroCent Money = 1
	Cent      Money = 1_000_000
	USD       Money = 100 * Cent
)

// CentsString formats m in cents with six decimals ("0.012345"), the form
// of the x-gateway-customer-charge-cents header.
func (m Money) CentsString() string { return m.decimal(6) }

// USDString formats m in dollars with eight decimals ("12.34000000").
func (m Money) USDString() string { return m.decimal(8) }

// decimal formats m / 10^scale with exactly scale decimals.
func (m Money) decimal(scale int) string {
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
	}
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	var buf [48]byte
	out := buf[:0]
	if neg {
		out = append(out, '-')
	}
	if len(d) <= scale {
		// Below one unit: "0." and the fraction padded with zeros.
		out = append(out, '0', '.')
		for range scale - len(d) {
			out = append(out, '0')
		}
		out = append(out, d...)
	} else {
		out = append(out, d[:len(d)-scale]...)
		out = append(out, '.')
		out = append(out, d[len(d)-scale:]...)
	}
	return string(out)
}

// ParseUSD parses a decimal dollar amount ("12.5", "0.00000001") exactly.
// More than eight decimals, or a value out of range, is an error.
func ParseUSD(s string) (Money, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return 0, fmt.Errorf("parse usd %q: not a decimal number", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(USD)))
	if !r.IsInt() {
		return 0, fmt.Errorf("parse usd %q: more precision than 1e-8 USD", s)
	}
	n := r.Num()
	if !n.IsInt64() {
		return 0, fmt.Errorf("parse usd %q: out of range", s)
	}
	return Money(n.Int64()), nil
}

// MarkupNum and MarkupDen give the charge multiplier, 1.09, as an exact ratio.
const (
	MarkupNum = 109
	MarkupDen = 100
)

// Charge returns cost x 1.09 rounded half up to the micro-cent.
func Charge(cost Money) Money {
	n := new(big.Int).Mul(big.NewInt(int64(cost)), big.NewInt(MarkupNum))
	return Money(divRoundHalfUp(n, big.NewInt(MarkupDen)))
}

// divRoundHalfUp returns a/b rounded half away from zero (b > 0).
func divRoundHalfUp(a, b *big.Int) int64 {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	r2 := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	if r2.Cmp(b) >= 0 {
		if a.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// RatToMoney converts an exact amount in USD to Money, rounding half up
// once to the micro-cent.
func RatToMoney(usd *big.Rat) Money {
	r := new(big.Rat).Mul(usd, new(big.Rat).SetInt64(int64(USD)))
	return Money(divRoundHalfUp(r.Num(), r.Denom()))
}
