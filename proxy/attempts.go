package proxy

import (
	"context"

	gw "github.com/gwlabs/gateway"
)

// closedChan is a closed channel: a wait that is already over.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Call sends the request to the vendor once the guard's first stage has
// judged it, and returns only when the vendor and any second stage are
// done: the vendor's answer is never released before the verdict. A
// request the first stage blocks is never sent; one the second stage
// blocks has its vendor call cancelled. A block returns request_blocked
// with an incident id (the incident is stored); Finish must still be
// called. The returned body belongs to the caller, and ctx's
// cancellation (the caller going away) aborts a stream; a non-streaming
// call runs to its end so that it can be billed.
func (x *Exchange) Call(ctx context.Context) (*gw.Upstream, error) {
	x.keepProtected()
	gctx, gspan := x.g.span(ctx, "guard", false)
	defer func() { gspan.End() }()
	v, second, err := x.firstStage(gctx)
	if v, blocked := x.judge(ctx, v, err); blocked {
		gspan.SetAttributes(Attr{AttrGuard, x.Guard})
		return nil, x.block(ctx, v)
	}
	if second == nil {
		gspan.SetAttributes(Attr{AttrGuard, x.Guard})
		gspan.End()
		// The verdict is final: nothing reads the guard's text again.
		x.in.Text = nil
	}
	parent := ctx
	if !x.in.Stream {
		// A non-streaming answer is paid for upstream once the vendor
		// works on it: the call is not cut when the caller leaves, so
		// that its usage can be read and billed (the vendor's own
		// timeouts still bound it, and Finish or a block cancels it).
		parent = context.WithoutCancel(ctx)
	}
	vctx, cancel := context.WithCancel(parent)
	x.cancel = cancel
	vctx, x.vendorSpan = x.g.span(vctx, Operation+" "+x.in.Model, true)
	if x.g.cfg.Tracer != nil {
		x.vendorSpan.SetAttributes(x.vendorAttrs()...)
	}
	x.called = true

	first := x.cur
	var r tried
	if second == nil {
		// The verdict is in: the call runs on this goroutine (no
		// goroutine, and no stack to grow, per request), the count of a
		// directive beside it only when the count is not cached.
		counted := x.countOptimizer(ctx)
		r = x.try(vctx)
		<-counted
	} else {
		done := make(chan tried, 1)
		go func() { done <- x.try(vctx) }()
		counted := x.countOptimizer(ctx)
		v, blocked := x.secondStage(gctx, second)
		gspan.SetAttributes(Attr{AttrGuard, x.Guard})
		gspan.End()
		if blocked {
			cancel()
			if r := <-done; r.up != nil {
				_ = r.up.Body.Close()
			}
			<-counted
			return nil, x.block(ctx, v)
		}
		r = <-done
		<-counted
		x.in.Text = nil
	}
	x.attempts = r.attempts
	x.use(r.served)
	if x.cur != first && x.Optimized {
		// Served by a fallback: its directive's count (cached per model).
		<-x.countOptimizer(ctx)
	}
	return r.up, r.err
}

// countOptimizer counts the directive's tokens for the model in use,
// beside the vendor call; the channel closes when done.
func (x *Exchange) countOptimizer(ctx context.Context) <-chan struct{} {
	// A directive kept in a vendor-held thread is counted too: the
	// vendor bills it in this prompt.
	if !x.Optimized && !(x.in.KeptDirective && x.g.cfg.Optimizer != nil) {
		return closedChan
	}
	vendor, model := x.in.Vendor, x.in.Model
	if n, ok := x.cachedTokens(vendor, model); ok {
		x.optTokens = n
		return closedChan
	}
	counted := make(chan struct{})
	count := x.tokensFunc(vendor, model)
	go func() {
		defer close(counted)
		x.optTokens = count(ctx)
	}()
	return counted
}

// tried is the outcome of the attempts: the answer (or the last error),
// the candidate that gave it, and every attempt when there were several.
type tried struct {
	up       *gw.Upstream
	err      error
	served   int
	attempts []gw.Attempt
}

// maxAttempts is the cap on vendor calls for in.
func (g *Gateway) maxAttempts(in *Inbound) int {
	if in.MaxAttempts > 0 {
		return in.MaxAttempts
	}
	return g.cfg.MaxAttempts
}

// try calls the candidates in order, from the one in use, until one
// answers: a failure that another vendor may not have (rate limited,
// overloaded, a broken or silent connection, an open breaker, an unknown
// model, a vendor without a key) moves to the next; any other error, or
// the caller going away, ends the request. It touches no field of x
// (the guard runs beside it).
func (x *Exchange) try(ctx context.Context) tried {
	in := &x.in
	var r tried
	r.served = x.cur
	multi := len(x.cands) > 1
	// One budget for every vendor call of the request (retries within a
	// vendor and fallbacks together), and the account the calls are
	// made for (the vendor client's breakers count by account).
	bud := gw.NewAttemptBudget(x.g.maxAttempts(in), x.g.cfg.AttemptTimeout, nil)
	scope := gw.CallScope{Budget: bud}
	if in.Principal != nil {
		scope.Account = in.Principal.AccountID
	}
	ctx = gw.WithCallScope(ctx, scope)
	for i := x.cur; i < len(x.cands); i++ {
		c := x.cands[i]
		if i > x.cur && c.skip == "" && !bud.CanTake(0) {
			if multi {
				r.attempts = append(r.attempts, gw.Attempt{Vendor: c.Vendor, Model: c.Model, Skipped: "the request's vendor attempts are spent"})
			}
			continue
		}
		if c.skip != "" {
			if multi {
				r.attempts = append(r.attempts, gw.Attempt{Vendor: c.Vendor, Model: c.Model, Skipped: c.skip})
			}
			continue
		}
		call := &gw.Call{RequestID: in.RequestID, Model: c.Model, Stream: in.Stream, Body: c.body, Header: in.Header, Received: in.Received}
		if c.bodyShape != c.provider.Shape() {
			call.Endpoint = c.bodyShape
		}
		start := x.g.cfg.Now()
		r.up, r.err = c.provider.Send(ctx, call)
		r.served = i
		a := gw.Attempt{Vendor: c.Vendor, Model: c.Model, Duration: x.g.cfg.Now().Sub(start)}
		if r.err != nil {
			a.Error = gw.ErrorCode(r.err)
		}
		r.attempts = append(r.attempts, a)
		if r.err == nil || ctx.Err() != nil || !fallOver(r.err) {
			break
		}
	}
	if !multi {
		r.attempts = nil
	}
	return r
}

// fallOver reports whether a vendor's failure sends the request on to
// the next model: the vendor failed, not the request.
func fallOver(err error) bool {
	switch gw.ErrorCode(err) {
	case gw.CodeRateLimited, gw.CodeOverloaded, gw.CodeUpstream, gw.CodeUpstreamTimeout, gw.CodeVendorUnavailable, gw.CodeNotFound:
		return true
	}
	return false
}
