package proxy

import (
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// bounded is what boundUsage makes of a request's usage.
type bounded struct {
	// priced is the usage the caller is charged for: every count and the
	// vendor's cost within the gateway's bounds.
	priced gw.Usage
	// recorded is the usage on the record: priced, with the vendor's
	// cost figure as it was reported.
	recorded gw.Usage
	// clamped says a count was bounded (the record's usage_clamped).
	clamped bool
	// disputed is the vendor's cost of what was reported beyond the
	// bounds (the operator's, never the caller's).
	disputed gw.Money
	// note explains it, "" when nothing was disputed.
	note string
}

// boundUsage applies the gateway's one bound to everything a vendor reported
// of a request, the same for every vendor, shape and stream:
//
//   - each prompt bucket and their sum at most the model's context
//     window (clamped: no vendor bills beyond it);
//   - output (reasoning included) at most what the request allowed
//     (outputBound), reasoning at most output;
//   - the prompt at most the prompt bound (promptBound) when the counts
//     are the vendor's;
//   - a vendor's own cost figure (OpenRouter's usage.cost) at most the
//     price list's price of the bounded tokens (of the bounds themselves
//     when the counts were unusable and the cost alone is the vendor's
//     word).
//
// What is beyond a bound is charged as the bound; the vendor's cost of
// the rest, up to the window, is the disputed cost, noted. Usage within every bound passes
// unchanged.
func (x *Exchange) boundUsage(u gw.Usage) bounded {
	b := bounded{priced: u, recorded: u}
	if x.tool {
		return b
	}
	if x.embed {
		return x.embedUsage(u)
	}
	var notes []string
	p := u
	clamped := false
	if cw, ok := x.g.cfg.Biller.(ContextCap); ok && x.g.cfg.Biller != nil {
		// No vendor bills beyond the model's window: clamped, not
		// disputed (the vendor's cost stops there too).
		p, clamped = ClampPrompt(p, cw.ContextWindow(x.in.Vendor, x.in.Model))
	}
	window := p
	var out bool
	before := p.OutputTokens
	p, out = ClampUsage(p, x.outputBound)
	if out && before > p.OutputTokens {
		notes = append(notes, fmt.Sprintf("%d output tokens reported, %d charged (the request's limit)", before, p.OutputTokens))
	}
	clamped = clamped || out
	if u.Reported && x.g.cfg.Biller != nil {
		if pb := x.promptBound(u.Hosted.Calls()); pb > 0 && p.PromptTokens() > pb {
			before := p.PromptTokens()
			p, _ = ClampPrompt(p, pb)
			notes = append(notes, fmt.Sprintf("%d prompt tokens reported, %d charged (the gateway's bound)", before, pb))
		}
	}
	if p.HasReportedCost && p.ReportedCost > 0 && x.g.cfg.Biller != nil {
		if c, ok := x.costBound(p); ok && p.ReportedCost > c {
			notes = append(notes, fmt.Sprintf("cost %s USD reported, %s charged (the price list's price of the bounded tokens)", u.ReportedCost.USDString(), c.USDString()))
			p.ReportedCost, p.ReportedCostUSD = c, ""
		}
	}
	b.priced, b.clamped = p, clamped
	b.recorded = p
	b.recorded.ReportedCost, b.recorded.HasReportedCost, b.recorded.ReportedCostUSD = u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD
	if len(notes) == 0 || x.g.cfg.Biller == nil {
		return b
	}
	full, err := x.Quote(window)
	if err != nil {
		return b
	}
	at, err := x.Quote(p)
	if err != nil {
		return b
	}
	b.disputed = max(full.Cost-at.Cost, 0)
	b.note = NoteUsageDisputed + ": " + joinAll(notes)
	return b
}

// costBound is the price list's price of u's tokens, the most the
// vendor's own cost figure may be: u's counts when they are the vendor's
// (already bounded), else the gateway's bounds (the prompt bound and the
// larger of the output estimate and the request's limit).
func (x *Exchange) costBound(u gw.Usage) (gw.Money, bool) {
	t := u
	t.ReportedCost, t.HasReportedCost, t.ReportedCostUSD = 0, false, ""
	if !u.Reported {
		if pb := x.promptBound(false); pb > t.PromptTokens() {
			t.InputTokens += pb - t.PromptTokens()
		} else if pb <= 0 {
			// Input the gateway cannot size: no bound but the window.
			return 0, false
		}
	}
	q, err := x.Quote(t)
	if err != nil {
		return 0, false
	}
	return q.Cost, true
}

func joinAll(s []string) string {
	out := ""
	for _, v := range s {
		out = joinNote(out, v)
	}
	return out
}

// holdCoversBound is the body size a hold is sized from so that its
// prompt covers what the prompt bound lets a vendor bill (bound tokens,
// 0: unbounded): a vendor over-reporting a small request is charged
// within its hold, never beyond it into the operator's loss.
func holdCoversBound(bodyBytes int, bound int64) int {
	if bound <= 0 || bound > 1<<40 {
		return bodyBytes
	}
	return max(bodyBytes, int(bound)*holdBytesPerToken)
}

// servedNoter is implemented by an Optimizer that counts a model's
// directive only after a request of it succeeded (optimize.Paid).
type servedNoter interface {
	Succeeded(vendor, model string)
}
