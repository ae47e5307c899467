package billing

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// Hosted units: what a vendor bills beyond tokens (service tiers, fast
// mode, hosted tools), priced from the model's units table.
//
//   - A service tier or fast mode the answer says served the request
//     scales every token rate that applies by the unit's multiplier
//     (tier and fast mode multiply). A tier the card has no multiplier
//     for ("default", "standard", a tier the operator let through) is
//     billed at the standard price.
//   - Per-call units are the reported count times the price; a
//     per-request unit (Gemini 2.5 grounding) is the price once when the
//     answer used it; code execution by the hour is each container's
//     reported seconds, at least the unit's minimum.
//   - A call the card cannot price (the operator let the unit through)
//     is the operator's cost: not charged, named in the quote's note.
//
// The request's tokens and units are summed exactly (big.Rat) and
// rounded once, like a token-only request; token-only requests keep the
// integer path.

// hostedPrice is the exact price of h's units on m: the token
// multiplier (nil: 1) and the per-call sum in USD (nil: none), and a note
// naming what was priced or left to the operator.
func hostedPrice(m *ratecard.Model, h gw.Hosted) (mult, extra *big.Rat, note string) {
	if h == (gw.Hosted{}) {
		return nil, nil, ""
	}
	var notes []string
	scale := func(unit, what string) {
		if u, ok := m.Unit(unit); ok && u.Multiplier != nil {
			if mult == nil {
				mult = new(big.Rat).SetInt64(1)
			}
			mult.Mul(mult, u.Multiplier)
			notes = append(notes, what+" x"+u.Multiplier.RatString())
		} else {
			notes = append(notes, what+" at the standard price (no multiplier on the card)")
		}
	}
	switch t := strings.ToLower(h.ServiceTier); t {
	case "priority", "flex", "batch":
		scale("service_tier_"+t, "service tier "+t)
	}
	if h.Fast {
		scale(ratecard.UnitFastMode, "fast mode")
	}
	add := func(usd *big.Rat) {
		if extra == nil {
			extra = new(big.Rat)
		}
		extra.Add(extra, usd)
	}
	calls := func(unit string, n int64, what string) {
		if n <= 0 {
			return
		}
		u, ok := m.Unit(unit)
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("%d %s: not on the card, the operator's cost", n, what))
		case u.PerHour != nil:
			// Only code execution is priced by the hour; handled below.
		case u.PerRequest:
			add(u.PerCall)
			notes = append(notes, fmt.Sprintf("%d %s (billed per request)", n, what))
		default:
			add(new(big.Rat).Mul(u.PerCall, new(big.Rat).SetInt64(n)))
			notes = append(notes, fmt.Sprintf("%d %s", n, what))
		}
	}
	calls(ratecard.UnitWebSearch, h.WebSearches, "web searches")
	calls(ratecard.UnitWebFetch, h.WebFetches, "web fetches")
	calls(ratecard.UnitGrounding, h.GroundingQueries, "grounding queries")
	calls(ratecard.UnitFileSearch, h.FileSearches, "file searches")
	if h.CodeContainers > 0 || h.CodeSeconds > 0 {
		u, ok := m.Unit(ratecard.UnitCodeExecution)
		switch {
		case ok && u.PerHour != nil:
			secs := max(h.CodeSeconds, h.CodeContainers*u.MinSeconds)
			add(new(big.Rat).Mul(u.PerHour, big.NewRat(secs, 3600)))
			notes = append(notes, fmt.Sprintf("code execution %d s", secs))
		default:
			calls(ratecard.UnitCodeExecution, max(h.CodeContainers, 1), "code-execution containers")
		}
	}
	return mult, extra, "hosted: " + strings.Join(notes, ", ")
}

// tokensUSD is the exact USD price of t at m's rates for a prompt of
// promptTokens (tier and off-peak window applied), unrounded.
func tokensUSD(m *ratecard.Model, promptTokens int64, t tokens, start time.Time) *big.Rat {
	return tokensRat(m.PriceAt(promptTokens, start).Resolved(), t)
}

// pricedHosted is pricedAt with hosted units: the exact token price times
// mult plus extra, rounded once (cost) and marked up then rounded once
// (charge).
func pricedHosted(m *ratecard.Model, t tokens, start time.Time, mult, extra *big.Rat) (cost, charge gw.Money) {
	if mult == nil && extra == nil {
		return pricedAt(m, t.prompt(), t, start)
	}
	usd := tokensUSD(m, t.prompt(), t, start)
	if mult != nil {
		usd.Mul(usd, mult)
	}
	if extra != nil {
		usd.Add(usd, extra)
	}
	return ratPriced(usd)
}

// holdHosted is a token hold scaled for the units a request may use: the
// hold times the largest multiplier it may be served at (never below 1),
// rounded up, plus the marked-up price of every call it may make.
func holdHosted(m *ratecard.Model, h gw.Hosted, hold gw.Money) gw.Money {
	mult, extra, _ := hostedPrice(m, h)
	if mult == nil && extra == nil {
		return hold
	}
	x := new(big.Rat).SetInt64(int64(hold))
	if mult != nil && mult.Cmp(big.NewRat(1, 1)) > 0 {
		x.Mul(x, mult)
	}
	if extra != nil {
		e := new(big.Rat).Mul(extra, big.NewRat(gw.MarkupNum*int64(gw.USD), gw.MarkupDen))
		x.Add(x, e)
	}
	// Round up: a hold never falls short by a rounding.
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return gw.Money(1<<63 - 1)
	}
	return gw.Money(q.Int64())
}

// UnitPriced reports whether the card prices a billable unit (a
// ratecard unit name) for vendor's model. OpenRouter prices none.
func (b *Biller) UnitPriced(vendor, model, unit string) bool {
	if vendor == OpenRouter {
		return false
	}
	m, ok := b.card.Lookup(vendor, model)
	if !ok {
		return false
	}
	_, ok = m.Unit(unit)
	return ok
}
