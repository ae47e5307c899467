// Package server is the gateway's HTTP face: POST /v1/messages (shape M),
// POST /v1/chat/completions (shape C), POST /v1/responses (shape R, with
// its state routes in responses.go: GET and DELETE /v1/responses/{id},
// GET .../input_items, POST /v1/responses/input_tokens) and Gemini's
// model paths (shape G, gemini.go), GET /v1/models, GET /v1/balance (the
// calling key's money and limits), the token counts, /healthz, /readyz,
// /openapi.json and the admin and dashboard mounts.
//
// A chat request's path finds its ingress shape once (the registry in
// shapes.go) and the request is handed to the chat lifecycle (package
// chat), which runs the whole exchange, from authentication and the one
// read of the body to the settlement and the access log line. When the
// shutdown grace runs out, requests still running are cut (ErrShutdown)
// and record their outcome. Every response carries x-gateway-request-id
// (plus request-id on M and x-request-id on C); errors use the envelope
// of chat.WriteError.
package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/catalog"
	"github.com/gwlabs/gateway/chat"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
)

// Header names the gateway sets (the chat lifecycle's, package chat).
const (
	HeaderRequestID = chat.HeaderRequestID
	HeaderVendor    = chat.HeaderVendor
	HeaderModel     = chat.HeaderModel
	HeaderAttempts  = chat.HeaderAttempts
	HeaderCharge    = chat.HeaderCharge
	HeaderDropped   = chat.HeaderDropped
	HeaderMaxTokens = chat.HeaderMaxTokens
	// HeaderDroppedTools names the hosted tools a mapped Responses
	// request asked for and the vendor did not get.
	HeaderDroppedTools = chat.HeaderDroppedTools
	// defaultMaxCountBodySize is Config.MaxCountBodyBytes's default.
	defaultMaxCountBodySize = 8 << 20
)

// ErrShutdown is the cause with which a request's context is cancelled
// when the shutdown grace runs out (see chat.ErrShutdown).
var ErrShutdown = chat.ErrShutdown

// writeError sends e in shape's envelope (see chat.WriteError).
var writeError = chat.WriteError

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
	// MaxInflightBytesPerAccount and MaxInflightBytesPerKey bound one
	// account's and one key's share of it (default a quarter, at least
	// two of the largest bodies; past a share, 429 with Retry-After).
	MaxInflightBytesPerAccount int64
	MaxInflightBytesPerKey     int64
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
	// MCP serves /mcp (package mcp); nil: 404. Its streams are bounded
	// by the endpoint, not by WriteTimeout.
	MCP http.Handler
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
	// life serves the chat requests, the whole exchange (package chat).
	life *chat.Lifecycle
	// countSlots bounds the large token counts worked on at once (half
	// the CPUs), so that free counts cannot take the CPU from requests.
	countSlots chan struct{}
	// countShares bounds one account's share of them (half, at least one).
	countShares *accountSlots
	// o200kCodec is OpenAI's encoding, for count_tokens estimates,
	// loaded on first use.
	o200kOnce  sync.Once
	o200kCodec *codec.Codec
}

// Wait waits for the chat requests being served to return, or for ctx.
func (s *Server) Wait(ctx context.Context) error { return s.life.Wait(ctx) }

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = chat.DefaultMaxBodyBytes
	}
	if cfg.MaxCountBodyBytes <= 0 {
		cfg.MaxCountBodyBytes = defaultMaxCountBodySize
	}
	cfg.MaxCountBodyBytes = min(cfg.MaxCountBodyBytes, cfg.MaxBodyBytes)
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 60 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	slots := max(1, runtime.GOMAXPROCS(0)/2)
	s := &Server{cfg: cfg, countSlots: make(chan struct{}, slots), countShares: newAccountSlots(slots / 2)}
	s.life = chat.New(chat.Config{
		Gateway: cfg.Gateway, Shapes: shapes,
		MaxBodyBytes: cfg.MaxBodyBytes, MaxInflightBytes: cfg.MaxInflightBytes, MaxInflightBytesPerAccount: cfg.MaxInflightBytesPerAccount, MaxInflightBytesPerKey: cfg.MaxInflightBytesPerKey, BodyReadTimeout: cfg.BodyReadTimeout,
		MaxResponseBytes: cfg.MaxResponseBytes, MaxEventBytes: cfg.MaxEventBytes, StreamWriteTimeout: cfg.StreamWriteTimeout,
		State: cfg.State, Routes: cfg.Routes, Suggest: s.withSuggestion, Now: cfg.Now, Logger: cfg.Logger,
	})
	return s
}

// SetDraining makes /readyz fail and new chat requests answer 503, while
// requests already running finish.
func (s *Server) SetDraining(v bool) { s.draining.Store(v); s.life.SetDraining(v) }

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/mcp" && s.cfg.MCP != nil {
		s.cfg.MCP.ServeHTTP(w, r)
		return
	}
	if s.cfg.WriteTimeout > 0 {
		w = &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: s.cfg.WriteTimeout}
	}
	// The ingress shape of a chat path, looked up once.
	sh := shapes.ByPath(r.URL.Path)
	switch p := r.URL.Path; {
	case p == "/v1/messages/count_tokens":
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.countTokens(w, r)
		}
	case geminiPath(r):
		s.gemini(w, r)
	case p == "/v1/embeddings":
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.embeddings(w, r)
		}
	case p == "/v1/responses" && websocketUpgrade(r):
		s.refuseUpgrade(w)
	case sh != nil:
		s.life.Serve(w, r, sh)
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
	case p == "/v1/runs" || strings.HasPrefix(p, "/v1/runs/"):
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.runs(w, r)
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
