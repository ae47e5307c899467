package billing

import (
	"fmt"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// DefaultOutputFloor is the smallest output limit the gateway sets for a
// caller who gave none when the balance cannot cover the model's maximum
// output (see Hold): enough for a short answer, capped at the model's own
// maximum. A model's rate-card entry may set its own
// (min_output_tokens).
const DefaultOutputFloor = 1024

// HoldRequest is what a hold must cover (declared in the root package,
// which the proxy shares).
type HoldRequest = gw.HoldRequest

// HoldPlan is a sized hold.
type HoldPlan = gw.HoldPlan

// Hold sizes the hold of a request (see HoldAmount for the estimate).
// Without Available it holds the whole possible output. With it, and
// when that does not fit: a caller who set no output limit gets the
// largest limit the balance covers, at least the model's floor
// (Imposed); otherwise Hold returns insufficient_balance whose message
// says how many output tokens the balance covers.
func (b *Biller) Hold(r HoldRequest) (HoldPlan, error) {
	choices := max(r.Choices, 1)
	m, err := b.holdModel(r.Vendor, r.Model)
	if err != nil {
		return HoldPlan{}, err
	}
	if m == nil {
		// An OpenRouter model without a listed price: the configured
		// hold, the output unbounded (a charge above it is bounded by the balance at the settle).
		if r.Available >= 0 && b.openRouterHold > r.Available {
			return HoldPlan{}, &gw.Error{Code: gw.CodeInsufficientBalance, NoRetry: true, Message: fmt.Sprintf(
				"insufficient balance: openrouter/%s has no listed price, so its requests hold $%s; the available balance is $%s",
				r.Model, b.openRouterHold.USDString(), max(r.Available, 0).USDString())}
		}
		return HoldPlan{Amount: b.openRouterHold}, nil
	}
	per := r.MaxOutput
	if per <= 0 || per > m.MaxOutputTokens {
		per = m.MaxOutputTokens
	}
	price := func(output int64) gw.Money { return holdHosted(m, r.Hosted, holdPriced(m, r.BodyBytes, output)) }
	amount := price(mulSat(per, choices))
	plan := HoldPlan{Amount: amount, MaxOutput: per, OutputBound: mulSat(per, choices)}
	if r.Available < 0 || amount <= r.Available {
		return plan, nil
	}
	// The largest per-choice output the balance covers.
	covers := affordable(price, r.Available, choices, per)
	floor := min(m.MaxOutputTokens, DefaultOutputFloor)
	if m.MinOutputTokens > 0 {
		floor = min(m.MaxOutputTokens, m.MinOutputTokens)
	}
	if !r.CallerLimit && covers >= floor {
		plan.MaxOutput, plan.OutputBound, plan.Imposed = covers, mulSat(covers, choices), true
		plan.Amount = price(plan.OutputBound)
		return plan, nil
	}
	return HoldPlan{}, insufficient(r, m.MaxOutputTokens, per, covers, floor, choices, amount)
}

// holdModel returns the model a hold is priced from: the rate card's, or
// for OpenRouter its listed price (nil when it has none).
func (b *Biller) holdModel(vendor, model string) (*ratecard.Model, error) {
	if vendor == OpenRouter {
		m, _ := b.openRouter.List().Lookup(model)
		return m, nil
	}
	return b.lookup(vendor, model)
}

// affordable returns the largest per-choice output, at most limit, whose
// hold (price) fits available (0 when not even the prompt does).
func affordable(price func(output int64) gw.Money, available gw.Money, choices, limit int64) int64 {
	if price(0) > available {
		return 0
	}
	lo, hi := int64(0), limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if price(mulSat(mid, choices)) <= available {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func insufficient(r HoldRequest, modelMax, asked, covers, floor, choices int64, need gw.Money) *gw.Error {
	name := r.Vendor + "/" + r.Model
	var msg string
	switch {
	case r.CallerLimit:
		msg = fmt.Sprintf("insufficient balance: the available balance ($%s) covers the prompt and %d output tokens of %s; this request allows up to %d (needs up to $%s); lower the output limit or add funds",
			max(r.Available, 0).USDString(), covers, name, asked, need.USDString())
	default:
		msg = fmt.Sprintf("insufficient balance: the available balance ($%s) covers the prompt and %d output tokens of %s, fewer than the %d this gateway allows at least (the model's maximum is %d); add funds",
			max(r.Available, 0).USDString(), covers, name, floor, modelMax)
	}
	if choices > 1 {
		msg += fmt.Sprintf(" (per answer, for %d answers)", choices)
	}
	return &gw.Error{Code: gw.CodeInsufficientBalance, Message: msg, NoRetry: true}
}

// mulSat is a x b for non-negative a and b, saturating.
func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}
