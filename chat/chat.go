// Package chat runs one chat request of any ingress shape (M, C, R, G)
// from its arrival to its record, as one sequence a reader can follow
// top to bottom in (*Lifecycle).Serve:
//
//	authenticate -> read the body once -> parse -> route and candidates
//	-> (Responses conversation, client state) -> hold (proxy Begin)
//	-> guard and optimizer, attempts (proxy Call) -> relay or map
//	-> meter (estimate missing usage) -> settle and record (proxy Finish)
//
// The money, the guard and the vendor attempts are proxy's policies;
// this package does the wire work around them: the body read (bounded in
// size, time and bytes in flight), the strict parse through the caller's
// shape.Shape, the answer relayed byte for byte when the vendor speaks
// the endpoint's shape (relay.go) or mapped otherwise (mapped.go), the
// usage the gateway estimates when the vendor reports none
// (estimate.go), the conversation state kept for clients (state.go,
// responses.go), the access log line and the error envelope (errors.go).
// Package server is the HTTP plumbing in front of it.
package chat

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/runs"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/shape/responses"
)

// Header names the gateway sets.
const (
	HeaderRequestID = "X-Gateway-Request-Id"
	HeaderVendor    = "X-Gateway-Vendor"
	// HeaderModel is the prefixed model that served (or last failed);
	// HeaderAttempts how many vendor calls the request made (retries
	// within one vendor are not counted).
	HeaderModel    = "X-Gateway-Model"
	HeaderAttempts = "X-Gateway-Attempts"
	HeaderCharge   = "X-Gateway-Customer-Charge-Cents"
	HeaderDropped  = "X-Gateway-Dropped-Fields"
	// HeaderMaxTokens is set when the caller gave no output limit and the
	// balance could not cover the model's maximum output: the gateway
	// sent the vendor this many output tokens as the limit.
	HeaderMaxTokens     = "X-Gateway-Max-Tokens"
	HeaderRateLimit     = "X-Ratelimit-Limit-Requests"
	HeaderRateRemaining = "X-Ratelimit-Remaining-Requests"
)

// DefaultMaxBodyBytes is Config.MaxBodyBytes's default (32 MiB).
const DefaultMaxBodyBytes = 32 << 20

// Config assembles a Lifecycle; package server fills it from its own
// Config, whose fields say what each bounds. Zero bounds take the
// defaults server's Config documents.
type Config struct {
	Gateway *proxy.Gateway
	// Shapes finds a request's shape by its endpoint (server's
	// registry).
	Shapes           *shape.Registry
	MaxBodyBytes     int64
	MaxInflightBytes int64
	// MaxInflightBytesPerAccount and MaxInflightBytesPerKey bound the
	// share of MaxInflightBytes one account's and one key's bodies may
	// hold at once (0: a quarter of MaxInflightBytes, at least two of
	// the largest bodies, at most the whole; the key's: the account's).
	MaxInflightBytesPerAccount int64
	MaxInflightBytesPerKey     int64
	BodyReadTimeout            time.Duration
	MaxResponseBytes           int64
	MaxEventBytes              int
	StreamWriteTimeout         time.Duration
	State                      *convstate.Keeper
	Routes                     *route.Table
	// Suggest rewrites the refusal of a model without a known vendor
	// prefix to name the ids it most likely means; nil: unchanged.
	Suggest func(err error, p *gw.Principal) error
	Now     func() time.Time
	Logger  *slog.Logger
}

// Lifecycle serves chat requests. It is safe for concurrent use.
type Lifecycle struct {
	cfg      Config
	draining atomic.Bool
	inflight sync.WaitGroup // chat requests being served
	// bodyBytes counts the request body bytes read and still held, in
	// all and per account and key (bytebudget.go).
	bodyBytes *byteBudget
	// seal seals reasoning state into Responses encrypted_content,
	// made on first use (sealer).
	sealMu sync.Mutex
	seal   *responses.Sealer
}

// New returns a Lifecycle.
func New(cfg Config) *Lifecycle {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = 256 << 20
	}
	if cfg.MaxInflightBytesPerAccount <= 0 {
		cfg.MaxInflightBytesPerAccount = min(max(cfg.MaxInflightBytes/4, 2*(cfg.MaxBodyBytes+1)), cfg.MaxInflightBytes)
	}
	if cfg.MaxInflightBytesPerKey <= 0 {
		cfg.MaxInflightBytesPerKey = cfg.MaxInflightBytesPerAccount
	}
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = 60 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 16 << 20
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = 8 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Lifecycle{cfg: cfg, bodyBytes: newByteBudget(cfg.MaxInflightBytes, cfg.MaxInflightBytesPerAccount, cfg.MaxInflightBytesPerKey)}
}

// SetDraining makes new chat requests answer 503, while requests already
// running finish.
func (s *Lifecycle) SetDraining(v bool) { s.draining.Store(v) }

// ErrShutdown is the cause with which a request's context is cancelled
// when the shutdown grace runs out (the HTTP server's base context):
// the request stops, records its outcome (a stream is billed for what
// was delivered, the rest of its hold released) and a stream ends with
// an error event and its terminator.
var ErrShutdown = errors.New("the gateway is shutting down")

// cutByShutdown reports whether ctx was cancelled by the shutdown.
func cutByShutdown(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrShutdown) }

// shutdownError is what a request cut by the shutdown is told.
func shutdownError() *gw.Error {
	return &gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is shutting down; the answer was cut short (billed for what was delivered); retry", RetryAfter: time.Second, Err: ErrShutdown}
}

// Wait waits for the chat requests being served to return, or for ctx.
func (s *Lifecycle) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// statusWriter remembers the status and the error sent, for the access
// log. Unwrap keeps http.ResponseController (flushing) working.
type statusWriter struct {
	http.ResponseWriter
	status int
	err    *gw.Error
	// account and key identify the caller once authenticated.
	account, key string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequest writes the access log line of a chat request: metadata only,
// never content or credentials. Server-side failures carry their cause.
//
// rec, when the request reached Begin, adds its tokens (input, output,
// cache reads and writes, the optimizer's) and its charge.
func (s *Lifecycle) logRequest(ctx context.Context, sw *statusWriter, rid string, shape gw.Shape, vendor, model string, start time.Time, rec *gw.Record) {
	level := slog.LevelInfo
	if sw.err != nil && sw.status >= 500 {
		level = slog.LevelWarn
	}
	if !s.cfg.Logger.Enabled(ctx, level) {
		return // the access log off: nothing built
	}
	// The line's attributes on the stack (at most 17), not a new slice
	// a request.
	var buf [17]slog.Attr
	attrs := append(buf[:0],
		slog.String("request_id", rid),
		slog.String("endpoint", string(shape)),
		slog.Int("status", sw.status),
		slog.Duration("duration", s.cfg.Now().Sub(start)),
	)
	if sw.account != "" {
		attrs = append(attrs, slog.String("account_id", sw.account), slog.String("key_id", sw.key))
	}
	if vendor != "" {
		attrs = append(attrs, slog.String("vendor", vendor), slog.String("model", model))
	}
	if rec != nil {
		u := rec.Usage
		attrs = append(attrs,
			slog.Int64("input_tokens", u.PromptTokens()),
			slog.Int64("output_tokens", u.OutputTokens),
			slog.Int64("cache_read_tokens", u.CacheReadTokens),
			slog.Int64("cache_write_tokens", u.CacheWriteTokens()),
			slog.Int64("optimizer_tokens", u.OptimizerTokens),
			slog.String("charge_usd", rec.Charge.USDString()),
			slog.String("guard", rec.Guard),
		)
	}
	if sw.err != nil {
		attrs = append(attrs, slog.String("error", string(sw.err.Code)))
		if sw.status >= 500 {
			if sw.err.Err != nil {
				attrs = append(attrs, slog.String("cause", sw.err.Err.Error()))
			}
		}
	}
	s.cfg.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// Serve serves a chat request of shape sh, the whole exchange: each
// step below runs once, in this order.
func (s *Lifecycle) Serve(rw http.ResponseWriter, r *http.Request, sh shape.Shape) {
	endpoint := sh.Name()
	s.inflight.Add(1)
	defer s.inflight.Done()
	received := s.cfg.Now()
	rid := id.New("req_", received)
	w := &statusWriter{ResponseWriter: rw}
	var vendor, model string
	var xch *proxy.Exchange
	defer func() { s.logRequest(r.Context(), w, rid, endpoint, vendor, model, received, xch.Record()) }()
	h := w.Header()
	h.Set(HeaderRequestID, rid)
	h.Set(sh.RequestIDHeader(), rid)
	fail := func(err error) {
		runs.SetHeaders(h, xch.Run())
		WriteError(w, sh, rid, gw.AsError(err))
	}
	if r.Method != http.MethodPost {
		h.Set("Allow", http.MethodPost)
		fail(gw.Errorf(gw.CodeMethodNotAllowed, "%s is not allowed on %s; use POST", r.Method, r.URL.Path))
		return
	}
	if s.draining.Load() {
		fail(&gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is shutting down; retry", RetryAfter: time.Second})
		return
	}
	// The plain type, what every SDK sends, needs no parse (whose
	// parameters map is an allocation a request).
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			fail(gw.Errorf(gw.CodeInvalidRequest, "Content-Type must be application/json, not %q", ct))
			return
		}
	}
	// Authenticate.
	gwy := s.cfg.Gateway
	ctx, span := gwy.StartRequest(r.Context(), sh.SpanName(r), r.Header)
	defer span.End()
	actx, aspan := gwy.StartSpan(ctx, "auth")
	principal, err := gwy.Authenticate(actx, sh.Credential(r))
	if err != nil {
		aspan.Fail(err)
		aspan.End()
		span.SetAttributes(proxy.Attr{Key: proxy.AttrRequestID, Value: rid}, proxy.Attr{Key: proxy.AttrGuard, Value: "not_run"})
		span.Fail(err)
		fail(err)
		return
	}
	aspan.End()
	w.account, w.key = principal.AccountID, principal.KeyID
	// Read the body, once.
	body, release, err := s.ReadBodyFor(w, r, s.cfg.MaxBodyBytes, principal)
	defer release()
	if err != nil {
		fail(err)
		return
	}
	// Parse.
	in := proxy.Inbound{RequestID: rid, Endpoint: endpoint, Principal: principal, Body: body, Header: r.Header, Received: received, Span: span}
	if in.Run, err = runs.Parse(r.Header); err != nil {
		gwy.Refuse(ctx, in, err)
		fail(err)
		return
	}
	// Read once, for routing, hold sizing and the guard (see the
	// reqbody package: keys are read as the vendors read them, and what
	// the guard cannot read is refused here).
	env, err := sh.Parse(r.URL.Path, body)
	if err != nil {
		gwy.Refuse(ctx, in, err)
		fail(err)
		return
	}
	in.Stream, in.MaxOutput, in.Text, in.Members, in.Messages = env.Stream, env.MaxOutput, env.Text, env.Top, env.Messages
	// Route, and the candidates: the model and its fallbacks.
	targets, err := s.cfg.Routes.Resolve(env.Model, env.Models)
	if err != nil {
		err = s.withSuggestion(err, principal)
		gwy.Refuse(ctx, in, err)
		fail(err)
		return
	}
	if env.HasModels {
		// The fallbacks are the gateway's to try (also on openrouter/):
		// no vendor sees the list.
		if in.Members != nil {
			// One edit on the members the parse found: the body is not
			// scanned again, and the members stay right for what follows.
			ed := rawjson.ObjectFrom(body, in.Members).Edit()
			ed.Delete("models")
			o := ed.Object()
			body, in.Members = o.Bytes(), o.Members()
		} else if body, err = rawjson.Delete(body, "models"); err != nil {
			err = gw.Errorf(gw.CodeInvalidRequest, "request body is not a JSON object")
			gwy.Refuse(ctx, in, err)
			fail(err)
			return
		}
		in.Body = body
	}
	target := targets[0]
	in.Vendor, in.Model = target.Vendor, target.Model
	in.CallerModels = len(env.Models)
	if r, ok := s.cfg.Routes.Get(env.Model); ok {
		in.MaxAttempts = r.MaxAttempts
	}
	for _, t := range targets[1:] {
		in.Fallbacks = append(in.Fallbacks, proxy.Target{Vendor: t.Vendor, Model: t.Model})
	}
	vendor, model = target.Vendor, target.Model
	h.Set(HeaderVendor, target.Vendor)
	// Every model tried (the caller's and its fallbacks): a vendor that
	// does not speak the endpoint's shape needs the canonical form.
	var primary gw.Provider
	mapped := false
	for i, t := range targets {
		p, ok := gwy.Provider(t.Vendor)
		if !ok {
			if len(targets) > 1 {
				continue // passed over, with its reason, by the proxy
			}
			err := gw.Errorf(gw.CodeVendorUnavailable, "%s is not configured on this gateway", t.Vendor)
			gwy.Refuse(ctx, in, err)
			fail(err)
			return
		}
		if i == 0 {
			primary = p
		}
		if !gw.SpeaksNatively(p, endpoint) {
			mapped = true
		}
	}
	// The conversation the request continues, and the canonical form: a
	// Responses request's joins the conversation it continues, kept by
	// the client state (see openResponses).
	rreq, isR := env.Parsed.(*responses.Request)
	var rt *rturn
	switch {
	case isR && primary != nil:
		// Mapped: the kept conversation and the input become
		// in.Canonical; native: the caller's bytes go to OpenAI.
		// (Fallbacks follow the first model's way: a mapped one after a
		// native first model is passed over.)
		if rt, err = s.openResponses(ctx, &in, rreq, primary); err != nil {
			gwy.Refuse(ctx, in, err)
			fail(err)
			return
		}
	case mapped:
		// What only the shape's own vendors serve is refused here.
		in.Canonical, err = sh.Canonical(&env, body)
		if err != nil {
			gwy.Refuse(ctx, in, err)
			fail(err)
			return
		}
	}
	in, turn, err := s.clientState(ctx, in)
	if err != nil {
		gwy.Refuse(ctx, in, err)
		fail(err)
		return
	}

	// Hold: the candidates' vendor bodies, the rate limit and the
	// hold on the balance (proxy Begin).
	x, err := gwy.Begin(ctx, in)
	xch = x
	// From here the request is read through x (x.Inbound()): this
	// handler's copies of it go, so that the body and the guard's text
	// are let go as soon as x lets go of them (see letGo).
	in, env, body = proxy.Inbound{}, shape.Request{}, nil
	h.Set(optimize.Header, x.OptimizeHeader())
	if d := x.Limit; d.RequestsLimit > 0 {
		h.Set(HeaderRateLimit, strconv.FormatInt(d.RequestsLimit, 10))
		h.Set(HeaderRateRemaining, strconv.FormatInt(max(d.RequestsRemaining, 0), 10))
	}
	if err != nil {
		fail(err)
		return
	}
	if !mapped && x.Inbound().Stream {
		// Every model speaks the request's shape: its vendor bodies are
		// made, and a stream need not hold the caller's body through the
		// vendor call (see letGoBody).
		s.letGoBody(x)
	}
	// The guard, the optimizer's count and the vendor attempts (proxy
	// Call).
	up, err := x.Call(ctx)
	served := x.Inbound()
	vendor, model = served.Vendor, served.Model
	h.Set(HeaderVendor, served.Vendor)
	h.Set(HeaderModel, served.Vendor+"/"+served.Model)
	h.Set(HeaderAttempts, strconv.Itoa(x.Tries()))
	if x.ImposedMaxOutput > 0 {
		h.Set(HeaderMaxTokens, strconv.FormatInt(x.ImposedMaxOutput, 10))
	}
	if served.Canonical != nil && len(served.Canonical.Dropped) > 0 && !x.Native() {
		h.Set(HeaderDropped, strings.Join(served.Canonical.Dropped, ","))
	}
	if rt != nil && !rt.native && len(rt.req.HostedTools) > 0 {
		h.Set(HeaderDroppedTools, strings.Join(rt.req.HostedTools, ","))
	}
	if st := x.StrippedTools(); len(st) > 0 {
		h.Set(HeaderDroppedTools, strings.Join(st, ","))
	}
	if err != nil {
		e := gw.AsError(err)
		if cutByShutdown(ctx) {
			e = shutdownError()
		} else if ctx.Err() != nil {
			e = &gw.Error{Code: gw.CodeUpstream, Message: "the caller went away", Err: ctx.Err()}
		}
		s.finish(ctx, x, proxy.Outcome{Status: e.Code.Status(), Err: e})
		fail(e)
		return
	}
	// Relay or map the answer, meter it, settle and record (finish).
	if x.Native() {
		s.relay(w, r, x, up)
	} else {
		s.mapped(w, r, x, up, turn, rt)
	}
}

// finish records an outcome, logging a failure to do so.
func (s *Lifecycle) finish(ctx context.Context, x *proxy.Exchange, o proxy.Outcome) (gw.Money, error) {
	charge, err := x.Finish(ctx, o)
	if err != nil {
		s.cfg.Logger.Error("finish request", "request_id", x.Inbound().RequestID, "err", err)
	}
	return charge, err
}

// withSuggestion is Config.Suggest, when set.
func (s *Lifecycle) withSuggestion(err error, p *gw.Principal) error {
	if s.cfg.Suggest == nil {
		return err
	}
	return s.cfg.Suggest(err, p)
}
