package chat

import (
	"context"
	"encoding/json"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
)

// clientState applies the state the gateway keeps for clients (see
// convstate) to a request before it is admitted: a mapped Messages
// request's thread is opened (a continue is expanded with the kept
// turns), and DeepSeek reasoning the client left out of its tool-call
// turns is put back. It returns the thread turn to save once answered
// (nil when the request has no thread), and only thread errors (404
// thread_not_found, 400): a store failure while restoring reasoning is
// logged and the request goes on as the client sent it.
func (s *Lifecycle) clientState(ctx context.Context, in proxy.Inbound) (proxy.Inbound, *convstate.Turn, error) {
	k := s.cfg.State
	if k == nil {
		return in, nil, nil
	}
	var turn *convstate.Turn
	st := stateOf(s.shapeOf(&in))
	if st.Threads && in.Canonical != nil && !s.nativeTo(in.Vendor, in.Endpoint) {
		t, err := threadOf(&in)
		if err != nil {
			return in, nil, err
		}
		if t != nil {
			sent := len(in.Canonical.Messages)
			if turn, err = k.Open(ctx, in.Principal.AccountID, t, in.Canonical); err != nil {
				return in, nil, err
			}
			in.ExtraInputBytes = turn.ExtraBytes()
			if kept := len(in.Canonical.Messages) - sent; kept > 0 {
				// The guard reads the kept turns with the new ones: a
				// payload split over a thread's turns is seen whole.
				in.Text = append(gw.MessagesText(in.Canonical.Messages[:kept]), in.Text...)
			}
		}
	}
	if st.Threads && in.Canonical == nil {
		// A native Messages thread continue: the vendor keeps the
		// earlier turns and bills them as prompt, so the hold covers the
		// thread's size, and a directive in its system prompt is not
		// charged.
		if t, err := threadOf(&in); err == nil && t != nil && t.Type == "continue" && t.PreviousMessageID != "" {
			nt, ok, err := k.NativeThreadOf(ctx, in.Principal.AccountID, t.PreviousMessageID)
			if err != nil {
				s.cfg.Logger.Warn("native thread", "request_id", in.RequestID, "err", err)
			}
			if ok {
				in.ExtraInputBytes += int(min(nt.Tokens, 1<<40)) * 3
				in.KeptDirective = nt.Directive
			}
		}
	}
	if k.KeepsSignatures(in.Vendor) && in.Canonical != nil {
		if err := k.RestoreSignatures(ctx, in.Principal.AccountID, in.Canonical); err != nil {
			s.cfg.Logger.Warn("restore signatures", "request_id", in.RequestID, "err", err)
		}
	}
	if convstate.KeepsReasoning(in.Vendor) {
		var err error
		switch {
		case in.Canonical != nil:
			err = k.RestoreRequest(ctx, in.Principal.AccountID, in.Canonical)
		case st.ReasoningInBody:
			var body []byte
			body, err = k.RestoreBody(ctx, in.Principal.AccountID, in.Body)
			in.SetBody(body)
		}
		if err != nil {
			s.cfg.Logger.Warn("restore reasoning", "request_id", in.RequestID, "err", err)
		}
	}
	return in, turn, nil
}

// nativeTo reports whether vendor speaks shape (a request to it is passed
// through; with fallbacks the canonical form may be decoded all the same).
func (s *Lifecycle) nativeTo(vendor string, shape gw.Shape) bool {
	p, ok := s.cfg.Gateway.Provider(vendor)
	return ok && p.Shape() == shape
}

// keepAnswer keeps what a mapped answer leaves for the client's next
// turn: the thread with the answer (under the id the client was given),
// and the answer's reasoning on a reasoning vendor. It runs before the
// answer's end reaches the client, so that a next turn sent at once finds
// it. Failures are logged: the client then replays (thread_not_found) or
// the vendor says what is missing.
func (s *Lifecycle) keepAnswer(ctx context.Context, in *proxy.Inbound, turn *convstate.Turn, content []gw.Part) {
	if turn != nil {
		if err := turn.Save(ctx, in.RequestID, content); err != nil {
			s.cfg.Logger.Warn("keep thread", "request_id", in.RequestID, "err", err)
		}
	}
	if k := s.cfg.State; k != nil && convstate.KeepsReasoning(in.Vendor) {
		if err := k.RememberResponse(ctx, in.Principal.AccountID, content); err != nil {
			s.cfg.Logger.Warn("keep reasoning", "request_id", in.RequestID, "err", err)
		}
	}
	if k := s.cfg.State; k.KeepsSignatures(in.Vendor) {
		if err := k.RememberSignatures(ctx, in.Principal.AccountID, content); err != nil {
			s.cfg.Logger.Warn("keep signatures", "request_id", in.RequestID, "err", err)
		}
	}
}

// wantsAnswer reports whether a mapped answer's content must be assembled
// for keepAnswer.
//
// Not on /v1/responses: its reasoning rides in the kept response or in the
// caller's sealed blobs, and store:false must keep nothing server-side.
func (s *Lifecycle) wantsAnswer(in *proxy.Inbound, turn *convstate.Turn) bool {
	return turn != nil || s.cfg.State != nil && !stateOf(s.shapeOf(in)).KeptResponses && (convstate.KeepsReasoning(in.Vendor) || s.cfg.State.KeepsSignatures(in.Vendor))
}

// dropsCarriers reports whether a mapped answer is shown without its
// Gemini signature carriers (see convstate.CarrierFilter): on the
// Messages endpoint, when the signatures are kept for the next turn.
func (s *Lifecycle) dropsCarriers(in *proxy.Inbound) bool {
	return stateOf(s.shapeOf(in)).Threads && s.cfg.State.KeepsSignatures(in.Vendor)
}

// relayCollector reads the reasoning of a relayed Chat Completions answer
// from a reasoning vendor; nil when nothing is kept for this request.
func (s *Lifecycle) relayCollector(in *proxy.Inbound) *convstate.Collector {
	if s.cfg.State == nil || !stateOf(s.shapeOf(in)).ReasoningInBody || !convstate.KeepsReasoning(in.Vendor) {
		return nil
	}
	return &convstate.Collector{}
}

// rememberNative keeps, for a native Messages answer in a vendor-kept
// thread, what billing needs at the thread's next continue: its size in
// tokens (the prompt the vendor reported plus the answer) and whether its
// system prompt holds the directive.
func (s *Lifecycle) rememberNative(ctx context.Context, x *proxy.Exchange, messageID string, u gw.Usage) {
	in := x.Inbound()
	if s.cfg.State == nil || !stateOf(s.shapeOf(in)).Threads || !x.Native() || messageID == "" || !u.Reported || u.Malformed {
		return
	}
	if t, err := threadOf(in); err != nil || t == nil {
		return
	}
	nt := convstate.NativeThread{Tokens: u.PromptTokens() + u.OutputTokens, Directive: x.Optimized || in.KeptDirective}
	if err := s.cfg.State.RememberNativeThread(ctx, in.Principal.AccountID, messageID, nt); err != nil {
		s.cfg.Logger.Warn("remember native thread", "request_id", in.RequestID, "err", err)
	}
}

// keepRelayed keeps what a relayed answer's collector read.
func (s *Lifecycle) keepRelayed(ctx context.Context, in *proxy.Inbound, c *convstate.Collector) {
	if c == nil {
		return
	}
	if err := c.Remember(ctx, s.cfg.State, in.Principal.AccountID); err != nil {
		s.cfg.Logger.Warn("keep reasoning", "request_id", in.RequestID, "err", err)
	}
}

// assembler folds canonical stream events into the answer's content.
type assembler struct {
	content   []gw.Part
	cur       *gw.Part
	text, sig strings.Builder
}

func (a *assembler) add(ev *gw.Event) {
	switch ev.Type {
	case gw.EventBlockStart:
		if ev.Part == nil {
			return
		}
		p := *ev.Part
		a.cur = &p
		a.text.Reset()
		a.sig.Reset()
	case gw.EventDelta:
		if a.cur != nil {
			a.text.WriteString(ev.Text)
			a.sig.WriteString(ev.Signature)
		}
	case gw.EventBlockStop:
		if a.cur == nil {
			return
		}
		switch a.cur.Type {
		case gw.PartToolCall:
			args := a.text.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			a.cur.Arguments = json.RawMessage(args)
		case gw.PartText:
			a.cur.Text += a.text.String()
		case gw.PartThinking:
			a.cur.Text += a.text.String()
			a.cur.Signature += a.sig.String()
		}
		a.content = append(a.content, *a.cur)
		a.cur = nil
	}
}

// threadOf reads the body's "thread" member (convstate.DecodeThread),
// from the members the parse found when it has them, without another
// scan of the body.
func threadOf(in *proxy.Inbound) (*convstate.Thread, error) {
	if in.Members != nil {
		return convstate.ThreadFrom(rawjson.Value(in.Body, in.Members, "thread"))
	}
	return convstate.DecodeThread(in.Body)
}
