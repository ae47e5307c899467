package proxy

import (
	"context"
	"errors"
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Inbound is a parsed, authenticated request.
type Inbound struct {
	RequestID string
	Endpoint  gw.Shape
	Principal *gw.Principal
	Vendor    string // the prefix
	Model     string // the vendor's model id
	Stream    bool
	// Body is the caller's body. For a mapped route (the vendor's shape
	// differs from Endpoint) Canonical holds it decoded.
	Body      []byte
	Canonical *gw.Request
	// Members are Body's top-level members (rawjson.Members) when they
	// are known already; whoever changes Body sets them again, or goes
	// through SetBody, which drops them.
	// Nil: Begin scans Body once and sets them, for the request's later
	// readers.
	Members []rawjson.Member
	// Messages is the elements of the messages array of Body
	// (rawjson.Elements of its value: offsets into the value, which
	// edits of other members leave as they are) when known, else nil
	// (also for an empty array).
	// The stages that read the messages' elements take them from here
	// instead of scanning the array; whoever changes the messages sets
	// them again or to nil.
	Messages []rawjson.Span
	// MaxOutput is the caller's output cap, 0 when it gave none.
	MaxOutput int64
	// ExtraInputBytes is input the vendor gets beyond Body (a kept
	// thread's earlier turns), counted in the hold and the token estimate.
	ExtraInputBytes int
	// KeptDirective says the vendor keeps the optimizer's directive from
	// an earlier request (the system prompt of a native thread created
	// with it) and bills it in this request's prompt: its tokens are taken
	// off the charge as if it had been sent now.
	KeptDirective bool
	// Text is the body's text by source, as validation read it (the
	// guard scores it); nil: the guard reads Body itself.
	Text []gw.Text
	// Header holds the caller's headers; providers forward only their own.
	Header http.Header
	// Received is when the request arrived.
	Received time.Time
	// Fallbacks are the models tried in order when Vendor/Model (and then
	// each earlier one) fails before any byte reached the caller: the
	// caller's "models" list, an operator route's other members. Empty:
	// none (retries within the vendor still happen).
	Fallbacks []Target
	// CallerModels is how many models the caller's own "models" list
	// named: with the model, more than the attempt cap is refused.
	CallerModels int
	// MaxAttempts is the operator route's own cap on vendor calls (0:
	// Config.MaxAttempts).
	MaxAttempts int
	// Span is the request's own span (Gateway.StartRequest); Finish
	// gives it the GenAI and gateway attributes. Nil: none.
	Span Span
	// BodyTokens is the server's prompt estimate of Body, made before
	// Body was let go (Exchange.LetGo): what its estimates read then.
	BodyTokens int64
	// Run names the request's run (runs.Parse): its step is held on the
	// run beside the hold on the balance. Zero: none.
	Run gw.RunRef
}

// SetBody replaces the body. The spans found in the old one (Members,
// Messages) go with it unless b is the same bytes: Begin then scans the
// new body once.
func (in *Inbound) SetBody(b []byte) {
	if len(b) != len(in.Body) || len(b) > 0 && &b[0] != &in.Body[0] {
		in.Members, in.Messages = nil, nil
	}
	in.Body = b
}

// Target is one model to try: the vendor prefix and the vendor's model id.
type Target struct{ Vendor, Model string }

// String is the prefixed model id.
func (t Target) String() string { return t.Vendor + "/" + t.Model }

// candidate is one model a request may be served by, prepared in Begin.
type candidate struct {
	Target
	provider gw.Provider
	native   bool
	body     []byte
	// obj is body with its members when known; ed, while prepare makes
	// the body, its edit not yet written to body (see edit, flush).
	obj         *rawjson.Object
	ed          *rawjson.Editor
	hideUsage   bool
	optimized   bool
	outputBound int64
	imposed     int64
	// skip is why the candidate is passed over ("" when usable), err the
	// error it would have answered.
	skip string
	err  error
	// bodyShape is the shape of body: the endpoint's on a native route,
	// else the vendor's own.
	bodyShape gw.Shape
	// strippedTools are the hosted tools left out of body (their types).
	strippedTools []string
	// marks are what billable.ScanMarks found in marked (the body they
	// were read from, when it still is body: see bodyMarks).
	marks  billable.Marks
	marked []byte
	// plan is what body's billable features mean for the hold and the
	// bill (service tier, fast mode, hosted tools and their limits).
	plan billable.Plan
}

// Exchange is one request's trip through the policies.
type Exchange struct {
	g        *Gateway
	in       Inbound
	provider gw.Provider
	native   bool
	// cands are the models the request may be served by, the first the
	// caller's model; cur is the one in use (the one that served once
	// Call returned). attempts are what Call tried.
	cands    []*candidate
	cur      int
	attempts []gw.Attempt

	// Body is what goes to the vendor; HideUsage says the relay must hold
	// the usage-only chunk back (the gateway asked for it, not the caller).
	Body      []byte
	HideUsage bool
	// bodyObj is Body with its members.
	bodyObj *rawjson.Object
	// obj is the caller's body with its members (callerObject), read
	// once (objRead).
	obj     *rawjson.Object
	objRead bool
	// Limit is the rate-limit decision (for the x-ratelimit headers);
	// zero when no limiter ran.
	Limit gw.LimitDecision
	// Guard is the verdict's summary for the record: "off" when the
	// gateway runs no guard, "" when the request was refused before the
	// guard ran.
	Guard string
	// Optimized says the optimizer's directive is in Body.
	Optimized bool

	// optTokens is the directive's token count, set by Call.
	optTokens int64
	// vendorSpan is the vendor call's span, from Call to Finish;
	// traceCtx carries the request's span (Begin's context), the parent
	// of settle's.
	vendorSpan Span
	traceCtx   context.Context
	// rec is the record Finish wrote.
	rec *gw.Record
	// called says Call ran (the vendor calls it made: Tries).
	called bool

	estTokens  int64
	limited    bool // the request was counted against the key's limits
	holdPlaced bool
	// count marks a token count screened by the guard (Screen): its
	// record says NoteCountTokens.
	count bool
	// tool marks a tool call (BeginTool): priced at price, not by the
	// rate card.
	tool  bool
	price gw.Money
	// embed marks an embeddings request (BeginEmbed): priced per input
	// token, its usage bounded by embedBound input tokens.
	embed      bool
	embedBound int64
	// hold is the amount held; outputBound the most output tokens the
	// vendor may bill for this body (0: unbounded). Usage above it is
	// clamped and a charge above the hold is capped at it.
	hold        gw.Money
	outputBound int64
	// ImposedMaxOutput is the output limit the gateway set on the vendor
	// request because the balance could not cover the model's maximum
	// (0: none); the server reports it in a response header.
	ImposedMaxOutput int64
	cancel           context.CancelFunc
	finished         bool
	// renewAt is when KeepAlive next renews the hold; holdLost says a
	// renewal found it already expired (its money may be spent).
	renewAt  time.Time
	holdLost bool
	// letGo says LetGo ran: bound is the dispute's prompt bound of the
	// body sent (without hosted-tool calls), computed before Body went.
	letGo bool
	// protect is the caller's system content the answer must not carry
	// (answer.go), kept from the guard's text.
	protect []string
	// open is the caller's other text (references), read for the runs
	// it shares with protect only once an answer matches; exempt is
	// protect without them, computed then (answerlazy.go).
	open     []string
	exempt   []string
	exempted bool
	bound    int64
	// runHeld says the request holds a step of its run (Inbound.Run);
	// run is the run as its last step left it (see run.go).
	runHeld bool
	run     *gw.Run
	// canary is the request's random marker in the directive, "" when
	// none (answer.go).
	canary string
}

// OptimizeHeader is the x-gateway-optimize response value: "applied;
// v=N" or "off".
func (x *Exchange) OptimizeHeader() string {
	if x.g.cfg.Optimizer == nil {
		return "off"
	}
	h, _ := x.g.cfg.Optimizer.Describe(x.Optimized)
	return h
}

// Native reports whether the vendor speaks the endpoint's shape (the
// response is relayed byte for byte).
func (x *Exchange) Native() bool { return x.native }

// Provider returns the vendor adapter.
func (x *Exchange) Provider() gw.Provider { return x.provider }

// BodyShape is the shape of the vendor body: the endpoint's on a native
// route (OpenAI's Responses API beside its Chat Completions), else the
// vendor's own.
func (x *Exchange) BodyShape() gw.Shape {
	if x.native {
		return x.in.Endpoint
	}
	return x.provider.Shape()
}

// Inbound returns the request.
func (x *Exchange) Inbound() *Inbound { return &x.in }

// Begin routes and admits a request. It always returns an Exchange (its
// Limit fills the rate-limit headers even on refusal) and, when the
// request may not proceed, an *gw.Error: vendor_unavailable,
// invalid_request (unpriced model, unmappable field), rate_limited,
// insufficient_balance or internal_error. A refused request is logged.
func (g *Gateway) Begin(ctx context.Context, in Inbound) (*Exchange, error) {
	x := &Exchange{g: g, in: in}
	if g.cfg.Tracer != nil {
		x.traceCtx = ctx
	}
	if in.Run.ID != "" && in.Span != nil {
		in.Span.SetAttributes(Attr{AttrConversationID, in.Run.ID})
	}
	if err := x.begin(ctx); err != nil {
		// Refused: the directive never reaches the vendor.
		x.Optimized = false
		x.finishErr(ctx, err)
		return x, err
	}
	return x, nil
}

func (x *Exchange) begin(ctx context.Context) error {
	g, in := x.g, &x.in
	if err := g.admitted(in.Principal, g.cfg.Now()); err != nil {
		return err
	}
	if n, most := in.CallerModels+1, g.maxAttempts(in); in.CallerModels > 0 && n > most {
		e := gw.Errorf(gw.CodeInvalidRequest, "the request names %d models (model and models); this gateway makes at most %d vendor calls per request, so models may name at most %d", n, most, most-1)
		e.NoRetry = true
		return e
	}
	targets := append([]Target{{in.Vendor, in.Model}}, in.Fallbacks...)
	x.cur = -1
	for _, t := range targets {
		c := &candidate{Target: t}
		if err := x.prepare(c, len(targets) > 1); err != nil {
			// Never sent: no body, nor an edit holding the caller's.
			c.body, c.obj, c.ed = nil, nil, nil
			if len(targets) == 1 {
				return err
			}
			c.err, c.skip = err, skipReason(err)
		} else if x.cur < 0 {
			x.cur = len(x.cands)
		}
		x.cands = append(x.cands, c)
	}
	if x.cur < 0 {
		// No model can take the request: the caller's own model's
		// refusal, as without fallbacks.
		return x.cands[0].err
	}
	x.use(x.cur)

	x.estTokens = int64((len(in.Body)+in.ExtraInputBytes)/4) + min(in.MaxOutput, maxEstimate)
	if err := x.allowLimits(ctx); err != nil {
		return err
	}

	if g.cfg.Biller != nil {
		if err := x.placeHold(ctx); err != nil {
			return err
		}
	}
	return nil
}

// allowLimits counts the request (x.estTokens tokens) against its key's
// rate limits (RPM, TPM): rate_limited when past them.
func (x *Exchange) allowLimits(ctx context.Context) error {
	g, in := x.g, &x.in
	if g.cfg.Limiter != nil {
		d, err := g.cfg.Limiter.Allow(ctx, in.Principal.KeyID, g.limitFor(in.Principal), x.estTokens)
		x.Limit, x.limited = d, true
		if err != nil {
			// The limiter's store failed; its decision already applies
			// the configured fail mode.
			g.cfg.Logger.Error("rate limiter failed", "request_id", in.RequestID, "err", err, "allowed", d.Allowed)
			if !d.Allowed {
				var e *gw.Error
				if errors.As(err, &e) {
					return e
				}
				return &gw.Error{Code: gw.CodeOverloaded, Message: "rate limits cannot be checked right now; retry", RetryAfter: time.Second, Err: err}
			}
		}
		if !d.Allowed {
			ra := max(d.RetryAfter, time.Second)
			return &gw.Error{Code: gw.CodeRateLimited, Message: "rate limit reached for this API key; retry after the time in Retry-After", RetryAfter: ra}
		}
	}
	return nil
}

// use makes candidate i the one in use.
func (x *Exchange) use(i int) {
	c := x.cands[i]
	x.cur = i
	x.provider, x.native = c.provider, c.native
	x.Body, x.bodyObj, x.HideUsage, x.Optimized = c.body, c.obj, c.hideUsage, c.optimized
	x.outputBound, x.ImposedMaxOutput = c.outputBound, c.imposed
	x.in.Vendor, x.in.Model = c.Vendor, c.Model
}

// StrippedTools returns the types of the hosted tools left out of the
// serving vendor's request because the rate card cannot price them (a
// native Responses request; the mapped routes drop hosted tools in the
// mapping).
func (x *Exchange) StrippedTools() []string {
	if x.cur < 0 || x.cur >= len(x.cands) {
		return nil
	}
	return x.cands[x.cur].strippedTools
}

// Attempts returns the models tried (and skipped) by Call, in order;
// nil for a request without fallbacks served at its first try.
func (x *Exchange) Attempts() []gw.Attempt { return x.attempts }

// calls is the number of vendor calls made: 0 before Call.
func (x *Exchange) calls() int {
	if !x.called {
		return 0
	}
	return x.Tries()
}

// Tries is the number of vendor calls Call made (at least 1 once it
// ran; retries within a vendor are not counted).
func (x *Exchange) Tries() int {
	n := 0
	for _, a := range x.attempts {
		if a.Skipped == "" {
			n++
		}
	}
	return max(n, 1)
}

// LetGo drops what the rest of a stream no longer reads once the vendor
// has answered (Call returned its answer): the guard's text (its verdict
// is final), every candidate's vendor body (the dispute's prompt bound
// is taken from the body sent first) and the canonical form. A stream of
// an agent's turn would otherwise hold copies of a large body for its
// whole life. Finish works as before. Calling it twice does nothing.
func (x *Exchange) LetGo() {
	if x.letGo {
		return
	}
	x.letGo = true
	if x.g.cfg.Biller != nil {
		// Only a priced request's usage is disputed.
		x.bound = x.bodyBound(false)
	}
	x.Body, x.bodyObj = nil, nil
	for _, c := range x.cands {
		c.body, c.obj, c.marked = nil, nil, nil
	}
	x.in.Text, x.in.Canonical = nil, nil
}

// LetGoBody drops the caller's body (Inbound.Body) once Begin has made
// the vendor bodies from it: the proxy reads it again only for a guard
// that reads the body itself (no Inbound.Text), and then it is kept
// until Call. The caller reads what it still needs of the body first
// (Inbound.BodyTokens).
func (x *Exchange) LetGoBody() {
	if x.in.Text == nil && x.g.cfg.Guard != nil && !x.called {
		return
	}
	x.in.Body, x.in.Members, x.in.Messages, x.obj = nil, nil, nil, nil
}

// promptBound is billable.PromptBound of the body sent, hostedCalls
// saying the answer used hosted tools.
func (x *Exchange) promptBound(hostedCalls bool) int64 {
	if x.letGo {
		if hostedCalls {
			return 0
		}
		return x.bound
	}
	return x.bodyBound(hostedCalls)
}

// bodyBound is billable.PromptBound of Body, from the marks the hold read
// in it when it did.
func (x *Exchange) bodyBound(hostedCalls bool) int64 {
	if x.cur >= 0 && x.cur < len(x.cands) {
		if c := x.cands[x.cur]; c.marked != nil && sameBytes(c.marked, x.Body) {
			return c.marks.PromptBound(x.in.ExtraInputBytes, hostedCalls)
		}
	}
	return billable.PromptBound(x.Body, x.in.ExtraInputBytes, hostedCalls)
}

// bodyMarks are billable.ScanMarks of c's vendor body, read once per
// body.
func (c *candidate) bodyMarks() billable.Marks {
	if c.marked == nil || !sameBytes(c.marked, c.body) {
		c.marks, c.marked = billable.ScanMarks(c.body), c.body
	}
	return c.marks
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}
