package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/shape/responses"
)

// HeaderDroppedTools names the hosted tools (web_search, file_search, ...)
// a mapped Responses request asked for and the vendor did not get.
const HeaderDroppedTools = "X-Gateway-Dropped-Tools"

// rturn is a Responses request in flight: the parsed request and, on a
// mapped route, the response id the gateway gives it, the kept
// conversation it continues and its own input in canonical form (kept
// with the answer when store is on), and the account's sealer.
type rturn struct {
	req    *responses.Request
	id     string
	prior  []gw.Message
	input  []gw.Message
	seal   func([]gw.Part) (string, error)
	native bool
}

// sealer returns the gateway's sealer for reasoning state, made once from
// the key kept in the client-state store (a process key when no state is
// kept: blobs then do not survive a restart).
func (s *Server) sealer(ctx context.Context) (*responses.Sealer, error) {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if s.seal != nil {
		return s.seal, nil
	}
	var key []byte
	if k := s.cfg.State; k != nil {
		b, err := k.SealKey(ctx)
		if err != nil {
			return nil, &gw.Error{Code: gw.CodeInternal, Message: "the reasoning seal key could not be read", Err: err}
		}
		key = b
	} else {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	sl, err := responses.NewSealer(key)
	if err != nil {
		return nil, err
	}
	s.seal = sl
	return sl, nil
}

// openResponses prepares a Responses request once its vendor is known.
// Native (OpenAI): a previous_response_id must be one this account made
// through the gateway. Mapped: the kept conversation of
// previous_response_id (404 when unknown, expired or another account's)
// and the request's input become in.Canonical.
func (s *Server) openResponses(ctx context.Context, in *proxy.Inbound, req *responses.Request, p gw.Provider) (*rturn, error) {
	rt := &rturn{req: req, native: gw.SpeaksNatively(p, gw.ShapeR)}
	account := in.Principal.AccountID
	if rt.native {
		if prev := req.PreviousResponseID; prev != "" && s.cfg.State != nil {
			ok, tokens, err := s.cfg.State.OwnsResponse(ctx, account, prev)
			if err != nil {
				return nil, &gw.Error{Code: gw.CodeInternal, Message: "the previous response could not be looked up", Err: err}
			}
			if !ok {
				return nil, &gw.Error{Code: gw.CodeNotFound, Message: "previous_response_id: no response with id " + quoteID(prev) + " was made for this account", ErrorCode: "response_not_found"}
			}
			// OpenAI bills the kept conversation as prompt: the hold
			// and the token estimate count it (4 bytes a token, as the
			// estimate reads bodies).
			in.ExtraInputBytes = int(min(tokens, 1<<40) * 4)
		}
		return rt, nil
	}
	rt.id = "resp_" + id.Random(in.RequestID)
	sl, err := s.sealer(ctx)
	if err != nil {
		return nil, err
	}
	seal, open := sl.For(account)
	rt.seal = seal
	if req.PreviousResponseID != "" {
		if s.cfg.State == nil {
			return nil, &gw.Error{Code: gw.CodeNotFound, Message: "previous_response_id: this gateway keeps no responses; send the whole conversation", ErrorCode: "response_not_found"}
		}
		st, size, err := s.cfg.State.LoadResponse(ctx, account, req.PreviousResponseID)
		if err != nil {
			return nil, err
		}
		rt.prior = st.Messages
		in.ExtraInputBytes = size
		// The guard reads the kept conversation with the new input.
		in.Text = append(gw.MessagesText(rt.prior), in.Text...)
	}
	if rt.input, err = req.Messages(open, s.itemRefs(ctx, account)); err != nil {
		return nil, err
	}
	msgs := append(slices.Clip(rt.prior), rt.input...)
	if in.Canonical, err = req.Canonical(msgs); err != nil {
		return nil, err
	}
	return rt, nil
}

// itemRefs resolves the output item ids of the account's kept responses
// (item_reference, or a reasoning item sent back by id): each response
// is read once per request.
func (s *Server) itemRefs(ctx context.Context, account string) responses.Refs {
	if s.cfg.State == nil {
		return nil
	}
	answers := map[string][]gw.Part{}
	return func(itemID string) ([]gw.Part, bool, error) {
		respID, n, ok := responses.ParseItemID(itemID)
		if !ok {
			return nil, false, nil
		}
		content, seen := answers[respID]
		if !seen {
			st, _, err := s.cfg.State.LoadResponse(ctx, account, respID)
			if gw.ErrorCode(err) == gw.CodeNotFound {
				answers[respID] = nil
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			if k := len(st.Messages); k > 0 && st.Messages[k-1].Role == gw.RoleAssistant {
				content = st.Messages[k-1].Content
			}
			answers[respID] = content
		}
		p, ok := responses.OutputPart(content, n)
		if !ok {
			return nil, false, nil
		}
		return []gw.Part{p}, true, nil
	}
}

func quoteID(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// meta is the response metadata of a mapped Responses answer.
func (rt *rturn) meta(in *proxy.Inbound) responses.Meta {
	return responses.Meta{ID: rt.id, Model: in.Model, CreatedAt: in.Received.Unix(), Req: rt.req, Seal: rt.seal}
}

// keep keeps a mapped response (store on): the conversation with the
// answer, its object and its input items. Failures are logged: naming it
// later is then not found.
func (s *Server) keepResponse(ctx context.Context, in *proxy.Inbound, rt *rturn, content []gw.Part, obj *responses.Object) {
	if s.cfg.State == nil || rt == nil || rt.native || !rt.req.Store {
		return
	}
	ob, err := json.Marshal(obj)
	if err != nil {
		s.cfg.Logger.Warn("keep response", "request_id", in.RequestID, "err", err)
		return
	}
	msgs := append(slices.Clip(rt.prior), rt.input...)
	msgs = append(msgs, gw.Message{Role: gw.RoleAssistant, Content: content})
	st := &convstate.StoredResponse{Messages: msgs, Object: ob, Input: rt.req.InputItems()}
	if err := s.cfg.State.KeepResponse(ctx, in.Principal.AccountID, rt.id, st); err != nil {
		s.cfg.Logger.Warn("keep response", "request_id", in.RequestID, "err", err)
	}
}

// markOwner records a native (OpenAI) response id as the account's, with
// the tokens its conversation holds (u: its usage).
func (s *Server) markOwner(ctx context.Context, in *proxy.Inbound, respID string, u gw.Usage) {
	if s.cfg.State == nil || respID == "" {
		return
	}
	if bytes.Equal(bytes.TrimSpace(rawjson.Get(in.Body, "store")), []byte("false")) {
		// The vendor keeps nothing to continue: nothing to own, and no
		// row that counts toward the account's state.
		return
	}
	if err := s.cfg.State.MarkResponseOwner(ctx, in.Principal.AccountID, respID, u.PromptTokens()+u.OutputTokens); err != nil {
		s.cfg.Logger.Warn("mark response owner", "request_id", in.RequestID, "err", err)
	}
}

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
		fail(&gw.Error{Code: gw.CodeNotFound, Message: "no response with id " + quoteID(respID) + " is kept by this gateway", ErrorCode: "response_not_found"})
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
	// Counted as a mapped request, whatever the vendor speaks.
	rt := &rturn{req: req}
	if req.PreviousResponseID != "" && s.cfg.State != nil {
		if st, _, err := s.cfg.State.LoadResponse(r.Context(), principal.AccountID, req.PreviousResponseID); err == nil {
			rt.prior = st.Messages
		}
	}
	// Guarded as the request would be: the kept conversation and the
	// new input (the vendor is sent both).
	in.Vendor, in.Model, in.Header = target.Vendor, target.Model, r.Header
	in.Text = append(gw.MessagesText(rt.prior), req.Text...)
	if err := gwy.Screen(r.Context(), *in); err != nil {
		fail(err)
		return
	}
	sl, err := s.sealer(r.Context())
	if err != nil {
		fail(err)
		return
	}
	_, open := sl.For(in.Principal.AccountID)
	if rt.input, err = req.Messages(open, s.itemRefs(r.Context(), principal.AccountID)); err != nil {
		fail(err)
		return
	}
	cr, err := req.Canonical(append(slices.Clip(rt.prior), rt.input...))
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
	body, err := s.readAnswer("openai", up.Body)
	if err != nil {
		fail(err)
		return
	}
	w.Header().Set("Content-Type", contentType(up, "application/json"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
