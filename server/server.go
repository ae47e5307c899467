// Package server is the gateway's HTTP face: POST /v1/messages (shape M),
// POST /v1/chat/completions (shape C) and POST /v1/responses (shape R,
// with its state routes in responses.go: GET and DELETE
// /v1/responses/{id}, GET .../input_items, POST
// /v1/responses/input_tokens), GET /v1/models, GET
// /v1/balance (the calling key's money and limits), /healthz,
// /readyz and the dashboard mount.
//
// A chat request is authenticated, its body read (bounded in size, time
// and bytes in flight), parsed once and strictly (internal/reqbody: the
// routing fields and the guard's text, keys read as the vendors read
// them), decoded to the canonical form when the vendor speaks the other
// shape, and handed to the proxy's policies. When the shutdown grace runs
// out, requests still running are cut (ErrShutdown) and record their
// outcome. The answer goes back in the endpoint's shape: relayed byte for
// byte when the vendor speaks it (relay.go), mapped otherwise (mapped.go).
// Every response carries x-gateway-request-id (plus request-id on M and
// x-request-id on C); errors use the envelope in errors.go.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/catalog"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
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
	HeaderMaxTokens    = "X-Gateway-Max-Tokens"
	headerRateLimit    = "X-Ratelimit-Limit-Requests"
	headerRateRemain   = "X-Ratelimit-Remaining-Requests"
	defaultMaxBodySize = 32 << 20
	// defaultMaxCountBodySize is Config.MaxCountBodyBytes's default.
	defaultMaxCountBodySize = 8 << 20
)

// Config assembles a Server. Gateway is required.
type Config struct {
	Gateway *proxy.Gateway
	// TrustedProxies are the reverse proxies whose X-Forwarded-Proto is
	// believed (GET /openapi.json's server URL).
	TrustedProxies []netip.Prefix
	// MaxBodyBytes bounds a request body (default 32 MiB), enforced while
	// reading.
	MaxBodyBytes int64
	// MaxCountBodyBytes bounds the body of a token count
	// (POST /v1/messages/count_tokens, /v1/responses/input_tokens;
	// default 8 MiB, never above MaxBodyBytes): a count is free, so its
	// work is bounded apart from the chat endpoints'.
	MaxCountBodyBytes int64
	// Catalog lists the models for GET /v1/models and /v1/models/{id};
	// nil: 404.
	Catalog *catalog.Catalog
	// MaxInflightBytes bounds the request body bytes held by all requests
	// together (default 256 MiB): past it a request is answered 503 with
	// Retry-After as its bytes arrive, instead of the heap growing.
	MaxInflightBytes int64
	// BodyReadTimeout bounds the reading of one request body (default
	// 60s); the headers are bounded by the HTTP server's
	// ReadHeaderTimeout.
	BodyReadTimeout time.Duration
	// MaxResponseBytes bounds a non-streaming vendor answer held in
	// memory (default 16 MiB); MaxEventBytes one line or event of a
	// vendor stream (default 8 MiB).
	MaxResponseBytes int64
	MaxEventBytes    int
	// Dashboard serves /dashboard and below; nil: 404.
	Dashboard http.Handler
	// Admin serves the admin API under /admin/; nil: 404.
	Admin http.Handler
	// StreamWriteTimeout bounds how long one stream event may wait for
	// the caller to take it (0: unbounded). A caller that stops reading
	// for longer is counted as gone: its stream is billed as abandoned.
	StreamWriteTimeout time.Duration
	// WriteTimeout bounds the writing of every answer that is not a
	// stream, from its first byte (default 60s; negative: unbounded): a
	// caller that never reads cannot pin the answer's memory. Streams
	// are bounded per event by StreamWriteTimeout instead.
	WriteTimeout time.Duration
	// Ready reports whether the store is reachable, for /readyz.
	Ready func(ctx context.Context) error
	// State keeps client state on mapped routes (message threads,
	// DeepSeek reasoning); nil: none is kept, and a thread continue is
	// not found.
	State *convstate.Keeper
	// Degraded, when set, says what runs in a degraded mode (e.g. rate
	// limits per instance while Redis is down), "" when nothing: /readyz
	// then answers 200 {"status":"degraded","detail":...}.
	Degraded func() string
	// Version is the release's version, the OpenAPI document's
	// info.version ("": the document's own, 0.0.0-devel).
	Version string
	// Routes are the operator's named routes ("gw/sonnet"), usable as a
	// model id and listed by GET /v1/models; nil: none.
	Routes *route.Table
	// Health reports the vendors' circuit breakers and key pools, for
	// /readyz's detail; nil: not reported.
	Health func() []gw.VendorHealth
	// ReadyDetail reports whether a /readyz request may see the detail
	// (the vendors' breakers and keys): it carries the admin token. Nil:
	// nobody; everyone else gets the status and a one-word reason.
	ReadyDetail func(r *http.Request) bool
	Now         func() time.Time
	Logger      *slog.Logger
}

// Server serves the gateway's HTTP API.
type Server struct {
	cfg      Config
	draining atomic.Bool
	inflight sync.WaitGroup // chat requests being served
	// bodyBytes counts the request body bytes read and still held.
	bodyBytes atomic.Int64
	// countSlots bounds the large token counts worked on at once (half
	// the CPUs), so that free counts cannot take the CPU from requests.
	countSlots chan struct{}
	// o200kCodec is OpenAI's encoding, for count_tokens estimates,
	// loaded on first use.
	o200kOnce  sync.Once
	o200kCodec *codec.Codec
	// seal seals reasoning state into Responses encrypted_content,
	// made on first use (sealer).
	sealMu sync.Mutex
	seal   *responses.Sealer
}

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
func (s *Server) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodySize
	}
	if cfg.MaxCountBodyBytes <= 0 {
		cfg.MaxCountBodyBytes = defaultMaxCountBodySize
	}
	cfg.MaxCountBodyBytes = min(cfg.MaxCountBodyBytes, cfg.MaxBodyBytes)
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = 256 << 20
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
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 60 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, countSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
}

// SetDraining makes /readyz fail and new chat requests answer 503, while
// requests already running finish.
func (s *Server) SetDraining(v bool) { s.draining.Store(v) }

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.WriteTimeout > 0 {
		w = &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: s.cfg.WriteTimeout}
	}
	switch p := r.URL.Path; {
	case p == "/v1/messages/count_tokens":
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.countTokens(w, r)
		}
	case geminiPath(r):
		s.gemini(w, r)
	case p == "/v1/responses" && websocketUpgrade(r):
		s.refuseUpgrade(w)
	case shapes.ByPath(p) != nil:
		s.chat(w, r, shapes.ByPath(p))
	case p == "/v1/responses/input_tokens":
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.countResponseTokens(w, r)
		}
	case strings.HasPrefix(p, "/v1/responses/"):
		s.responseByID(w, r)
	case (p == "/v1/models" || strings.HasPrefix(p, "/v1/models/")) && s.cfg.Catalog != nil:
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.models(w, r)
		}
	case p == "/v1/balance":
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.balance(w, r)
		}
	case p == "/openapi.json":
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.serveOpenAPI(w, r)
		}
	case p == "/healthz":
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}
	case p == "/readyz":
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.ready(w, r)
		}
	case strings.HasPrefix(p, "/admin/") && s.cfg.Admin != nil:
		s.cfg.Admin.ServeHTTP(w, r)
	case strings.HasPrefix(p, "/admin/"):
		rid := id.New("req_", s.cfg.Now())
		w.Header().Set(HeaderRequestID, rid)
		writeError(w, plain, rid, &gw.Error{Code: gw.CodeNotFound, ErrorCode: AdminOff, Message: "the admin API is off on this gateway; " +
			"set GATEWAY_ADMIN_TOKEN (admin_token in its configuration file) there to turn it on"})
	case (p == "/dashboard" || strings.HasPrefix(p, "/dashboard/")) && s.cfg.Dashboard != nil:
		s.cfg.Dashboard.ServeHTTP(w, r)
	default:
		rid := id.New("req_", s.cfg.Now())
		w.Header().Set(HeaderRequestID, rid)
		writeError(w, plain, rid, gw.Errorf(gw.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	}
}

// websocketUpgrade reports whether r asks to switch to WebSocket.
func websocketUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "websocket") {
				return true
			}
		}
	}
	return false
}

// refuseUpgrade answers a WebSocket upgrade on /v1/responses (Codex's
// Responses WebSocket transport, which the gateway does not serve) with
// 426 Upgrade Required in R's error shape: on 426 Codex falls back to
// HTTP at once, where a 405 costs it a second attempt and a 400 fails
// the turn.
func (s *Server) refuseUpgrade(w http.ResponseWriter) {
	rid := id.New("req_", s.cfg.Now())
	h := w.Header()
	h.Set(HeaderRequestID, rid)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUpgradeRequired)
	_, _ = w.Write(rShape.ErrorBody(rid, gw.Errorf(gw.CodeMethodNotAllowed, "WebSocket mode is not served on /v1/responses; POST with \"stream\": true instead")))
}

// allow answers 405 for other methods.
func allow(w http.ResponseWriter, r *http.Request, now time.Time, method string) bool {
	if r.Method == method || method == http.MethodGet && r.Method == http.MethodHead {
		return true
	}
	rid := id.New("req_", now)
	w.Header().Set(HeaderRequestID, rid)
	w.Header().Set("Allow", method)
	writeError(w, plain, rid, gw.Errorf(gw.CodeMethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, method))
	return false
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining", "reason": "draining"})
		return
	}
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			s.cfg.Logger.Warn("not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": "store"})
			return
		}
	}
	var details []string
	reason := ""
	if s.cfg.Degraded != nil {
		if d := s.cfg.Degraded(); d != "" {
			details = append(details, d)
			reason = "ratelimits"
		}
	}
	var vendors []vendorState
	if s.cfg.Health != nil {
		n := len(details)
		vendors, details = vendorStates(s.cfg.Health(), s.cfg.Now(), details)
		if len(details) > n && reason == "" {
			reason = "vendors"
		}
	}
	if len(details) == 0 {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return
	}
	// The public answer says what, in one word; which vendor, breaker or
	// key is for the operator (the admin token, and the metrics): an
	// outsider must not watch the effect of what it sends.
	if s.cfg.ReadyDetail == nil || !s.cfg.ReadyDetail(r) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "degraded", "reason": reason})
		return
	}
	writeJSON(w, http.StatusOK, readyDetail{Status: "degraded", Reason: reason, Detail: strings.Join(details, "; "), Vendors: vendors})
}

// readyDetail is /readyz's answer while something runs degraded.
type readyDetail struct {
	Status  string        `json:"status"`
	Reason  string        `json:"reason"`
	Detail  string        `json:"detail"`
	Vendors []vendorState `json:"vendors,omitempty"`
}

// vendorState is a vendor whose breaker is not closed or whose key pool
// lost or rests keys.
type vendorState struct {
	Vendor       string     `json:"vendor"`
	Breaker      string     `json:"breaker"`
	RetryAfterMs int64      `json:"retry_after_ms,omitempty"`
	Keys         []keyState `json:"keys,omitempty"`
}

type keyState struct {
	Name         string `json:"name"`
	State        string `json:"state"` // "out", "resting", "open", "half-open"
	Reason       string `json:"reason,omitempty"`
	RetryAfterMs int64  `json:"retry_after_ms,omitempty"`
}

// vendorStates lists the vendors that are not fully healthy, adding a
// line for each to details.
func vendorStates(hs []gw.VendorHealth, now time.Time, details []string) ([]vendorState, []string) {
	var out []vendorState
	for _, h := range hs {
		v := vendorState{Vendor: h.Vendor, Breaker: h.Breaker}
		if h.Breaker == gw.BreakerOpen {
			v.RetryAfterMs = max(h.RetryAt.Sub(now).Milliseconds(), 0)
		}
		for _, k := range h.Keys {
			ks := keyState{Name: k.Name}
			switch {
			case k.Out:
				ks.State, ks.Reason = "out", k.Reason
			case k.Breaker != gw.BreakerClosed:
				ks.State = k.Breaker
				if k.Breaker == gw.BreakerOpen {
					ks.RetryAfterMs = max(k.RetryAt.Sub(now).Milliseconds(), 0)
				}
			case !k.RestUntil.IsZero():
				ks.State, ks.RetryAfterMs = "resting", max(k.RestUntil.Sub(now).Milliseconds(), 0)
			default:
				continue
			}
			v.Keys = append(v.Keys, ks)
		}
		if v.Breaker == gw.BreakerClosed && len(v.Keys) == 0 {
			continue
		}
		line := h.Vendor + ": breaker " + h.Breaker
		for _, k := range v.Keys {
			line += ", key " + k.Name + " " + k.State
		}
		details = append(details, line)
		out = append(out, v)
	}
	return out, details
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
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
func (s *Server) logRequest(ctx context.Context, sw *statusWriter, rid string, shape gw.Shape, vendor, model string, start time.Time, rec *gw.Record) {
	attrs := []slog.Attr{
		slog.String("request_id", rid),
		slog.String("endpoint", string(shape)),
		slog.Int("status", sw.status),
		slog.Duration("duration", s.cfg.Now().Sub(start)),
	}
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
	level := slog.LevelInfo
	if sw.err != nil {
		attrs = append(attrs, slog.String("error", string(sw.err.Code)))
		if sw.status >= 500 {
			level = slog.LevelWarn
			if sw.err.Err != nil {
				attrs = append(attrs, slog.String("cause", sw.err.Err.Error()))
			}
		}
	}
	s.cfg.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// chat serves a chat request of shape sh.
func (s *Server) chat(rw http.ResponseWriter, r *http.Request, sh shape.Shape) {
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
	fail := func(err error) { writeError(w, sh, rid, gw.AsError(err)) }
	if r.Method != http.MethodPost {
		h.Set("Allow", http.MethodPost)
		fail(gw.Errorf(gw.CodeMethodNotAllowed, "%s is not allowed on %s; use POST", r.Method, r.URL.Path))
		return
	}
	if s.draining.Load() {
		fail(&gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is shutting down; retry", RetryAfter: time.Second})
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			fail(gw.Errorf(gw.CodeInvalidRequest, "Content-Type must be application/json, not %q", ct))
			return
		}
	}
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
	body, held, err := s.readBody(w, r)
	defer s.bodyBytes.Add(-held)
	if err != nil {
		fail(err)
		return
	}
	in := proxy.Inbound{RequestID: rid, Endpoint: endpoint, Principal: principal, Body: body, Header: r.Header, Received: received, Span: span}
	// Read once, for routing, hold sizing and the guard (see the
	// reqbody package: keys are read as the vendors read them, and what
	// the guard cannot read is refused here).
	env, err := sh.Parse(r.URL.Path, body)
	if err != nil {
		gwy.Refuse(ctx, in, err)
		fail(err)
		return
	}
	in.Stream, in.MaxOutput, in.Text = env.Stream, env.MaxOutput, env.Text
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
		if body, err = rawjson.Delete(body, "models"); err != nil {
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
	// A Responses request's canonical form joins the conversation it
	// continues, kept by the server's state (see openResponses).
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

	x, err := gwy.Begin(ctx, in)
	xch = x
	h.Set(optimize.Header, x.OptimizeHeader())
	if d := x.Limit; d.RequestsLimit > 0 {
		h.Set(headerRateLimit, strconv.FormatInt(d.RequestsLimit, 10))
		h.Set(headerRateRemain, strconv.FormatInt(max(d.RequestsRemaining, 0), 10))
	}
	if err != nil {
		fail(err)
		return
	}
	up, err := x.Call(ctx)
	served := x.Inbound()
	vendor, model = served.Vendor, served.Model
	h.Set(HeaderVendor, served.Vendor)
	h.Set(HeaderModel, served.Vendor+"/"+served.Model)
	h.Set(HeaderAttempts, strconv.Itoa(x.Tries()))
	if x.ImposedMaxOutput > 0 {
		h.Set(HeaderMaxTokens, strconv.FormatInt(x.ImposedMaxOutput, 10))
	}
	if in.Canonical != nil && len(in.Canonical.Dropped) > 0 && !x.Native() {
		h.Set(HeaderDropped, strings.Join(in.Canonical.Dropped, ","))
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
	if x.Native() {
		s.relay(w, r, x, up)
	} else {
		s.mapped(w, r, x, up, turn, rt)
	}
}

// finish records an outcome, logging a failure to do so.
func (s *Server) finish(ctx context.Context, x *proxy.Exchange, o proxy.Outcome) (gw.Money, error) {
	charge, err := x.Finish(ctx, o)
	if err != nil {
		s.cfg.Logger.Error("finish request", "request_id", x.Inbound().RequestID, "err", err)
	}
	return charge, err
}

// readBody reads the body, at most MaxBodyBytes, within BodyReadTimeout,
// answering 413 as soon as the body goes past the limit. Memory is taken
// as bytes arrive (Content-Length only sizes each step, see growBody),
// and counted against
// MaxInflightBytes: past it, 503 with Retry-After. held is what the
// caller must give back to the count when the request is done.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, held int64, err error) {
	return s.readBodyMax(w, r, s.cfg.MaxBodyBytes)
}

// readBodyMax is readBody with a limit of its own.
func (s *Server) readBodyMax(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, held int64, err error) {
	if r.ContentLength > limit {
		return nil, 0, gw.Errorf(gw.CodeRequestTooLarge, "request body is %d bytes; the limit is %d", r.ContentLength, limit)
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout)) == nil {
		// Cleared once read: the server's background read must not hit
		// it while a long answer streams.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	// One byte past the announced length, so the read that finds the
	// end needs no room of its own.
	buf := make([]byte, 0, min(max(r.ContentLength+1, 512), 16<<10))
	for {
		if len(buf) == cap(buf) {
			buf = growBody(buf, r.ContentLength)
		}
		if grow := int64(cap(buf)) - held; grow > 0 {
			if !s.reserve(grow) {
				return nil, held, &gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is receiving too many request bytes at once; retry", RetryAfter: time.Second}
			}
			held += grow
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, held, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, held, gw.Errorf(gw.CodeRequestTooLarge, "request body is over the %d-byte limit", limit)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, held, &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf("the request body did not arrive within %v", s.cfg.BodyReadTimeout), Err: err}
			}
			return nil, held, gw.Errorf(gw.CodeInvalidRequest, "could not read the request body")
		}
	}
}

// growBody makes room for more of a body whose len(buf) bytes have
// arrived: straight to the announced length (and the byte that finds the
// end) when that is at most eight times what has arrived, else eight
// times; doubling when the length is not announced. Memory still follows
// the bytes that arrive: a client announcing a large body and sending
// little never gets more than eight times what it sent.
func growBody(buf []byte, announced int64) []byte {
	want := 2 * cap(buf)
	if announced >= int64(len(buf)) {
		want = int(min(announced+1, 8*int64(len(buf))))
		want = max(want, len(buf)+1)
	}
	grown := make([]byte, len(buf), want)
	copy(grown, buf)
	return grown
}

// reserve counts n more body bytes in flight, unless that goes past
// MaxInflightBytes.
func (s *Server) reserve(n int64) bool {
	if s.bodyBytes.Add(n) > s.cfg.MaxInflightBytes {
		s.bodyBytes.Add(-n)
		return false
	}
	return true
}

// timedWriter sets the connection's write deadline when the answer's
// first byte (or its header) is written: the whole answer must be taken
// within d. A stream moves the deadline itself (startStream, flushWriter).
type timedWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	d     time.Duration
	armed bool
}

func (t *timedWriter) arm() {
	if !t.armed {
		t.armed = true
		_ = t.rc.SetWriteDeadline(time.Now().Add(t.d))
	}
}

func (t *timedWriter) WriteHeader(code int) { t.arm(); t.ResponseWriter.WriteHeader(code) }

func (t *timedWriter) Write(p []byte) (int, error) { t.arm(); return t.ResponseWriter.Write(p) }

func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
