package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Outcome is how a request ended, for Finish.
type Outcome struct {
	// Status is the HTTP status sent; Err the failure, nil on success.
	Status int
	Err    error
	// Usage is what the vendor reported (Usage.Reported) or, for an
	// abandoned stream, what was counted.
	Usage gw.Usage
	// Success is true when the request is billable: a 200 whose answer
	// was complete, or a stream the caller abandoned.
	Success bool
	TTFB    time.Duration
	Note    string
	// VendorResponseID is the vendor's id of its answer (OpenRouter's
	// generation id), kept on the record for reconciliation.
	VendorResponseID string
}

// Quote prices usage for this request without recording anything (so a
// non-streaming answer can carry its charge in a header).
func (x *Exchange) Quote(u gw.Usage) (Quote, error) {
	if x.tool {
		return Quote{Charge: x.price}, nil
	}
	if x.g.cfg.Biller == nil {
		return Quote{}, nil
	}
	return x.g.cfg.Biller.PriceAt(x.in.Vendor, x.in.Model, x.withOptimizer(u), x.in.Received)
}

// withOptimizer returns u with OptimizerTokens set to the directive's
// tokens when it was sent (never more than the prompt), and only to
// vendor-reported usage: the gateway's own estimate of a prompt (no usage
// reported) is read from the caller's body, which never held the
// directive.
//
// It also applies the request's side of the vendor's per-call billing to
// a reported answer (billable.Plan.Bill), and prices an answer billed
// from the gateway's own count at the tier and speed the request asked
// for.
func (x *Exchange) withOptimizer(u gw.Usage) gw.Usage {
	if (x.Optimized || x.in.KeptDirective) && u.Reported {
		u.OptimizerTokens = min(x.optTokens+x.canaryTokens(), u.PromptTokens())
	}
	if x.cur >= 0 && x.cur < len(x.cands) {
		p := x.cands[x.cur].plan
		if u.Reported {
			u.Hosted = p.Bill(u.Hosted)
		} else if u.Hosted == (gw.Hosted{}) {
			// Billed from the gateway's own count (no usage, an
			// over-size answer): at the tier and speed the request asked
			// for; hosted-tool calls nobody reported are not guessed.
			u.Hosted = gw.Hosted{ServiceTier: p.Hold.ServiceTier, Fast: p.Hold.Fast}
		}
	}
	return u
}

// Finish records the request's outcome: on success it settles the hold at
// the exact charge (durably, before returning), otherwise it releases
// the hold. It runs even if ctx is cancelled (an abandoned stream is still
// billed) and returns the charge. Calling it twice does nothing.
func (x *Exchange) Finish(ctx context.Context, o Outcome) (gw.Money, error) {
	if x.finished {
		return 0, nil
	}
	x.finished = true
	if x.cancel != nil {
		defer x.cancel()
	}
	defer x.g.leases.done(x.in.RequestID)
	g, in := x.g, &x.in
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()

	o.Usage = x.withOptimizer(o.Usage)
	r := x.record(o)
	x.rec = r
	defer x.settleRun(wctx, r)
	if g.cfg.Observe != nil {
		defer g.cfg.Observe(r)
	}
	if g.cfg.Tracer != nil {
		defer x.traceFinish(r, o.Err)
		parent := x.traceCtx
		if parent == nil {
			parent = ctx
		}
		_, sspan := g.span(parent, "settle", false)
		defer sspan.End()
	}
	if !o.Success {
		if o.Err != nil && o.Usage.TotalTokens() > 0 && g.cfg.Biller != nil {
			// A vendor that failed after producing tokens (a stream cut
			// mid-way) may bill them: the operator's cost, recorded with
			// no charge to the caller.
			if q, err := x.Quote(o.Usage); err == nil {
				r.Cost = q.Cost
				r.Note = joinNote(r.Note, NoteOperatorCost)
			}
		}
		return 0, x.release(wctx, r)
	}
	b := x.boundUsage(o.Usage)
	o.Usage, r.Usage = b.priced, b.recorded
	if b.clamped || o.Usage.Clamped {
		r.UsageClamped = true
		r.Note = joinNote(r.Note, NoteUsageClamped)
	}
	if b.note != "" {
		r.DisputedCost = b.disputed
		r.Note = joinNote(r.Note, b.note)
	}
	if o.Usage.CostUnreadable() {
		r.Note = joinNote(r.Note, NoteCostMalformed)
	}
	r.Note = joinNote(r.Note, reportedCostNote(r.Usage))
	q, err := x.Quote(o.Usage)
	if err != nil {
		// No price (an aggregator answer without its cost, for a model
		// it lists no price for): the request is recorded with the
		// quote's charge (none) and a note, loudly, never silently.
		g.cfg.Logger.Error("price request", "request_id", in.RequestID, "vendor", in.Vendor, "model", in.Model, "err", err)
		if q.Note == "" {
			q.Note = "cost_missing"
		}
	}
	// A charge above the hold is settled in full when the balance covers
	// it: the store debits at most the hold plus the available balance
	// and records the rest as the operator's loss (never an overdraft).
	r.Cost, r.Charge, r.DirectiveShare = q.Cost, q.Charge, q.DirectiveShare
	r.Note = joinNote(r.Note, q.Note)
	if x.holdLost {
		r.Note = joinNote(r.Note, NoteHoldExpired)
	}
	if g.cfg.Limiter != nil {
		if delta := o.Usage.TotalTokens() - x.estTokens; delta != 0 && o.Usage.Reported {
			if err := g.cfg.Limiter.Adjust(wctx, in.Principal.KeyID, g.limitFor(in.Principal), delta); err != nil {
				g.cfg.Logger.Warn("rate limiter adjust", "request_id", in.RequestID, "err", err)
			}
		}
	}
	if s, ok := g.cfg.Optimizer.(servedNoter); ok && !x.tool && o.Status == 200 {
		s.Succeeded(in.Vendor, in.Model)
	}
	if !x.holdPlaced {
		return r.Charge, g.cfg.Store.Log(wctx, r)
	}
	err = g.cfg.Store.Settle(wctx, in.RequestID, r)
	if errors.Is(err, gw.ErrNotFound) {
		// The hold outlived HoldTTL and was swept; the request still
		// happened, so charge it through a fresh zero hold: the store
		// debits at most what the balance covers now, the rest is the
		// operator's loss.
		if !x.holdLost {
			r.Note = joinNote(r.Note, NoteHoldExpired)
		}
		if err = g.cfg.Store.PlaceHold(wctx, gw.Hold{ID: in.RequestID, AccountID: in.Principal.AccountID, KeyID: in.Principal.KeyID, ExpiresAt: g.cfg.Now().Add(time.Minute),
			At: in.Received, KeyBudget: in.Principal.KeyBudget, AccountBudget: in.Principal.AccountBudget}); err == nil {
			err = g.cfg.Store.Settle(wctx, in.RequestID, r)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("settle %s: %w", in.RequestID, err)
	}
	return r.Charge, nil
}

// NoteUsageClamped marks a record whose vendor-reported usage was beyond
// what the request allowed (output above its limit, cache reads above
// the prompt): the usage was clamped. Metrics count it.
const NoteUsageClamped = "usage_clamped"

// NoteCostMalformed marks a record whose vendor sent a cost figure the
// gateway could not read as an amount: priced from the price list.
const NoteCostMalformed = "cost_malformed"

// NoteOperatorCost marks a failed request whose vendor may have billed
// what it produced before failing (a stream cut after tokens): its Cost
// is the operator's, its Charge zero.
const NoteOperatorCost = "operator_cost"

// NoteDirectiveInThread marks a thread continue whose vendor-kept system
// prompt holds the directive (added at the thread's create): billed by
// the vendor, not charged.
const NoteDirectiveInThread = "directive_in_thread"

// NoteHoldExpired marks a record whose hold expired before its settle
// (the request outlived it without renewals: a stalled process).
const NoteHoldExpired = "hold_expired"

// NoteCountTokens marks the record of a token count (count_tokens,
// input_tokens) that the guard blocked or flagged: never billed.
const NoteCountTokens = "count_tokens"

// ClampUsage bounds vendor-reported usage by what the request allowed:
// output (reasoning included) at most outputBound when it is positive,
// reasoning at most output. It reports whether anything changed.
func ClampUsage(u gw.Usage, outputBound int64) (gw.Usage, bool) {
	changed := false
	if outputBound > 0 && u.OutputTokens > outputBound {
		u.OutputTokens, changed = outputBound, true
	}
	if u.ReasoningTokens > u.OutputTokens {
		u.ReasoningTokens, changed = u.OutputTokens, true
	}
	return u, changed
}

// ClampPrompt bounds the prompt buckets by the model's context window
// (bound, 0: unknown): no bucket above it, and their sum at most it, the
// excess taken off the dearest buckets first (1-hour writes, 5-minute
// writes, plain input, cache reads). It reports whether anything changed.
func ClampPrompt(u gw.Usage, bound int64) (gw.Usage, bool) {
	if bound <= 0 {
		return u, false
	}
	changed := false
	bs := []*int64{&u.CacheWrite1hTokens, &u.CacheWrite5mTokens, &u.InputTokens, &u.CacheReadTokens}
	for _, b := range bs {
		if *b > bound {
			*b, changed = bound, true
		}
	}
	for _, b := range bs {
		excess := u.PromptTokens() - bound
		if excess <= 0 {
			break
		}
		take := min(excess, *b)
		*b -= take
		changed = true
	}
	return u, changed
}

func (g *Gateway) limitFor(p *gw.Principal) gw.Limit {
	lim := g.cfg.DefaultLimit
	if p.RPM > 0 {
		lim.RPM = p.RPM
	}
	if p.TPM > 0 {
		lim.TPM = p.TPM
	}
	return lim
}

// finishErr records a request refused in Begin or before it. A refused
// request still counts against the key's requests per minute (zero
// tokens), so that bad requests cannot be sent faster than good ones.
func (x *Exchange) finishErr(ctx context.Context, err error) {
	if g := x.g; g.cfg.Limiter != nil && !x.limited && x.in.Principal != nil {
		x.limited = true
		if _, lerr := g.cfg.Limiter.Allow(ctx, x.in.Principal.KeyID, g.limitFor(x.in.Principal), 0); lerr != nil {
			g.cfg.Logger.Warn("rate limiter: count a refused request", "request_id", x.in.RequestID, "err", lerr)
		}
	}
	e := gw.AsError(err)
	if p := x.in.Principal; p != nil && !x.holdPlaced {
		own, flush := x.g.refused(p.KeyID, p.AccountID, e.Code, e.Code.Status(), x.g.cfg.Now())
		x.g.writeAggregates(context.WithoutCancel(ctx), flush)
		if !own {
			// Past the key's refusals a minute: counted into the
			// minute's aggregate record, no row of its own (metrics
			// still see it).
			x.finished = true
			r := x.record(Outcome{Status: e.Code.Status(), Err: e})
			x.rec = r
			if x.g.cfg.Tracer != nil {
				x.traceFinish(r, e)
			}
			if o := x.g.cfg.Observe; o != nil {
				o(r)
			}
			return
		}
	}
	_, ferr := x.Finish(ctx, Outcome{Status: e.Code.Status(), Err: e})
	if ferr != nil {
		x.g.cfg.Logger.Error("record refused request", "request_id", x.in.RequestID, "err", ferr)
	}
}

func (x *Exchange) release(ctx context.Context, r *gw.Record) error {
	if x.holdPlaced {
		if err := x.g.cfg.Store.Release(ctx, x.in.RequestID, r); err != nil {
			return fmt.Errorf("release %s: %w", x.in.RequestID, err)
		}
		return nil
	}
	if x.in.Principal == nil {
		return nil
	}
	return x.g.cfg.Store.Log(ctx, r)
}

func (x *Exchange) record(o Outcome) *gw.Record {
	in := &x.in
	r := &gw.Record{
		RequestID: in.RequestID,
		Endpoint:  in.Endpoint,
		Vendor:    in.Vendor,
		Model:     in.Model,
		Stream:    in.Stream,
		Status:    o.Status,
		Usage:     o.Usage,
		TTFB:      o.TTFB,
		Guard:     x.Guard,
		Note:      o.Note,
		CreatedAt: in.Received,

		VendorResponseID: o.VendorResponseID,
	}
	if len(x.attempts) > 0 {
		r.Attempts = x.attempts
		parts := make([]string, len(x.attempts))
		for i, a := range x.attempts {
			parts[i] = a.String()
		}
		r.Note = joinNote(r.Note, "attempts: "+strings.Join(parts, ", "))
	}
	if x.Optimized {
		// The directive's version, next to its tokens
		// (Usage.OptimizerTokens).
		_, note := x.g.cfg.Optimizer.Describe(true)
		r.Note = joinNote(r.Note, note)
	} else if x.in.KeptDirective {
		r.Note = joinNote(r.Note, NoteDirectiveInThread)
	}
	if x.count {
		r.Note = joinNote(r.Note, NoteCountTokens)
	}
	if in.Principal != nil {
		r.AccountID, r.KeyID = in.Principal.AccountID, in.Principal.KeyID
	}
	if o.Err != nil {
		r.ErrorCode = gw.ErrorCode(o.Err)
	}
	if !in.Received.IsZero() {
		r.Latency = x.g.cfg.Now().Sub(in.Received)
	}
	return r
}

// Record is the request's record once Finish has run (its usage, cost
// and charge), nil before; the caller must not change it.
func (x *Exchange) Record() *gw.Record {
	if x == nil {
		return nil
	}
	return x.rec
}

// traceFinish ends the vendor call's span and gives the request's span
// its GenAI and gateway attributes from the record.
func (x *Exchange) traceFinish(r *gw.Record, err error) {
	if x.vendorSpan != nil {
		x.vendorSpan.SetAttributes(usageAttrs(r)...)
		if err != nil {
			x.vendorSpan.Fail(err)
		}
		x.vendorSpan.End()
	}
	root := x.in.Span
	if root == nil {
		return
	}
	if x.in.Vendor != "" && !x.tool {
		root.SetName(Operation + " " + x.in.Vendor + "/" + x.in.Model)
		root.SetAttributes(x.vendorAttrs()...)
	}
	root.SetAttributes(usageAttrs(r)...)
	root.SetAttributes(
		Attr{AttrCost, r.Cost.USDString()},
		Attr{AttrCharge, r.Charge.USDString()},
		Attr{AttrChargeCents, r.Charge.CentsString()},
		Attr{AttrGuard, guardText(r.Guard)},
		Attr{AttrAttempts, int64(x.calls())},
		Attr{AttrRequestID, r.RequestID},
		Attr{AttrAccountID, r.AccountID},
		Attr{AttrKeyID, r.KeyID},
		Attr{AttrStatus, int64(r.Status)},
	)
	if err != nil {
		root.Fail(err)
	}
}

// guardText is a record's guard verdict, "not_run" for a request refused
// before the guard ran.
func guardText(g string) string {
	if g == "" {
		return "not_run"
	}
	return g
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// Refuse records a request refused before Begin could run (a malformed
// body, a model name without a known prefix).
func (g *Gateway) Refuse(ctx context.Context, in Inbound, err error) {
	x := &Exchange{g: g, in: in}
	x.finishErr(ctx, err)
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
