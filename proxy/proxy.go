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
// the gw interfaces (Provider, Codec, Store, Limiter) and the small
// interfaces each stage declares where it uses them. The server package
// does the wire work around it.
//
// One file per stage: proxy.go (Config, New, authentication),
// exchange.go (Begin: route and candidates), prepare.go (the vendor body
// of each candidate), hold.go (the hold and its keep-alive), guard.go
// (the guard's two stages, incidents), attempts.go (Call: the vendor
// calls, retries and fallbacks), finish.go (Finish: price, settle,
// record).
package proxy

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Authenticator finds the caller of an Authorization header value.
type Authenticator interface {
	Authenticate(ctx context.Context, header string) (*gw.Principal, error)
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
	// Answer configures the guard's answer side (answer.go).
	Answer AnswerConfig
	// Runs keeps the runs requests name (Inbound.Run); nil: Store, when
	// it is a gw.RunStore.
	Runs gw.RunStore
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
