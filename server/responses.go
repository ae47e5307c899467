package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/chat"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/shape/responses"
)

// responseByID serves GET and DELETE /v1/responses/{id} and GET
// /v1/responses/{id}/input_items for responses the gateway keeps
// (mapped routes, store on), for the calling key's account only.
func (s *Server) responseByID(w http.ResponseWriter, r *http.Request) {
	rid := id.New("req_", s.cfg.Now())
	h := w.Header()
	h.Set(HeaderRequestID, rid)
	h.Set("X-Request-Id", rid)
	fail := func(err error) { writeError(w, rShape, rid, gw.AsError(err)) }
	rest := strings.TrimPrefix(r.URL.Path, "/v1/responses/")
	respID, sub, _ := strings.Cut(rest, "/")
	method := http.MethodGet
	switch {
	case sub == "input_items":
	case sub == "" && r.Method == http.MethodDelete:
		method = http.MethodDelete
	case sub == "":
	default:
		fail(gw.Errorf(gw.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		if sub == "" {
			h.Set("Allow", "GET, DELETE")
		} else {
			h.Set("Allow", http.MethodGet)
		}
		fail(gw.Errorf(gw.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	p, err := s.cfg.Gateway.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		fail(err)
		return
	}
	if s.cfg.State == nil {
		fail(&gw.Error{Code: gw.CodeNotFound, Message: "no response with id " + chat.QuoteID(respID) + " is kept by this gateway", ErrorCode: "response_not_found"})
		return
	}
	ctx := r.Context()
	if _, _, err := s.cfg.State.LoadResponse(ctx, p.AccountID, respID); gw.ErrorCode(err) == gw.CodeNotFound {
		// Not kept here: a response OpenAI keeps for this account
		// (the native route) is asked of OpenAI.
		if owned, _, oerr := s.cfg.State.OwnsResponse(ctx, p.AccountID, respID); oerr == nil && owned {
			s.forwardResponseState(w, r.WithContext(countScope(ctx, p)), method, rest, fail)
			return
		}
	}
	if method == http.MethodDelete {
		if err := s.cfg.State.DeleteResponse(ctx, p.AccountID, respID); err != nil {
			fail(err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": respID, "object": "response", "deleted": true})
		return
	}
	st, _, err := s.cfg.State.LoadResponse(ctx, p.AccountID, respID)
	if err != nil {
		fail(err)
		return
	}
	if sub == "" {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(st.Object)
		return
	}
	items := make([]json.RawMessage, 0, len(st.Input))
	// Newest first unless order=asc, as the API lists them.
	if r.URL.Query().Get("order") == "asc" {
		items = append(items, st.Input...)
	} else {
		for i := len(st.Input) - 1; i >= 0; i-- {
			items = append(items, st.Input[i])
		}
	}
	list := map[string]any{"object": "list", "data": items, "has_more": false, "first_id": nil, "last_id": nil}
	if n := len(items); n > 0 {
		list["first_id"], list["last_id"] = itemID(items[0]), itemID(items[n-1])
	}
	writeJSON(w, http.StatusOK, list)
}

func itemID(raw json.RawMessage) any {
	var v struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &v) == nil && v.ID != "" {
		return v.ID
	}
	return nil
}

// countResponseTokens serves POST /v1/responses/input_tokens (openai-go's
// and openai-node's responses.inputTokens.count) on every prefix,
// governed as count_tokens is (key, body limit, allow list, the counts'
// rate-limit bucket, the guard) and never billed: the request is mapped
// as for POST /v1/responses
// (the kept conversation of previous_response_id included) and counted by
// the vendor's own free endpoint where it has one (anthropic/, google/),
// else estimated in OpenAI's o200k encoding as count_tokens does.
func (s *Server) countResponseTokens(w http.ResponseWriter, r *http.Request) {
	rid := id.New("req_", s.cfg.Now())
	w.Header().Set(HeaderRequestID, rid)
	w.Header().Set("X-Request-Id", rid)
	fail := func(err error) { writeError(w, rShape, rid, gw.AsError(err)) }
	gwy := s.cfg.Gateway
	principal, body, done, err := s.countIntake(w, r, rShape)
	defer done()
	if err != nil {
		fail(err)
		return
	}
	req, err := responses.Parse(body)
	if err != nil {
		fail(err)
		return
	}
	target, err := route.Parse(req.Model)
	if err != nil {
		fail(s.withSuggestion(err, principal))
		return
	}
	if !s.allowCount(w, r, principal, target, fail) {
		return
	}
	p, ok := gwy.Provider(target.Vendor)
	if !ok {
		fail(gw.Errorf(gw.CodeVendorUnavailable, "%s is not configured on this gateway", target.Vendor))
		return
	}
	in := &proxy.Inbound{RequestID: rid, Endpoint: gw.ShapeR, Principal: principal, Body: body, Received: s.cfg.Now()}
	// Counted as a mapped request, whatever the vendor speaks: the kept
	// conversation (prior) and the request's own input.
	var prior, input []gw.Message
	if req.PreviousResponseID != "" && s.cfg.State != nil {
		if st, _, err := s.cfg.State.LoadResponse(r.Context(), principal.AccountID, req.PreviousResponseID); err == nil {
			prior = st.Messages
		}
	}
	// Guarded as the request would be: the kept conversation and the
	// new input (the vendor is sent both).
	in.Vendor, in.Model, in.Header = target.Vendor, target.Model, r.Header
	in.Text = append(gw.MessagesText(prior), req.Text...)
	if err := gwy.Screen(r.Context(), *in); err != nil {
		fail(err)
		return
	}
	sl, err := s.life.Sealer(r.Context())
	if err != nil {
		fail(err)
		return
	}
	_, open := sl.For(in.Principal.AccountID)
	if input, err = req.Messages(open, s.life.ItemRefs(r.Context(), principal.AccountID)); err != nil {
		fail(err)
		return
	}
	cr, err := req.Canonical(append(slices.Clip(prior), input...))
	if err != nil {
		fail(err)
		return
	}
	cr.Model = target.Model
	var n int64
	how := "estimate"
	c, canCount := p.(counter)
	codec, isCodec := p.(gw.Codec)
	if canCount && isCodec && p.Shape() != gw.ShapeC {
		vb, err := codec.EncodeRequest(cr)
		if err != nil {
			fail(err)
			return
		}
		if n, err = c.CountTokens(countScope(r.Context(), principal), target.Model, vb); err != nil {
			fail(err)
			return
		}
		how = "vendor"
	} else if n, err = s.estimateTokens(cr); err != nil {
		fail(err)
		return
	}
	w.Header().Set(HeaderTokenCount, how)
	writeJSON(w, http.StatusOK, map[string]any{"object": "response.input_tokens", "input_tokens": n})
}

// responseStateForwarder is the native Responses vendor's access to the
// responses it keeps (provider/openai).
type responseStateForwarder interface {
	ResponseState(ctx context.Context, method, path, query string) (*gw.Upstream, error)
}

// forwardResponseState relays GET/DELETE /v1/responses/{id}[/input_items]
// of an OpenAI-kept response (already checked to be the account's).
func (s *Server) forwardResponseState(w http.ResponseWriter, r *http.Request, method, rest string, fail func(error)) {
	p, ok := s.cfg.Gateway.Provider("openai")
	f, canForward := p.(responseStateForwarder)
	if !ok || !canForward {
		fail(&gw.Error{Code: gw.CodeNotFound, Message: "no response with this id is kept for this account", ErrorCode: "response_not_found"})
		return
	}
	up, err := f.ResponseState(r.Context(), method, "/"+rest, r.URL.RawQuery)
	if err != nil {
		fail(err)
		return
	}
	defer up.Body.Close()
	body, err := s.life.ReadAnswer("openai", up.Body)
	if err != nil {
		fail(err)
		return
	}
	w.Header().Set("Content-Type", chat.ContentType(up, "application/json"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
