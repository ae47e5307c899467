package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// MinTokenLen is the shortest admin token the API accepts.
const MinTokenLen = 32

// Throttling of failed sign-ins, per client address.
const (
	maxFailures   = 10
	failureWindow = time.Minute
	maxBody       = 64 << 10
)

// Handler serves the admin API under /admin/v1/ for callers presenting
// the admin token (Authorization: Bearer ...). A client address that
// fails maxFailures times in a minute is refused with 429 for the rest of
// that minute, even with the right token.
type Handler struct {
	svc    Service
	token  [32]byte
	now    func() time.Time
	log    *slog.Logger
	mux    *http.ServeMux
	mu     sync.Mutex
	failed map[string][]time.Time // client address -> failure times within the window
}

// NewHandler returns the API over svc, or an error when the token is
// shorter than MinTokenLen.
func NewHandler(svc Service, token string, logger *slog.Logger) (*Handler, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("admin API: the admin token must be at least %d characters", MinTokenLen)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{svc: svc, token: sha256.Sum256([]byte(token)), now: time.Now, log: logger, failed: map[string][]time.Time{}}
	m := http.NewServeMux()
	m.HandleFunc("POST /admin/v1/accounts", h.createAccount)
	m.HandleFunc("GET /admin/v1/accounts", h.accounts)
	m.HandleFunc("GET /admin/v1/accounts/{account}", h.account)
	m.HandleFunc("PATCH /admin/v1/accounts/{account}", h.updateAccount)
	m.HandleFunc("POST /admin/v1/accounts/{account}/topups", h.topUp)
	m.HandleFunc("GET /admin/v1/accounts/{account}/ledger", h.ledger)
	m.HandleFunc("POST /admin/v1/keys", h.createKey)
	m.HandleFunc("GET /admin/v1/keys", h.keys)
	m.HandleFunc("POST /admin/v1/keys/{id}/rotate", h.rotate)
	m.HandleFunc("POST /admin/v1/keys/{id}/revoke", h.revoke)
	m.HandleFunc("PATCH /admin/v1/keys/{id}", h.updateKey)
	m.HandleFunc("GET /admin/v1/keys/{id}", h.key)
	m.HandleFunc("GET /admin/v1/incidents", h.incidents)
	m.HandleFunc("GET /admin/v1/incidents/{id}", h.incident)
	m.HandleFunc("POST /admin/v1/incidents/{id}/review", h.review)
	m.HandleFunc("GET /admin/v1/mcp/grants/{subject}/{id}", h.mcpGrant)
	m.HandleFunc("PUT /admin/v1/mcp/grants/{subject}/{id}", h.setMCPGrant)
	m.HandleFunc("DELETE /admin/v1/mcp/grants/{subject}/{id}", h.deleteMCPGrant)
	m.HandleFunc("GET /admin/v1/mcp/calls", h.mcpCalls)
	m.HandleFunc(runRoutes[0], h.runDefaults)
	m.HandleFunc(runRoutes[1], h.setRunDefaults)
	h.handleMCPServers(m)
	h.handleRecon(m)
	m.HandleFunc("/admin/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, gw.Errorf(gw.CodeNotFound, "no such admin endpoint: %s %s", r.Method, r.URL.Path))
	})
	h.mux = m
	return h, nil
}

// Routes lists the API's method and path patterns, for the OpenAPI check.
func Routes() []string {
	return []string{
		"POST /admin/v1/accounts", "GET /admin/v1/accounts", "GET /admin/v1/accounts/{account}", "PATCH /admin/v1/accounts/{account}",
		"POST /admin/v1/accounts/{account}/topups", "GET /admin/v1/accounts/{account}/ledger",
		"POST /admin/v1/keys", "GET /admin/v1/keys", "POST /admin/v1/keys/{id}/rotate", "POST /admin/v1/keys/{id}/revoke", "PATCH /admin/v1/keys/{id}",
		"GET /admin/v1/keys/{id}",
		"GET /admin/v1/incidents", "GET /admin/v1/incidents/{id}", "POST /admin/v1/incidents/{id}/review",
		mcpRoutes[0], mcpRoutes[1], mcpRoutes[2], mcpRoutes[3],
		runRoutes[0], runRoutes[1],
		mcpServerRoutes[0], mcpServerRoutes[1], mcpServerRoutes[2], mcpServerRoutes[3], mcpServerRoutes[4],
		reconRoutes[0], reconRoutes[1], reconRoutes[2], reconRoutes[3],
	}
}

// HeaderRequestID carries each admin call's id, which its error envelope
// repeats as request_id (the gateway's header of the same name).
const HeaderRequestID = "X-Gateway-Request-Id"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set(HeaderRequestID, id.New("req_", h.now()))
	client := clientAddr(r)
	// The token is checked first: the throttle slows the failures, never
	// the holder of the right token (whoever else sends wrong ones from
	// the same address, or behind the same proxy).
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(tok))
	if !ok || subtle.ConstantTimeCompare(sum[:], h.token[:]) != 1 {
		if wait := h.throttled(client); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			writeError(w, gw.Errorf(gw.CodeRateLimited, "too many failed sign-ins from this address; retry later"))
			return
		}
		h.fail(client)
		h.log.Warn("admin API: bad token", "client", client, "path", r.URL.Path)
		writeError(w, gw.Errorf(gw.CodeAuthentication, "the admin API needs the admin token: Authorization: Bearer <token>"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	h.mux.ServeHTTP(w, r)
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// throttled returns how long client must wait, 0 when it may try.
func (h *Handler) throttled(client string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	recent := h.failed[client][:0]
	for _, t := range h.failed[client] {
		if now.Sub(t) < failureWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) == 0 {
		delete(h.failed, client)
		return 0
	}
	h.failed[client] = recent
	if len(recent) >= maxFailures {
		return failureWindow - now.Sub(recent[0])
	}
	return 0
}

func (h *Handler) fail(client string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.failed) > 100_000 { // bound the table under a spray of addresses
		clear(h.failed)
	}
	h.failed[client] = append(h.failed[client], h.now())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the gateway's error envelope with the call's
// request_id.
func writeError(w http.ResponseWriter, err error) {
	e := gw.AsError(err)
	if e.Code == gw.CodeInternal {
		e = &gw.Error{Code: gw.CodeInternal, Message: "internal error"}
	}
	body := map[string]string{"type": string(e.Code), "message": e.Message}
	if rid := w.Header().Get(HeaderRequestID); rid != "" {
		body["request_id"] = rid
	}
	writeJSON(w, e.Code.Status(), map[string]any{"error": body})
}

// decode reads a JSON body into v; unknown fields are errors. Messages
// name the JSON field and type, never a Go type.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return gw.Errorf(gw.CodeRequestTooLarge, "the body is larger than %d bytes", maxBody)
		}
		return invalid("the body is not the expected JSON object: %s", decodeMessage(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("the body has data after its JSON object")
	}
	return nil
}

// decodeMessage says what is wrong with a body in the API's terms.
func decodeMessage(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Sprintf("want a JSON object, not %s", jsonKind(te.Value))
		}
		return fmt.Sprintf("%s must be %s, not %s", te.Field, wantKind(te.Type), jsonKind(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f
	}
	if strings.Contains(err.Error(), "Time") || strings.Contains(err.Error(), "parsing time") {
		// The only times in the API's bodies.
		return "expires_at must be an RFC 3339 time string such as 2026-12-01T00:00:00Z"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON value an UnmarshalTypeError saw.
func jsonKind(v string) string {
	switch {
	case v == "object", v == "array":
		return "an " + v
	case v == "string":
		return "a string"
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		if n := strings.TrimSpace(strings.TrimPrefix(v, "number")); n != "" {
			return "the number " + n
		}
		return "a number"
	}
	return v
}

// wantKind names the JSON a Go type takes.
func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		if t == reflect.TypeFor[time.Time]() {
			return "an RFC 3339 time string"
		}
		return "an object"
	case reflect.Pointer:
		return wantKind(t.Elem())
	}
	return "another type"
}

func reply[T any](w http.ResponseWriter, status int, v T, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, status, v)
}

func intParam(r *http.Request, name string) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, invalid("%s must be a non-negative integer", name)
	}
	return n, nil
}

func (h *Handler) createAccount(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	a, err := h.svc.CreateAccount(r.Context(), req.Name)
	reply(w, http.StatusCreated, a, err)
}

func (h *Handler) accounts(w http.ResponseWriter, r *http.Request) {
	list, err := h.svc.Accounts(r.Context())
	reply(w, http.StatusOK, map[string]any{"data": list}, err)
}

func (h *Handler) account(w http.ResponseWriter, r *http.Request) {
	a, err := h.svc.Account(r.Context(), r.PathValue("account"))
	reply(w, http.StatusOK, a, err)
}

func (h *Handler) topUp(w http.ResponseWriter, r *http.Request) {
	var req TopUpRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	res, err := h.svc.TopUp(r.Context(), r.PathValue("account"), req)
	status := http.StatusCreated
	if res != nil && res.Duplicate {
		status = http.StatusOK
	}
	reply(w, status, res, err)
}

func (h *Handler) ledger(w http.ResponseWriter, r *http.Request) {
	before, err := intParam(r, "before")
	if err != nil {
		writeError(w, err)
		return
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := h.svc.Ledger(r.Context(), r.PathValue("account"), before, int(min(limit, MaxLedgerPage+1)))
	reply(w, http.StatusOK, page, err)
}

func (h *Handler) updateAccount(w http.ResponseWriter, r *http.Request) {
	var req AccountUpdate
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	a, err := h.svc.UpdateAccount(r.Context(), r.PathValue("account"), req)
	reply(w, http.StatusOK, a, err)
}

func (h *Handler) key(w http.ResponseWriter, r *http.Request) {
	k, err := h.svc.Key(r.Context(), r.PathValue("id"))
	reply(w, http.StatusOK, k, err)
}

func (h *Handler) review(w http.ResponseWriter, r *http.Request) {
	var req ReviewRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	in, err := h.svc.ReviewIncident(r.Context(), r.PathValue("id"), req)
	reply(w, http.StatusOK, in, err)
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) {
	var req KeyRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	k, err := h.svc.CreateKey(r.Context(), req)
	reply(w, http.StatusCreated, k, err)
}

func (h *Handler) keys(w http.ResponseWriter, r *http.Request) {
	list, err := h.svc.Keys(r.Context())
	reply(w, http.StatusOK, map[string]any{"data": list}, err)
}

func (h *Handler) rotate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		GraceSeconds *int64 `json:"grace_seconds"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			writeError(w, err)
			return
		}
	}
	grace := DefaultRotateGrace
	if req.GraceSeconds != nil {
		if *req.GraceSeconds < 0 || *req.GraceSeconds > int64(MaxRotateGrace/time.Second) {
			writeError(w, invalid("grace_seconds must be between 0 and %d", int64(MaxRotateGrace/time.Second)))
			return
		}
		grace = time.Duration(*req.GraceSeconds) * time.Second
	}
	k, err := h.svc.RotateKey(r.Context(), r.PathValue("id"), grace)
	reply(w, http.StatusCreated, k, err)
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	k, err := h.svc.RevokeKey(r.Context(), r.PathValue("id"))
	reply(w, http.StatusOK, k, err)
}

func (h *Handler) updateKey(w http.ResponseWriter, r *http.Request) {
	var req KeyUpdate
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	k, err := h.svc.UpdateKey(r.Context(), r.PathValue("id"), req)
	reply(w, http.StatusOK, k, err)
}

func (h *Handler) incidents(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit")
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := h.svc.Incidents(r.Context(), int(min(limit, MaxLedgerPage+1)))
	reply(w, http.StatusOK, map[string]any{"data": list}, err)
}

func (h *Handler) incident(w http.ResponseWriter, r *http.Request) {
	in, err := h.svc.Incident(r.Context(), r.PathValue("id"))
	reply(w, http.StatusOK, in, err)
}
