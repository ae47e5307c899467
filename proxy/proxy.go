// Package proxy runs one request through the gateway's policies, in this
// order: authenticate (Authenticate), then Begin: refuse a key or account
// in a guard cool-down (Cooldown), route to the vendor,
// refuse unpriced models, prepare the vendor body (pass-through patch or
// canonical mapping, then the account's prompt-cache key where the vendor
// takes one, then the optimizer's directive unless it is off globally, for
// the key or by the request's x-gateway-optimize header), count the
// request against the key's rate limit, and place a hold on the account's
// balance; then Call: the guard's first stage judges the request before
// the vendor is sent anything (a blocked request never reaches it), then
// the body is sent while a grey score's second stage judges it (and the
// directive's tokens are counted), releasing nothing before the verdict;
// then Finish: price the usage (the
// directive's tokens set as Usage.OptimizerTokens, not billed), settle the
// hold at the exact charge (or release it), and write the request's
// record.
//
// It knows no HTTP server, vendor wire format or database: those arrive as
// the gw interfaces (Provider, Codec, Store, Limiter) and the small Guard
// and Biller interfaces below. The server package does the wire work
// around it.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/outlimit"
)

// Verdict is the guard's answer for one request.
type Verdict struct {
	Flagged bool
	Kind    string
	Score   float64
	Reason  string
	Excerpt string // a bounded excerpt of the flagged text, for review
	// Monitor: the caller's policy records a flagged request as an
	// incident and lets it through.
	Monitor bool
	// Text is the flagged text (bounded) and TextHash the hash of its
	// normalised form, kept with the incident for review: a reviewed
	// false positive puts the hash on the account's allow list.
	Text     string
	TextHash [32]byte
	// Note, when set, is the record's guard summary for a request that
	// goes through ("grey", "allowed", "off", ...), else "pass".
	Note string
	// ThirdParty says the flagged text is not the caller's own: its
	// source is neither user, assistant nor system text (a tool result,
	// a document, a tool description, MCP output). Such a block does not
	// count toward the cool-down.
	ThirdParty bool
}

// PrincipalGuard is a Guard that applies the caller's own policy (per
// key and account); the proxy prefers it when the Guard implements it.
type PrincipalGuard interface {
	CheckFor(ctx context.Context, p *gw.Principal, shape gw.Shape, body []byte) (Verdict, error)
}

// Guard checks a request body of the given shape. It must be safe for
// concurrent use and fast (it runs beside every vendor call).
type Guard interface {
	Check(ctx context.Context, shape gw.Shape, body []byte) (Verdict, error)
}

// TextGuard is a Guard that can score the text the server already read
// from the body (Inbound.Text), so that the body is parsed once per
// request, under the caller's own policy (p may be nil: the default).
// When Inbound.Text is nil the proxy calls CheckFor or Check instead.
type TextGuard interface {
	Guard
	CheckText(ctx context.Context, p *gw.Principal, text []gw.Text) (Verdict, error)
}

// StagedGuard is a TextGuard whose check has two stages. The first
// (CheckFirst: microseconds to milliseconds, linear in the text) runs
// before the vendor is sent anything, so a request it blocks never
// reaches the vendor; when it leaves the request to a second stage (a
// grey score, judged by a slower classifier), it returns that stage as
// second, which the proxy runs concurrently with the vendor call, still
// releasing nothing of the answer before its verdict. second is nil when
// the first verdict is final.
type StagedGuard interface {
	CheckFirst(ctx context.Context, p *gw.Principal, text []gw.Text) (v Verdict, second func(context.Context) (Verdict, error), err error)
}

// Quote is a priced request.
type Quote struct {
	// Cost is the vendor's cost of every billed token, the directive's
	// included; Charge is what the caller pays; DirectiveShare is
	// Charge(Cost) - Charge, the directive's part the caller does not pay.
	Cost           gw.Money
	Charge         gw.Money
	DirectiveShare gw.Money
	Note           string
}

// Biller prices requests. Known reports whether a model can be billed;
// Hold sizes the hold placed before the call; Price returns the exact
// cost and charge of the reported usage.
type Biller interface {
	Known(vendor, model string) bool
	Hold(r HoldRequest) (HoldPlan, error)
	// Price prices usage for a request that started at start (some
	// prices depend on the hour: DeepSeek's off-peak window).
	Price(vendor, model string, u gw.Usage, start time.Time) (Quote, error)
}

// HoldRequest is what a hold must cover: the exact body sent to the
// vendor, read as the vendor reads it.
type HoldRequest struct {
	Vendor, Model string
	BodyBytes     int
	// MaxOutput is the largest output limit the vendor body sets per
	// answer (0: none); Choices the number of answers (n,
	// candidateCount).
	MaxOutput, Choices int64
	// Available is the account's available balance, negative when not
	// looked up; CallerLimit says the caller set the output limit.
	Available   gw.Money
	CallerLimit bool
	// Hosted is the most the request may use beyond tokens (service
	// tier, fast mode, each hosted tool at its call limit): the hold
	// covers it at the card's prices.
	Hosted gw.Hosted
}

// HoldPlan is a sized hold: its amount, the per-answer output and total
// output it covers (0: unbounded), and whether the gateway must impose
// MaxOutput on the vendor because the balance cannot cover more.
type HoldPlan struct {
	Amount                 gw.Money
	MaxOutput, OutputBound int64
	Imposed                bool
}

// UnitPricer is implemented by Billers whose rate card prices units
// beyond tokens (ratecard unit names: service tiers, fast mode, hosted
// tools) per model; a request using a unit it cannot price for the model
// is refused unless the operator allows it.
type UnitPricer interface {
	UnitPriced(vendor, model, unit string) bool
}

// Priceable is implemented by Billers that explain why a model cannot be
// priced: the error (invalid_request) is the caller's answer.
type Priceable interface {
	Priceable(vendor, model string) error
}

// OutputCap is implemented by Billers that know a model's maximum
// output per answer (0: unknown).
type OutputCap interface {
	MaxOutputTokens(vendor, model string) int64
}

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

// Authenticator finds the caller of an Authorization header value.
type Authenticator interface {
	Authenticate(ctx context.Context, header string) (*gw.Principal, error)
}

// Availability is implemented by providers that can tell before the call
// that it cannot be made (no credentials), so that no money is held for
// it: Unavailable returns the error Send would, or nil.
type Availability interface{ Unavailable() error }

// Optimizer is the optimization layer (package optimize). Prepare adds its
// directive to a prepared vendor body of the given shape, unless the layer
// is off for this request (globally, for the key, or by the caller's
// headers), and says whether it did. Tokens counts the directive's prompt
// tokens for a vendor's model (never less than it adds). Describe gives
// the x-gateway-optimize response value and the record's note.
type Optimizer interface {
	Prepare(shape gw.Shape, body []byte, keyOff bool, h http.Header) (out []byte, applied bool, err error)
	Tokens(ctx context.Context, vendor, model string) int64
	Describe(applied bool) (header, note string)
}

// CachedCounter is implemented by an Optimizer that can give the
// directive's token count at once when it needs no vendor call: the count
// then needs no goroutine beside the vendor call.
type CachedCounter interface {
	CachedTokens(vendor, model string) (n int64, ok bool)
}

// closedChan is a closed channel: a wait that is already over.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// CacheKeyer is implemented by providers whose vendor routes prompt-cache
// hits by a key (OpenAI, Mistral and Fireworks prompt_cache_key):
// SetCacheKey returns the prepared body with key set, or unchanged when
// the caller set its own.
type CacheKeyer interface {
	SetCacheKey(body []byte, key string) ([]byte, error)
}

// CacheKey is the prompt-cache key of an account: a hash, never the
// account id itself, the same for all of the account's requests.
func CacheKey(accountID string) string {
	sum := sha256.Sum256([]byte("gateway prompt cache\x00" + accountID))
	return "gw-" + hex.EncodeToString(sum[:16])
}

// Config assembles a Gateway. Store, Auth and Providers are required; a
// nil Limiter, Biller or Guard turns that policy off.
type Config struct {
	Store     gw.Store
	Auth      Authenticator
	Providers map[string]gw.Provider
	Limiter   gw.Limiter
	// DefaultLimit applies to keys without limits of their own.
	DefaultLimit gw.Limit
	Biller       Biller
	Guard        Guard
	// Optimizer adds the concise-output directive; nil turns the layer
	// off.
	Optimizer Optimizer
	// GuardTimeout bounds the wait for a verdict (default 2s). What a
	// timeout or guard error does is GuardFailClosed: false lets the
	// request through (the record notes "guard:error"), true blocks it.
	GuardTimeout    time.Duration
	GuardFailClosed bool
	// AllowUnpriced names the billable units beyond tokens (package
	// internal/billable: service_tier_priority, web_search, ...) that pass
	// through where the rate card cannot price them for the model: the
	// operator pays for them. A unit the Biller prices (UnitPricer) is
	// billed; any other is refused with 400 naming the field.
	AllowUnpriced map[string]bool
	// RefusedPerMinute is how many refused requests of one key a minute
	// get a record each (default DefaultRefusedPerMinute; negative: all);
	// the rest of the minute's refusals become one aggregate record.
	RefusedPerMinute int
	// IncidentsPerMinute is how many incidents of one account a minute
	// keep their flagged text (default DefaultIncidentsPerMinute); the
	// text kept is at most MaxIncidentText bytes.
	IncidentsPerMinute int
	// CountTokensRPM is the requests per minute a key may send to the
	// token-count endpoint, counted in a bucket of its own beside its chat
	// requests; 0: the key's own RPM.
	CountTokensRPM int64
	// CountBytesPerMinute is how many body bytes one key's token counts
	// may have counted a minute (AllowCountBytes); 0: unbounded.
	CountBytesPerMinute int64
	// GuardCooldown refuses a key or account for a while after repeated
	// blocked requests (zero: off).
	GuardCooldown Cooldown
	// HoldTTL bounds a hold's life if its request never finishes (a
	// crash); default 30m.
	HoldTTL time.Duration
	// MaxAttempts bounds the vendor calls one request makes, retries and
	// fallbacks together (default DefaultMaxAttempts; an operator route
	// may set its own, Inbound.MaxAttempts); a caller's "models" list
	// naming more models than that is refused. AttemptTimeout bounds the
	// time before the first byte over all of them (default
	// DefaultAttemptTimeout): no attempt starts after it, and each
	// attempt's first-byte wait ends at it.
	MaxAttempts    int
	AttemptTimeout time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// Observe, when set, sees every request's record once it is written
	// (metrics). It must be fast and must not keep r.
	Observe func(r *gw.Record)
	// Tracer records spans for the guard, the vendor call and settle
	// under the request's own (Inbound.Span); nil: no tracing.
	Tracer Tracer
}

// Defaults of the attempt budget (Config.MaxAttempts, AttemptTimeout).
const (
	DefaultMaxAttempts    = 6
	DefaultAttemptTimeout = 60 * time.Second
)

// Gateway runs requests through the policies. It is safe for concurrent
// use.
type Gateway struct {
	cfg  Config
	cool *cooler // nil: no cool-down

	refusals, incidents meter
}

// New returns a Gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Store == nil || cfg.Auth == nil || cfg.Providers == nil {
		return nil, errors.New("proxy: Store, Auth and Providers are required")
	}
	if cfg.GuardTimeout == 0 {
		cfg.GuardTimeout = 2 * time.Second
	}
	if cfg.HoldTTL == 0 {
		cfg.HoldTTL = 30 * time.Minute
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.RefusedPerMinute == 0 {
		cfg.RefusedPerMinute = DefaultRefusedPerMinute
	} else if cfg.RefusedPerMinute < 0 {
		cfg.RefusedPerMinute = 1<<31 - 1
	}
	if cfg.IncidentsPerMinute <= 0 {
		cfg.IncidentsPerMinute = DefaultIncidentsPerMinute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{cfg: cfg, cool: newCooler(cfg.GuardCooldown)}, nil
}

// Store returns the gateway's store.
func (g *Gateway) Store() gw.Store { return g.cfg.Store }

// Provider returns the vendor's adapter.
func (g *Gateway) Provider(vendor string) (gw.Provider, bool) {
	p, ok := g.cfg.Providers[vendor]
	return p, ok
}

// Authenticate returns the caller of an Authorization header value.
func (g *Gateway) Authenticate(ctx context.Context, header string) (*gw.Principal, error) {
	return g.cfg.Auth.Authenticate(ctx, header)
}

// AllowCount admits one token-count request of p (POST
// /v1/messages/count_tokens): the key's model allow list, then its own
// rate-limit bucket (Config.CountTokensRPM, else the key's RPM), beside
// the key's chat requests. It returns the limiter's decision for the
// rate-limit headers, and invalid_request or rate_limited.
func (g *Gateway) AllowCount(ctx context.Context, p *gw.Principal, vendor, model string) (gw.LimitDecision, error) {
	if err := modelAllowed(p, Target{Vendor: vendor, Model: model}); err != nil {
		return gw.LimitDecision{}, err
	}
	if g.cfg.Limiter == nil {
		return gw.LimitDecision{Allowed: true}, nil
	}
	lim := gw.Limit{RPM: g.limitFor(p).RPM}
	if g.cfg.CountTokensRPM > 0 {
		lim.RPM = g.cfg.CountTokensRPM
	}
	d, err := g.cfg.Limiter.Allow(ctx, p.KeyID+":count_tokens", lim, 0)
	if err != nil && !d.Allowed {
		return d, &gw.Error{Code: gw.CodeOverloaded, Message: "rate limits cannot be checked right now; retry", RetryAfter: time.Second, Err: err}
	}
	if !d.Allowed {
		return d, &gw.Error{Code: gw.CodeRateLimited, Message: "rate limit reached for this API key's token counts; retry after the time in Retry-After", RetryAfter: max(d.RetryAfter, time.Second)}
	}
	return d, nil
}

// modelAllowed is nil when p's model allow list admits t, else the
// caller's 400 (skipReason matches its wording).
func modelAllowed(p *gw.Principal, t Target) error {
	if gw.ModelAllowed(p.Models, t.Vendor, t.Model) {
		return nil
	}
	e := gw.Errorf(gw.CodeInvalidRequest, "model %q is not allowed for this API key (its models: %s)", t.String(), strings.Join(p.Models, ", "))
	e.NoRetry = true
	return e
}

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
	// Prepare, when set, makes the vendor body of each model tried (an
	// endpoint of a shape other than M and C brings its own mapping);
	// nil: the caller's body passed through when the vendor speaks
	// Endpoint's shape, else Canonical encoded by the vendor's Codec.
	Prepare Preparer
	// Span is the request's own span (Gateway.StartRequest); Finish
	// gives it the GenAI and gateway attributes. Nil: none.
	Span Span
}

// Target is one model to try: the vendor prefix and the vendor's model id.
type Target struct{ Vendor, Model string }

// String is the prefixed model id.
func (t Target) String() string { return t.Vendor + "/" + t.Model }

// Preparer makes the vendor body for model on provider p: native says the
// vendor's answer is relayed as the vendor sends it (else the server maps
// it), hideUsage that the relay holds the usage-only chunk back.
type Preparer func(p gw.Provider, model string, stream bool) (body []byte, native, hideUsage bool, err error)

// candidate is one model a request may be served by, prepared in Begin.
type candidate struct {
	Target
	provider    gw.Provider
	native      bool
	body        []byte
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
	if err := g.cool.check(in.Principal, g.cfg.Now()); err != nil {
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

	if g.cfg.Biller != nil {
		if err := x.placeHold(ctx); err != nil {
			return err
		}
	}
	return nil
}

// prepare checks that candidate c can take the request and makes its
// vendor body; multi says the request has fallbacks (a model whose
// context window cannot hold the prompt is then skipped).
func (x *Exchange) prepare(c *candidate, multi bool) error {
	g, in := x.g, &x.in
	p, ok := g.cfg.Providers[c.Vendor]
	if !ok {
		return gw.Errorf(gw.CodeInvalidRequest, "unknown vendor %q", c.Vendor)
	}
	if in.Principal != nil {
		if err := modelAllowed(in.Principal, c.Target); err != nil {
			return err
		}
	}
	c.provider = p
	if a, ok := p.(Availability); ok {
		if err := a.Unavailable(); err != nil {
			return err
		}
	}
	if pr, ok := g.cfg.Biller.(Priceable); ok {
		if err := pr.Priceable(c.Vendor, c.Model); err != nil {
			return err
		}
	} else if g.cfg.Biller != nil && !g.cfg.Biller.Known(c.Vendor, c.Model) {
		return gw.Errorf(gw.CodeInvalidRequest, "model %q has no price on the rate card; GET /v1/models lists the priced models", c.String())
	}
	if cc, ok := g.cfg.Biller.(ContextCap); ok && multi {
		prompt := int64((len(in.Body) + in.ExtraInputBytes) / 4)
		if w := cc.ContextWindow(c.Vendor, c.Model); w > 0 && prompt+in.MaxOutput > w {
			return &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf("context window too small (%d tokens for about %d of prompt and %d of output)", w, prompt, in.MaxOutput)}
		}
	}
	var err error
	switch native := gw.SpeaksNatively(p, in.Endpoint); {
	case in.Prepare != nil:
		c.body, c.native, c.hideUsage, err = in.Prepare(p, c.Model, in.Stream)
	case native && in.Endpoint != p.Shape():
		// The vendor serves this endpoint's shape beside its own (OpenAI
		// Responses): the caller's bytes, model rewritten.
		c.native = true
		c.body, err = p.(gw.ResponsesNative).PassThroughResponses(in.Body, c.Model)
	case native:
		c.native = true
		c.body, c.hideUsage, err = p.PassThrough(in.Body, c.Model, in.Stream)
	default:
		codec, ok := p.(gw.Codec)
		if !ok || in.Canonical == nil {
			return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: fmt.Errorf("vendor %s cannot map from %s", c.Vendor, in.Endpoint)}
		}
		in.Canonical.Model = c.Model
		in.Canonical.Stream = in.Stream
		c.body, err = codec.EncodeRequest(in.Canonical)
	}
	if err != nil {
		return err
	}
	c.bodyShape = p.Shape()
	if c.native {
		c.bodyShape = in.Endpoint
	}
	if err := x.decorate(c); err != nil {
		return err
	}
	if g.cfg.Biller != nil {
		var priced func(unit string) bool
		if up, ok := g.cfg.Biller.(UnitPricer); ok {
			priced = func(unit string) bool { return up.UnitPriced(c.Vendor, c.Model, unit) }
		}
		if c.native && c.bodyShape == gw.ShapeR {
			// Responses callers (Codex on every turn) declare hosted tools
			// they can do without: one the card cannot price is left out
			// of the vendor request and named to the caller, as on the
			// mapped routes, rather than refused.
			keep := func(unit string) bool { return g.cfg.AllowUnpriced[unit] || (priced != nil && priced(unit)) }
			c.body, c.strippedTools = billable.StripTools(c.bodyShape, c.body, keep)
		}
		// Features billed beyond tokens, read from the exact vendor body:
		// priced from the card, held for, and refused where the card
		// cannot price them for this model unless the operator allows
		// them.
		uses := billable.Find(c.bodyShape, c.body)
		if err := billable.Refusal(uses, priced, g.cfg.AllowUnpriced, c.Vendor, c.Model); err != nil {
			return err
		}
		c.plan = billable.PlanFor(c.bodyShape, c.body, uses)
	}
	if oc, ok := g.cfg.Biller.(OutputCap); ok && in.MaxOutput > 0 {
		// Vendors refuse an output cap over the model's maximum; so does
		// the gateway, before it counts an estimate no window can hold.
		if m := oc.MaxOutputTokens(c.Vendor, c.Model); m > 0 && in.MaxOutput > m {
			return gw.Errorf(gw.CodeInvalidRequest, "the output cap (max_tokens) of %d is over the maximum of %d tokens that %s/%s can produce", in.MaxOutput, m, c.Vendor, c.Model)
		}
	}
	return nil
}

// skipReason is the short reason a candidate is passed over, for the
// record.
func skipReason(err error) string {
	e := gw.AsError(err)
	msg := e.Message
	switch {
	case strings.Contains(msg, "is not allowed for this API key"):
		return "not allowed for this API key"
	case strings.Contains(msg, "has no price on the rate card"):
		return "no price on the rate card"
	case e.Code == gw.CodeVendorUnavailable:
		return "vendor not configured"
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// use makes candidate i the one in use.
func (x *Exchange) use(i int) {
	c := x.cands[i]
	x.cur = i
	x.provider, x.native = c.provider, c.native
	x.Body, x.HideUsage, x.Optimized = c.body, c.hideUsage, c.optimized
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
	cl, err := outlimit.Read(in.Endpoint, in.Body)
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
				lim, err := outlimit.Read(c.bodyShape, c.body)
				if err != nil {
					return HoldPlan{}, err
				}
				reqs[i] = HoldRequest{Vendor: c.Vendor, Model: c.Model, BodyBytes: max(len(c.body), len(in.Body)+in.ExtraInputBytes), MaxOutput: lim.MaxOutput, Choices: lim.Choices, CallerLimit: callerLimit, Hosted: c.plan.Hold}
				if cc, ok := g.cfg.Biller.(ContextCap); ok && billable.ExternalInput(c.body) {
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
	bu, ok := x.g.cfg.Store.(gw.BudgetUser)
	if !ok {
		return 0, errors.New("store reports no budget use")
	}
	u, err := bu.BudgetUse(ctx, in.Principal.AccountID, in.Principal.KeyID, in.Received)
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
	if err := g.cfg.Store.PlaceHold(ctx, h); err != nil {
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
	r, ok := g.cfg.Store.(gw.HoldRenewer)
	if !ok {
		return
	}
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

// decorate adds to a freshly encoded vendor body the account's prompt-cache
// key (where the vendor takes one) and the optimizer's directive (unless
// it is off for this request).
func (x *Exchange) decorate(c *candidate) error {
	g, in, p := x.g, &x.in, c.provider
	var err error
	if ck, ok := p.(CacheKeyer); ok && in.Principal != nil {
		if c.body, err = ck.SetCacheKey(c.body, CacheKey(in.Principal.AccountID)); err != nil {
			return err
		}
	}
	if g.cfg.Optimizer != nil {
		keyOff := in.Principal != nil && in.Principal.OptimizeOff
		if c.body, c.optimized, err = g.cfg.Optimizer.Prepare(c.bodyShape, c.body, keyOff, in.Header); err != nil {
			return err
		}
	}
	return nil
}

// impose sets candidate c's output limit to n tokens. A mapped body is
// encoded again, so it gets its cache key and directive again.
func (x *Exchange) impose(c *candidate, n int64) error {
	in := &x.in
	if c.native || in.Prepare != nil {
		b, err := outlimit.Set(c.bodyShape, c.Vendor, c.body, n)
		if err != nil {
			return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: err}
		}
		c.body = b
	} else {
		codec := c.provider.(gw.Codec)
		v := int(min(n, int64(1<<31-1)))
		in.Canonical.MaxTokens = &v
		in.Canonical.Model = c.Model
		b, err := codec.EncodeRequest(in.Canonical)
		if err != nil {
			return err
		}
		c.body = b
		if err := x.decorate(c); err != nil {
			return err
		}
	}
	c.imposed = n
	return nil
}

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

// Screen runs the guard on a request that has no vendor call of its own
// to guard beside (a token count): the cool-down, both stages, then the
// verdict. It returns rate_limited for a key or account cooled down,
// request_blocked (the incident stored) when the request must not go on.
// A count that leaves an incident (blocked, or flagged in monitor mode)
// is recorded, never billed, noted NoteCountTokens, so that the
// incident's request id names a record as a chat request's does; a
// blocked one counts among the key's refusals (RefusedPerMinute), not in
// its chat requests' rate-limit bucket. Other counts leave no record.
// in.Text is the text the route read; in.Principal the caller.
func (g *Gateway) Screen(ctx context.Context, in Inbound) error {
	if err := g.cool.check(in.Principal, g.cfg.Now()); err != nil {
		return err
	}
	x := &Exchange{g: g, in: in, count: true, limited: true}
	v, second, err := x.firstStage(ctx)
	v, blocked := x.judge(ctx, v, err)
	if !blocked && second != nil {
		v, blocked = x.secondStage(ctx, second)
	}
	if blocked {
		err := x.block(ctx, v)
		x.finishErr(ctx, err)
		return err
	}
	if strings.HasPrefix(x.Guard, "monitor:") {
		if _, err := x.Finish(ctx, Outcome{Status: 200}); err != nil {
			g.cfg.Logger.Error("record a flagged count", "request_id", in.RequestID, "err", err)
		}
	}
	return nil
}

// firstStage runs the guard's first stage, or the whole check of a guard
// that has no stages, before anything is sent. second is the second
// stage left to run, nil when the verdict is final.
func (x *Exchange) firstStage(ctx context.Context) (Verdict, func(context.Context) (Verdict, error), error) {
	g := x.g
	if g.cfg.Guard == nil {
		return Verdict{}, nil, nil
	}
	if x.in.Text != nil {
		if sg, ok := g.cfg.Guard.(StagedGuard); ok {
			return sg.CheckFirst(ctx, x.in.Principal, x.in.Text)
		}
		if tg, ok := g.cfg.Guard.(TextGuard); ok {
			v, err := tg.CheckText(ctx, x.in.Principal, x.in.Text)
			return v, nil, err
		}
	}
	if pg, ok := g.cfg.Guard.(PrincipalGuard); ok {
		v, err := pg.CheckFor(ctx, x.in.Principal, x.in.Endpoint, x.in.Body)
		return v, nil, err
	}
	v, err := g.cfg.Guard.Check(ctx, x.in.Endpoint, x.in.Body)
	return v, nil, err
}

// secondStage waits for the second stage, within GuardTimeout. blocked
// is true when the request must not go on.
func (x *Exchange) secondStage(ctx context.Context, second func(context.Context) (Verdict, error)) (Verdict, bool) {
	gctx, cancel := context.WithTimeout(ctx, x.g.cfg.GuardTimeout)
	defer cancel()
	type res struct {
		v   Verdict
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := second(gctx)
		ch <- res{v, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-gctx.Done():
		r.err = gctx.Err()
	}
	return x.judge(ctx, r.v, r.err)
}

// judge turns the guard's answer into the request's fate.
func (x *Exchange) judge(ctx context.Context, v Verdict, err error) (Verdict, bool) {
	g := x.g
	if err != nil {
		x.Guard = "error"
		g.cfg.Logger.Error("guard failed", "request_id", x.in.RequestID, "err", err, "fail_closed", g.cfg.GuardFailClosed)
		if g.cfg.GuardFailClosed {
			return Verdict{Flagged: true, Kind: "guard_unavailable", Reason: "the guard could not check the request"}, true
		}
		return Verdict{}, false
	}
	if v.Flagged && v.Monitor {
		// Monitor mode: the incident is recorded, the request goes on.
		x.Guard = "monitor:" + v.Kind
		x.recordIncident(ctx, v)
		return v, false
	}
	if v.Flagged {
		x.Guard = "flagged:" + v.Kind
		return v, true
	}
	x.Guard = "pass"
	if v.Note != "" {
		x.Guard = v.Note
	}
	if g.cfg.Guard == nil {
		x.Guard = "off"
	}
	return v, false
}

// recordIncident stores the verdict's incident, with its flagged text
// when the store keeps texts, and returns its id.
func (x *Exchange) recordIncident(ctx context.Context, v Verdict) string {
	in := &x.in
	inc := &gw.Incident{
		ID: id.New("inc_", x.g.cfg.Now()), RequestID: in.RequestID, AccountID: in.Principal.AccountID, KeyID: in.Principal.KeyID,
		Kind: v.Kind, Score: v.Score, Reason: v.Reason, Excerpt: v.Excerpt, CreatedAt: x.g.cfg.Now(),
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := x.g.cfg.Store.CreateIncident(wctx, inc); err != nil {
		x.g.cfg.Logger.Error("store incident", "request_id", in.RequestID, "err", err)
		return inc.ID
	}
	if gs, ok := x.g.cfg.Store.(gw.GuardStore); ok && v.Text != "" && x.g.incidentText(in.Principal.AccountID, x.g.cfg.Now()) {
		text := v.Text
		if len(text) > MaxIncidentText {
			text = truncateUTF8(text, MaxIncidentText)
		}
		t := gw.IncidentText{IncidentID: inc.ID, AccountID: in.Principal.AccountID, Hash: v.TextHash, Text: text}
		if err := gs.SetIncidentText(wctx, t); err != nil {
			x.g.cfg.Logger.Error("store incident text", "request_id", in.RequestID, "err", err)
		}
	}
	return inc.ID
}

func (x *Exchange) block(ctx context.Context, v Verdict) error {
	id := x.recordIncident(ctx, v)
	// Only blocks on the caller's own text count toward a cool-down:
	// never a block on third-party text (a tool result, a document) or on
	// a token count, though both are refused and recorded.
	if v.Kind != "guard_unavailable" && !v.ThirdParty && !x.count {
		if why := x.g.cool.blocked(x.in.Principal, x.g.cfg.Now()); why != "" {
			// Repeated blocks: the key (or account) is cooled down, and
			// that is an incident too, saying why.
			x.recordIncident(ctx, Verdict{Kind: IncidentCooldown, Score: v.Score, Reason: why, Excerpt: v.Excerpt})
		}
	}
	return &gw.Error{
		Code:       gw.CodeRequestBlocked,
		Message:    "the request was blocked by the prompt-extraction guard; if you think this is wrong, contact support with the incident_id",
		IncidentID: id,
		NoRetry:    true,
	}
}

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
}

// Quote prices usage for this request without recording anything (so a
// non-streaming answer can carry its charge in a header).
func (x *Exchange) Quote(u gw.Usage) (Quote, error) {
	if x.g.cfg.Biller == nil {
		return Quote{}, nil
	}
	return x.g.cfg.Biller.Price(x.in.Vendor, x.in.Model, x.withOptimizer(u), x.in.Received)
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
		u.OptimizerTokens = min(x.optTokens, u.PromptTokens())
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
	g, in := x.g, &x.in
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()

	o.Usage = x.withOptimizer(o.Usage)
	r := x.record(o)
	x.rec = r
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
	var clamped bool
	o.Usage, clamped = ClampUsage(o.Usage, x.outputBound)
	if cw, ok := g.cfg.Biller.(ContextCap); ok {
		var pc bool
		o.Usage, pc = ClampPrompt(o.Usage, cw.ContextWindow(in.Vendor, in.Model))
		clamped = clamped || pc
	}
	if clamped || o.Usage.Clamped {
		clamped = true
		r.Usage, r.UsageClamped = o.Usage, true
		r.Note = joinNote(r.Note, NoteUsageClamped)
	}
	if u, disputed, note := x.dispute(o.Usage); note != "" {
		o.Usage, r.Usage, r.DisputedCost = u, u, disputed
		r.Note = joinNote(r.Note, note)
	}
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
	if x.in.Vendor != "" {
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
