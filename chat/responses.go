package chat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
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

// Sealer returns the gateway's sealer for reasoning state, made once from
// the key kept in the client-state store (a process key when no state is
// kept: blobs then do not survive a restart).
func (s *Lifecycle) Sealer(ctx context.Context) (*responses.Sealer, error) {
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
func (s *Lifecycle) openResponses(ctx context.Context, in *proxy.Inbound, req *responses.Request, p gw.Provider) (*rturn, error) {
	rt := &rturn{req: req, native: gw.SpeaksNatively(p, gw.ShapeR)}
	account := in.Principal.AccountID
	if rt.native {
		if prev := req.PreviousResponseID; prev != "" && s.cfg.State != nil {
			ok, tokens, err := s.cfg.State.OwnsResponse(ctx, account, prev)
			if err != nil {
				return nil, &gw.Error{Code: gw.CodeInternal, Message: "the previous response could not be looked up", Err: err}
			}
			if !ok {
				return nil, &gw.Error{Code: gw.CodeNotFound, Message: "previous_response_id: no response with id " + QuoteID(prev) + " was made for this account", ErrorCode: "response_not_found"}
			}
			// OpenAI bills the kept conversation as prompt: the hold
			// and the token estimate count it (4 bytes a token, as the
			// estimate reads bodies).
			in.ExtraInputBytes = int(min(tokens, 1<<40) * 4)
		}
		return rt, nil
	}
	rt.id = "resp_" + id.Random(in.RequestID)
	sl, err := s.Sealer(ctx)
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
	if rt.input, err = req.Messages(open, s.ItemRefs(ctx, account)); err != nil {
		return nil, err
	}
	msgs := append(slices.Clip(rt.prior), rt.input...)
	if in.Canonical, err = req.Canonical(msgs); err != nil {
		return nil, err
	}
	return rt, nil
}

// ItemRefs resolves the output item ids of the account's kept responses
// (item_reference, or a reasoning item sent back by id): each response
// is read once per request.
func (s *Lifecycle) ItemRefs(ctx context.Context, account string) responses.Refs {
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

// QuoteID quotes a response id for an error message, cut to 64 bytes.
func QuoteID(s string) string {
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
func (s *Lifecycle) keepResponse(ctx context.Context, in *proxy.Inbound, rt *rturn, content []gw.Part, obj *responses.Object) {
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
func (s *Lifecycle) markOwner(ctx context.Context, in *proxy.Inbound, respID string, u gw.Usage) {
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
