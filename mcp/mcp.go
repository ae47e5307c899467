// Package mcp is the gateway's /mcp endpoint: the MCP streamable HTTP
// transport (protocol versions 2025-06-18 and 2025-11-25; POST, GET for
// the server's stream, DELETE to end a session), authenticated with the
// gateway key, in front of the operator's upstream MCP servers
// (streamable HTTP servers with credentials the gateway holds, and stdio
// servers it starts and restarts). Their tools, prompts and resources
// are listed under "SERVER__name", filtered by the caller's allow lists
// (per key and per account, applied alike to lists and calls).
//
// The protocol is the official Go SDK's (sdk.StreamableServerTransport,
// sdk.Server and sdk.Client); this package adds what a gateway does
// around it. One request, top to bottom, in (*Endpoint).ServeHTTP:
//
//	method, draining -> authenticate (proxy) -> bounded body, one
//	JSON-RPC message (no batches) -> the session: new on initialize,
//	else this instance's or rebuilt from the store (404 when it ended)
//	-> tools/call: (*Endpoint).callTool, the call's whole journey;
//	anything else: the SDK's session, whose lists go through
//	(*Endpoint).receive.
//
// A tool call (call.go) is admitted and recorded through proxy like a
// chat request: allow lists, the guard's cool-down, its own rate-limit
// bucket (429 with Retry-After), a hold of its price, the server's
// breakers (isolated by account) and time-out, then the guard on the
// result (third-party text: a flagged result becomes a tool error naming
// the incident), then settle and a record (endpoint "mcp", vendor the
// server, model the tool).
//
// Sessions live in every instance's memory and in the store (SessionStore,
// kind "mcp_session"): an instance that does not know a session rebuilds
// it from there, so no load-balancer affinity is needed. A revoked key's
// sessions end at once (Recheck, run when the keys change).
package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/shape"
)

// Header names of the transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
	// HeaderRun names the caller's run a tool call counts toward.
	HeaderRun = "X-Gateway-Run"
	// HeaderRequestID is the gateway's request id of every answer.
	HeaderRequestID = "X-Gateway-Request-Id"
)

// Versions are the protocol versions the endpoint negotiates, newest
// first.
var Versions = []string{"2025-11-25", "2025-06-18"}

// legacyVersion is accepted in the MCP-Protocol-Version header for the
// clients that still send it, though initialize never agrees to it.
const legacyVersion = "2025-03-26"

// sessionKind is the store's kind of a session's entry.
const sessionKind = "mcp_session"

// maxSessionState bounds a session's stored state (its initialize
// parameters: the client's name and capabilities).
const maxSessionState = 16 << 10

// Endpoint serves /mcp. It is safe for concurrent use.
type Endpoint struct {
	cfg    Config
	srv    *sdk.Server
	set    atomic.Pointer[serverSet] // what is served (see Refresh)
	grants grantCache

	refreshMu sync.Mutex // one Refresh at a time

	draining atomic.Bool
	mu       sync.Mutex
	sessions map[string]*session
	stop     chan struct{}
	stopOnce sync.Once
}

// session is one caller's MCP session on this instance.
type session struct {
	id        string
	keyID     string
	accountID string
	// credential is the Authorization value that opened it (memory
	// only), to recheck the key when keys change.
	credential string
	principal  atomic.Pointer[gw.Principal]
	transport  *sdk.StreamableServerTransport
	ss         *sdk.ServerSession
	used       atomic.Int64 // unix nanoseconds of the last request
	savedAt    atomic.Int64 // unix nanoseconds the store's expiry was last moved
	checkedAt  atomic.Int64 // unix nanoseconds the store last confirmed it
	// local: its state is too large for the store (a client's huge
	// capabilities), so only this instance serves it.
	local atomic.Bool
}

// storedSession is a session's entry in the store.
type storedSession struct {
	KeyID      string                `json:"key_id"`
	Initialize *sdk.InitializeParams `json:"initialize"`
	Version    string                `json:"version"`
	LogLevel   sdk.LoggingLevel      `json:"log_level,omitempty"`
}

// New returns an Endpoint over cfg's servers (none started yet: each
// opens on first use).
func New(cfg Config) (*Endpoint, error) {
	if cfg.Gateway == nil {
		return nil, errors.New("mcp: Gateway is required")
	}
	cfg.defaults()
	if cfg.Grants == nil {
		cfg.Grants = cfg.Gateway.Store()
	}
	e := &Endpoint{cfg: cfg, sessions: map[string]*session{}, stop: make(chan struct{})}
	e.grants = grantCache{store: cfg.Grants, now: cfg.Now, entries: map[string]grantEntry{}}
	set := newServerSet()
	for _, sc := range cfg.Servers {
		if err := sc.Validate(); err != nil {
			return nil, err
		}
		if _, dup := set.byName[sc.Name]; dup {
			return nil, fmt.Errorf("mcp server %q is configured twice", sc.Name)
		}
		set.add(newServer(e, sc), false)
	}
	e.set.Store(set)
	e.srv = sdk.NewServer(&sdk.Implementation{Name: "gateway", Title: "Model gateway MCP", Version: "1"}, &sdk.ServerOptions{
		SupportedProtocolVersions: Versions,
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{ListChanged: true},
			Prompts:   &sdk.PromptCapabilities{ListChanged: true},
			Resources: &sdk.ResourceCapabilities{ListChanged: true},
			Logging:   &sdk.LoggingCapabilities{},
			// Completions reach the prompt's server (complete).
			Completions: &sdk.CompletionCapabilities{},
		},
		Logger: cfg.Logger,
	})
	e.srv.AddReceivingMiddleware(e.receive)
	go e.sweep()
	go e.warm()
	if cfg.Stored != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.Refresh(ctx); err != nil {
			// Served from the next poll on.
			cfg.Logger.Warn("mcp: stored servers not read at start", "err", err)
		}
		cancel()
		go e.poll()
	}
	return e, nil
}

// warm opens every server's session and reads its tools in the
// background, so that the first caller does not wait for a stdio
// process to start; a server that fails is tried again on use.
func (e *Endpoint) warm() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-e.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var wg sync.WaitGroup
	for _, s := range e.servers().list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.tools(ctx); err != nil {
				e.cfg.Logger.Warn("mcp server not reachable at start", "server", s.name, "err", err)
			}
		}()
	}
	wg.Wait()
}

// Close ends every session and upstream server (stdio processes exit).
func (e *Endpoint) Close() {
	e.stopOnce.Do(func() { close(e.stop) })
	e.mu.Lock()
	all := make([]*session, 0, len(e.sessions))
	for _, s := range e.sessions {
		all = append(all, s)
	}
	e.mu.Unlock()
	for _, s := range all {
		_ = s.ss.Close()
	}
	e.refreshMu.Lock() // no Refresh starts a server after this
	defer e.refreshMu.Unlock()
	for _, s := range e.servers().list {
		s.close()
	}
}

// SetDraining makes new requests answer 503 while those running finish.
func (e *Endpoint) SetDraining(v bool) { e.draining.Store(v) }

// Health reports each server's breaker and, while it is down, why;
// stored servers that cannot be served are reported out, with why.
func (e *Endpoint) Health() []gw.VendorHealth {
	now := e.cfg.Now()
	set := e.servers()
	out := make([]gw.VendorHealth, 0, len(set.list)+len(set.skipped))
	for _, s := range set.list {
		out = append(out, s.health(now))
	}
	return append(out, set.skipped...)
}

// ServeHTTP serves one request to /mcp, each step once, in this order.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := e.cfg.Now()
	rid := id.New("req_", now)
	w.Header().Set(HeaderRequestID, rid)
	fail := func(err error) { writeError(w, rid, gw.AsError(err)) }
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		fail(gw.Errorf(gw.CodeMethodNotAllowed, "%s is not allowed on /mcp; use POST, GET or DELETE", r.Method))
		return
	}
	if e.draining.Load() {
		fail(&gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is shutting down; retry", RetryAfter: time.Second})
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !e.originAllowed(o) {
		writeErrorStatus(w, rid, http.StatusForbidden, &gw.Error{Code: gw.CodeInvalidRequest, ErrorCode: "origin_not_allowed",
			Message: fmt.Sprintf("requests from the browser origin %q are not served on /mcp (DNS rebinding protection); the operator may allow it", clip(o, 200))})
		return
	}
	// Authenticate.
	gwy := e.cfg.Gateway
	credential := r.Header.Get("Authorization")
	p, err := gwy.Authenticate(r.Context(), credential)
	if err != nil {
		fail(err)
		return
	}
	if v := r.Header.Get(headerProtocol); v != "" && !slices.Contains(Versions, v) && v != legacyVersion {
		fail(gw.Errorf(gw.CodeInvalidRequest, "MCP-Protocol-Version %q is not supported; this gateway speaks %v", v, Versions))
		return
	}
	// The body: bounded, one JSON-RPC message.
	var msg jsonrpc.Message
	if r.Method == http.MethodPost {
		if msg = e.readMessage(w, r, rid); msg == nil {
			return
		}
	}
	// The session.
	sid := r.Header.Get(headerSession)
	var s *session
	if sid == "" && len(e.servers().list) == 0 {
		fail(gw.Errorf(gw.CodeNotFound, "no MCP server is configured on this gateway"))
		return
	}
	switch {
	case sid == "" && r.Method != http.MethodPost:
		fail(gw.Errorf(gw.CodeInvalidRequest, "%s /mcp needs the Mcp-Session-Id header", r.Method))
		return
	case sid == "":
		if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "initialize" {
			writeRPCError(w, http.StatusBadRequest, msg, jsonrpc.CodeInvalidRequest, "a request without Mcp-Session-Id must be initialize", nil)
			return
		}
		if s, err = e.open(r.Context(), p, credential); err != nil {
			fail(err)
			return
		}
	default:
		if s, err = e.find(r.Context(), sid, p, credential); err != nil {
			fail(err)
			return
		}
		if s == nil {
			writeRPCError(w, http.StatusNotFound, msg, jsonrpc.CodeInvalidRequest, "session not found: it ended or expired; initialize a new one", nil)
			return
		}
	}
	s.principal.Store(p)
	s.used.Store(now.UnixNano())
	switch {
	case r.Method == http.MethodDelete:
		e.end(r.Context(), s)
		w.WriteHeader(http.StatusNoContent)
		return
	case r.Method == http.MethodPost:
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.IsCall() {
			// The tool call's whole journey, answered as JSON.
			e.callTool(w, r, rid, s, req)
			return
		}
	}
	// Anything else goes to the SDK's session (initialize, lists,
	// ping, logging, notifications, the GET stream).
	s.transport.ServeHTTP(w, r)
	if sid == "" {
		e.opened(r.Context(), s)
	} else {
		e.touch(r.Context(), s)
	}
}

// originAllowed reports whether a browser origin may reach the
// endpoint: a loopback one, or one the operator allowed.
func (e *Endpoint) originAllowed(origin string) bool {
	if slices.Contains(e.cfg.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	switch h := u.Hostname(); h {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// readMessage reads a POST body: at most MaxBodyBytes, one JSON-RPC
// message (a batch is refused: the negotiated versions have none). It
// answers the caller and returns nil when the body cannot go on; the
// body is left readable again for the transport.
func (e *Endpoint) readMessage(w http.ResponseWriter, r *http.Request, rid string) jsonrpc.Message {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, e.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, rid, gw.Errorf(gw.CodeRequestTooLarge, "the request body is over %d bytes", e.cfg.MaxBodyBytes))
			return nil
		}
		writeError(w, rid, gw.Errorf(gw.CodeInvalidRequest, "could not read the request body"))
		return nil
	}
	if ct := r.Header.Get("Content-Type"); ct == "" || !isJSON(ct) {
		writeRPCError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.CodeInvalidRequest, "Content-Type must be application/json", nil)
		return nil
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported (protocol 2025-06-18 and later); send one message per request", nil)
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		code := int64(jsonrpc.CodeInvalidRequest)
		if !json.Valid(body) {
			code = jsonrpc.CodeParseError
		}
		writeRPCError(w, http.StatusBadRequest, nil, code, "malformed JSON-RPC message: "+clip(err.Error(), 200), nil)
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return msg
}

func isJSON(ct string) bool {
	base, _, _ := bytes.Cut([]byte(ct), []byte(";"))
	return string(bytes.ToLower(bytes.TrimSpace(base))) == "application/json"
}

// open starts a new session for p.
func (e *Endpoint) open(ctx context.Context, p *gw.Principal, credential string) (*session, error) {
	e.mu.Lock()
	n := len(e.sessions)
	e.mu.Unlock()
	if n >= e.cfg.MaxSessions {
		return nil, &gw.Error{Code: gw.CodeOverloaded, Message: "this gateway serves as many MCP sessions as it may; retry later", RetryAfter: 5 * time.Second}
	}
	return e.connect(ctx, rand.Text(), p, credential, nil)
}

// connect makes the SDK's session sid on this instance, from state when
// it is rebuilt from the store.
func (e *Endpoint) connect(ctx context.Context, sid string, p *gw.Principal, credential string, state *sdk.ServerSessionState) (*session, error) {
	s := &session{id: sid, keyID: p.KeyID, accountID: p.AccountID, credential: credential}
	s.principal.Store(p)
	s.transport = &sdk.StreamableServerTransport{SessionID: sid}
	var opts *sdk.ServerSessionOptions
	if state != nil {
		opts = &sdk.ServerSessionOptions{State: state}
	}
	ss, err := e.srv.Connect(context.WithoutCancel(ctx), s.transport, opts)
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInternal, Message: "could not open the MCP session", Err: err}
	}
	s.ss = ss
	now := e.cfg.Now().UnixNano()
	s.used.Store(now)
	s.checkedAt.Store(now)
	e.mu.Lock()
	e.sessions[sid] = s
	e.mu.Unlock()
	go func() {
		_ = ss.Wait()
		e.mu.Lock()
		if e.sessions[sid] == s {
			delete(e.sessions, sid)
		}
		e.mu.Unlock()
	}()
	return s, nil
}

// opened keeps a session that completed initialize in the store (and
// drops one that did not).
func (e *Endpoint) opened(ctx context.Context, s *session) {
	ip := s.ss.InitializeParams()
	if ip == nil {
		_ = s.ss.Close()
		return
	}
	e.save(ctx, s)
}

// save writes the session's entry with a fresh expiry.
func (e *Endpoint) save(ctx context.Context, s *session) {
	if e.cfg.Sessions == nil {
		return
	}
	ip := s.ss.InitializeParams()
	if ip == nil {
		return
	}
	st := storedSession{KeyID: s.keyID, Initialize: ip, Version: negotiated(ip.ProtocolVersion)}
	b, err := json.Marshal(st)
	if err != nil || len(b) > maxSessionState {
		s.local.Store(true)
		e.cfg.Logger.Warn("mcp session kept on this instance only: its state is too large for the store", "session", s.id, "bytes", len(b), "err", err)
		return
	}
	now := e.cfg.Now()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.cfg.Sessions.PutState(wctx, sessionKind, s.accountID, s.id, b, now.Add(e.cfg.SessionIdle)); err != nil {
		e.cfg.Logger.Warn("mcp session not kept", "session", s.id, "err", err)
		return
	}
	s.savedAt.Store(now.UnixNano())
}

// touch moves the stored session's expiry, at most once a minute.
func (e *Endpoint) touch(ctx context.Context, s *session) {
	if e.cfg.Now().Sub(time.Unix(0, s.savedAt.Load())) > min(time.Minute, e.cfg.SessionIdle/4) {
		e.save(ctx, s)
	}
}

// negotiated is the version the SDK agrees to for a client's asked one.
func negotiated(asked string) string {
	if slices.Contains(Versions, asked) {
		return asked
	}
	return Versions[0]
}

// recheckAfter is how long a session this instance serves is trusted
// before the store confirms it still exists (another instance may have
// ended it).
const recheckAfter = 5 * time.Second

// find returns the caller's session sid: this instance's, or rebuilt from
// the store; nil when there is none for this key (ended, expired, or
// another key's: a session is bound to the key that opened it).
func (e *Endpoint) find(ctx context.Context, sid string, p *gw.Principal, credential string) (*session, error) {
	if len(sid) > 128 {
		return nil, nil
	}
	e.mu.Lock()
	s := e.sessions[sid]
	e.mu.Unlock()
	now := e.cfg.Now()
	if s != nil {
		if s.keyID != p.KeyID {
			return nil, nil
		}
		if e.cfg.Sessions == nil || s.local.Load() || now.Sub(time.Unix(0, s.checkedAt.Load())) < recheckAfter {
			return s, nil
		}
	}
	if e.cfg.Sessions == nil {
		return nil, nil
	}
	b, err := e.cfg.Sessions.GetState(ctx, sessionKind, p.AccountID, sid, now)
	if errors.Is(err, gw.ErrNotFound) {
		if s != nil {
			_ = s.ss.Close() // ended elsewhere
		}
		return nil, nil
	}
	if err != nil {
		if s != nil {
			return s, nil // the store is down: trust this instance's copy
		}
		return nil, &gw.Error{Code: gw.CodeOverloaded, Message: "the session store cannot be read right now; retry", RetryAfter: time.Second, Err: err}
	}
	var st storedSession
	if err := json.Unmarshal(b, &st); err != nil || st.KeyID != p.KeyID || st.Initialize == nil {
		return nil, nil
	}
	if s != nil {
		s.checkedAt.Store(now.UnixNano())
		return s, nil
	}
	state := &sdk.ServerSessionState{InitializeParams: st.Initialize, InitializedParams: &sdk.InitializedParams{}, NegotiatedProtocolVersion: st.Version, LogLevel: st.LogLevel}
	return e.connect(ctx, sid, p, credential, state)
}

// end ends a session everywhere: here at once, in the store for the
// other instances.
func (e *Endpoint) end(ctx context.Context, s *session) {
	_ = s.ss.Close()
	e.mu.Lock()
	if e.sessions[s.id] == s {
		delete(e.sessions, s.id)
	}
	e.mu.Unlock()
	if e.cfg.Sessions != nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// An entry expired now is never read again; the sweep deletes it.
		if err := e.cfg.Sessions.PutState(wctx, sessionKind, s.accountID, s.id, []byte("{}"), e.cfg.Now()); err != nil {
			e.cfg.Logger.Warn("mcp session end not kept", "session", s.id, "err", err)
		}
	}
}

// Recheck authenticates every session's key again and ends the sessions
// of keys that no longer work (revoked, expired): the gateway runs it
// whenever keys change anywhere, so a revoked key's open streams and
// calls end at once. It also drops the cached allow lists and reads
// the stored servers again (Refresh: a change of one moves the key
// generation too).
func (e *Endpoint) Recheck(ctx context.Context) {
	e.grants.forgetAll()
	if err := e.Refresh(ctx); err != nil {
		e.cfg.Logger.Warn("mcp: stored servers not read", "err", err)
	}
	e.mu.Lock()
	all := make([]*session, 0, len(e.sessions))
	for _, s := range e.sessions {
		all = append(all, s)
	}
	e.mu.Unlock()
	for _, s := range all {
		p, err := e.cfg.Gateway.Authenticate(ctx, s.credential)
		if err == nil && p.KeyID == s.keyID {
			s.principal.Store(p)
			continue
		}
		if gw.ErrorCode(err) == gw.CodeAuthentication || err == nil {
			e.cfg.Logger.Info("mcp session ended: its key no longer works", "session", s.id, "key_id", s.keyID)
			e.end(ctx, s)
		}
	}
}

// sweep ends sessions idle for SessionIdle.
func (e *Endpoint) sweep() {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		now := e.cfg.Now()
		e.mu.Lock()
		var idle []*session
		for _, s := range e.sessions {
			if now.Sub(time.Unix(0, s.used.Load())) > e.cfg.SessionIdle {
				idle = append(idle, s)
			}
		}
		e.mu.Unlock()
		for _, s := range idle {
			_ = s.ss.Close()
		}
	}
}

// sessionOf is the gateway's session of an SDK request.
func (e *Endpoint) sessionOf(req sdk.Request) *session {
	ss, ok := req.GetSession().(*sdk.ServerSession)
	if !ok || ss == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessions[ss.ID()]
}

// writeError answers with the gateway's error envelope (authentication,
// method, size, draining).
func writeError(w http.ResponseWriter, rid string, e *gw.Error) {
	writeErrorStatus(w, rid, e.Code.Status(), e)
}

// writeErrorStatus is writeError with another status than the code's.
func writeErrorStatus(w http.ResponseWriter, rid string, status int, e *gw.Error) {
	h := w.Header()
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(max((e.RetryAfter+time.Second-1)/time.Second, 1))))
	}
	if e.Code == gw.CodeAuthentication {
		h.Set("WWW-Authenticate", `Bearer realm="gateway"`)
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error shape.ErrorObject `json:"error"`
	}{shape.NewErrorObject(rid, e)})
}

// writeRPCError answers a JSON-RPC error to msg (its id, when it is a
// call) with the HTTP status.
func writeRPCError(w http.ResponseWriter, status int, msg jsonrpc.Message, code int64, message string, data any) {
	var rid jsonrpc.ID
	if req, ok := msg.(*jsonrpc.Request); ok {
		rid = req.ID
	}
	jerr := &jsonrpc.Error{Code: code, Message: message}
	if data != nil {
		jerr.Data, _ = json.Marshal(data)
	}
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Error: jerr})
	if err != nil {
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
