package proxy

import (
	"context"
	"errors"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/outlimit"
)

// Quote is a priced request (gw.Quote: billing's type).
type Quote = gw.Quote

// Biller prices requests (*billing.Biller is one). Known reports whether
// a model can be billed; Hold sizes the hold placed before the call;
// PriceAt returns the exact cost and charge of the reported usage.
type Biller interface {
	Known(vendor, model string) bool
	Hold(r HoldRequest) (HoldPlan, error)
	// PriceAt prices usage for a request that started at start (some
	// prices depend on the hour: DeepSeek's off-peak window).
	PriceAt(vendor, model string, u gw.Usage, start time.Time) (Quote, error)
}

// HoldRequest is what a hold must cover (gw.HoldRequest: billing's
// type).
type HoldRequest = gw.HoldRequest

// HoldPlan is a sized hold (gw.HoldPlan: billing's type).
type HoldPlan = gw.HoldPlan

// ContextCap is implemented by Billers that know a model's context
// window in tokens (0: unknown): a fallback whose window cannot hold the
// prompt is skipped.
type ContextCap interface {
	ContextWindow(vendor, model string) int64
}

// holdBytesPerToken is billing's HoldBytesPerToken: a prompt of n tokens
// is held as a body of 3n bytes.
const holdBytesPerToken = 3

// maxEstimate bounds a request's token estimate, far above any model's
// output, so that no caller-supplied number can overflow the count.
const maxEstimate = 1 << 40

// placeHold sizes the hold from the exact vendor body and places it. When
// the balance cannot cover the whole possible output and the caller set
// no output limit, the vendor body gets the largest limit the balance
// covers (never below the model's floor); otherwise the refusal says how
// many output tokens the balance covers.
func (x *Exchange) placeHold(ctx context.Context) error {
	g, in := x.g, &x.in
	// The caller's own body is read the same way: an ambiguous limit is
	// refused even where the mapping would have dropped it, and a C
	// caller may have set none (M requires one).
	var cl outlimit.Limits
	var err error
	if obj := x.callerObject(); obj != nil {
		cl, err = outlimit.ReadObject(in.Endpoint, obj)
	} else {
		cl, err = outlimit.Read(in.Endpoint, in.Body)
	}
	if err != nil {
		return err
	}
	callerLimit := in.Endpoint == gw.ShapeM || cl.MaxOutput > 0
	// With fallbacks the hold covers the dearest model that may serve.
	reqs := make([]HoldRequest, len(x.cands))
	plan := func(available gw.Money) (HoldPlan, error) {
		var best HoldPlan
		for i, c := range x.cands {
			if c.skip != "" {
				continue
			}
			if reqs[i].Vendor == "" {
				var lim outlimit.Limits
				var err error
				if obj := c.object(); obj != nil {
					lim, err = outlimit.ReadObject(c.bodyShape, obj)
				} else {
					lim, err = outlimit.Read(c.bodyShape, c.body)
				}
				if err != nil {
					return HoldPlan{}, err
				}
				reqs[i] = HoldRequest{Vendor: c.Vendor, Model: c.Model, BodyBytes: max(len(c.body), len(in.Body)+in.ExtraInputBytes), MaxOutput: lim.MaxOutput, Choices: lim.Choices, CallerLimit: callerLimit, Hosted: c.plan.Hold}
				if cc, ok := g.cfg.Biller.(ContextCap); ok && c.bodyMarks().External {
					// A document or image by URL, or an uploaded file:
					// the vendor may bill up to the whole context window
					// as prompt (held at the hold's bytes per token).
					if w := cc.ContextWindow(c.Vendor, c.Model); w > 0 {
						reqs[i].BodyBytes = max(reqs[i].BodyBytes, int(min(w, 1<<40))*holdBytesPerToken)
					}
				}
			}
			r := reqs[i]
			r.Available = available
			p, err := g.cfg.Biller.Hold(r)
			if err != nil {
				return HoldPlan{}, holdErr(err)
			}
			if p.Imposed {
				if err := x.impose(c, p.MaxOutput); err != nil {
					return HoldPlan{}, err
				}
			}
			c.outputBound = p.OutputBound
			if p.Amount > best.Amount {
				best = p
			}
		}
		x.use(x.cur)
		return best, nil
	}
	p, err := plan(-1)
	if err != nil {
		return err
	}
	err = x.tryHold(ctx, p)
	if gw.ErrorCode(err) != gw.CodeInsufficientBalance {
		return err
	}
	// Too little for the whole output: size the hold to the balance,
	// and to what the budgets leave.
	bal, berr := g.cfg.Store.Balance(ctx, in.Principal.AccountID)
	if berr != nil {
		return err
	}
	available := bal.Balance - bal.Held
	budget := gw.AsError(err).ErrorCode == gw.ErrorCodeBudgetExceeded
	if budget {
		left, lerr := x.budgetLeft(ctx)
		if lerr != nil {
			return err
		}
		available = min(available, left)
	}
	p, perr := plan(available)
	if perr != nil {
		if budget {
			return err // the budget's refusal says more than the balance's
		}
		return perr
	}
	return x.tryHold(ctx, p)
}

// budgetLeft is the least that the budgets in force on the request leave
// for it (the period's charges and open holds taken off).
func (x *Exchange) budgetLeft(ctx context.Context) (gw.Money, error) {
	in := &x.in
	u, err := x.g.cfg.Store.BudgetUse(ctx, in.Principal.AccountID, in.Principal.KeyID, in.Received)
	if err != nil {
		return 0, err
	}
	left := gw.Money(1<<63 - 1)
	for _, c := range []struct {
		limit gw.Money
		use   gw.PeriodUse
	}{
		{in.Principal.KeyBudget.Daily, u.KeyDay}, {in.Principal.KeyBudget.Monthly, u.KeyMonth},
		{in.Principal.AccountBudget.Daily, u.AccountDay}, {in.Principal.AccountBudget.Monthly, u.AccountMonth},
	} {
		if c.limit > 0 {
			left = min(left, c.use.Remaining(c.limit))
		}
	}
	return left, nil
}

func holdErr(err error) error {
	if gw.ErrorCode(err) == gw.CodeInternal {
		return &gw.Error{Code: gw.CodeInternal, Message: "could not price the request", Err: err}
	}
	return err
}

func (x *Exchange) tryHold(ctx context.Context, plan HoldPlan) error {
	g, in := x.g, &x.in
	h := gw.Hold{ID: in.RequestID, AccountID: in.Principal.AccountID, KeyID: in.Principal.KeyID, Amount: plan.Amount, ExpiresAt: g.cfg.Now().Add(g.cfg.HoldTTL),
		At: in.Received, KeyBudget: in.Principal.KeyBudget, AccountBudget: in.Principal.AccountBudget}
	// The run's budget and step cap first, in its own transaction: the
	// run hold is dropped again when the balance refuses.
	if err := x.holdRun(ctx, plan.Amount); err != nil {
		return err
	}
	if err := g.cfg.Store.PlaceHold(ctx, h); err != nil {
		x.unholdRun(ctx)
		if gw.ErrorCode(err) == gw.CodeInsufficientBalance {
			e := gw.AsError(err)
			e.NoRetry = true
			return e
		}
		return &gw.Error{Code: gw.CodeInternal, Message: "could not reserve the request's cost", Err: err}
	}
	x.holdPlaced, x.hold = true, plan.Amount
	x.renewAt = g.cfg.Now().Add(g.cfg.HoldTTL / 3)
	return nil
}

// KeepAlive keeps the request's hold alive while it runs: the streaming
// paths call it for every event. It costs a clock read; once a third of
// HoldTTL has passed since the hold was placed or last renewed, it moves
// the hold's expiry to a whole HoldTTL from now (one store write). A hold
// that already expired (its request outlived a stalled renewal) is not
// revived: the settle is bounded by what the balance covers then, and the
// record says so.
func (x *Exchange) KeepAlive(ctx context.Context) {
	if !x.holdPlaced || x.finished || x.holdLost {
		return
	}
	g := x.g
	now := g.cfg.Now()
	if now.Before(x.renewAt) {
		return
	}
	r := g.cfg.Store
	x.renewAt = now.Add(g.cfg.HoldTTL / 3)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	switch err := r.RenewHold(wctx, x.in.RequestID, now.Add(g.cfg.HoldTTL)); {
	case errors.Is(err, gw.ErrNotFound):
		x.holdLost = true
	case err != nil:
		// Tried again at the next event past a short back-off.
		x.renewAt = now.Add(time.Second)
		g.cfg.Logger.Warn("renew hold", "request_id", x.in.RequestID, "err", err)
	}
}
