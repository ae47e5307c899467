package chat

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/guard/leak"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/runs"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/shape/responses"
)

// answerMeta is what a mapped answer says beyond its content.
func answerMeta(in *proxy.Inbound, rt *rturn) shape.Meta {
	m := shape.Meta{RequestID: in.RequestID, Vendor: in.Vendor, Model: in.Model, Created: in.Received.Unix(), Body: in.Body, Canonical: in.Canonical}
	if rt != nil {
		m.State = rt.meta(in)
	}
	return m
}

// mapped answers in the endpoint's shape from a vendor that speaks
// another: the vendor's answer is decoded to the canonical form and
// encoded again.
func (s *Lifecycle) mapped(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, up *gw.Upstream, turn *convstate.Turn, rt *rturn) {
	codec, _ := x.Provider().(gw.Codec)
	in := x.Inbound()
	if in.Stream {
		s.mappedStream(w, r, x, codec.DecodeStream(&lineLimit{ReadCloser: up.Body, vendor: in.Vendor, max: s.cfg.MaxEventBytes}), turn, rt)
		return
	}
	defer up.Body.Close()
	body, err := s.ReadAnswer(in.Vendor, up.Body)
	if err != nil {
		if !s.billTooLarge(w, r.Context(), x, err) {
			s.upstreamBroke(w, r.Context(), x, err)
		}
		return
	}
	ttfb := s.cfg.Now().Sub(in.Received)
	resp, err := codec.DecodeResponse(body)
	if err != nil {
		s.upstreamBroke(w, r.Context(), x, err)
		return
	}
	shown := resp
	if s.dropsCarriers(in) {
		c := *resp
		c.Content = convstate.DropCarriers(resp.Content)
		shown = &c
	}
	var robj *responses.Object
	var out []byte
	if rt != nil {
		if robj, err = responses.Build(shown, rt.meta(in)); err == nil {
			out, err = json.Marshal(robj)
		}
	} else {
		out, err = s.shapeOf(in).EncodeResponse(shown, answerMeta(in, rt))
	}
	if err != nil {
		s.upstreamBroke(w, r.Context(), x, err)
		return
	}
	u, note := resp.Usage, ""
	if !usable(u) {
		u, note = estimated(in, u, responseTextBytes(resp)), unusableNote(u)
	}
	if l := checkAnswer(x, responseTexts(resp)...); l != nil {
		s.blockAnswer(w, r, x, l, u)
		return
	}
	// The caller left while the vendor answered: billed for what the
	// vendor reported, recorded as abandoned; cut by the shutdown grace
	// instead, the answer is still delivered, and noted so.
	note = joinNote(answeredNote(r.Context()), note)
	charge, err := s.finish(r.Context(), x, proxy.Outcome{Status: http.StatusOK, Usage: u, Success: true, TTFB: ttfb, Note: note, VendorResponseID: resp.ID})
	if err != nil {
		WriteError(w, s.shapeOf(in), in.RequestID, &gw.Error{Code: gw.CodeInternal, Message: "the answer could not be billed; it was not delivered", Err: err})
		return
	}
	if s.wantsAnswer(in, turn) {
		s.keepAnswer(r.Context(), in, turn, resp.Content)
	}
	if robj != nil {
		s.keepResponse(r.Context(), in, rt, resp.Content, robj)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set(HeaderCharge, charge.CentsString())
	runs.SetHeaders(h, x.Run())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// mappedStream decodes the vendor's stream into canonical events and
// encodes each one in the endpoint's shape as it arrives.
func (s *Lifecycle) mappedStream(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, es gw.EventStream, turn *convstate.Turn, rt *rturn) {
	defer es.Close()
	in := x.Inbound()
	ctx := r.Context()
	fw := s.startStream(w, nil)
	ttfb := s.cfg.Now().Sub(in.Received)
	enc := s.shapeOf(in).NewStreamEncoder(fw, answerMeta(in, rt))
	if s.dropsCarriers(in) {
		enc = convstate.NewCarrierFilter(enc)
	}
	gate := newAnswerGate(x)
	var leaked *leak.Leak
	// What the rest of the stream does not read of the request goes.
	s.letGo(x)
	var (
		usage      gw.Usage
		events     int64
		text       int64
		finished   bool
		streamErr  *gw.Error
		clientGone bool
		answer     *assembler
		vendorID   string // the vendor's id of its answer, from its start
	)
	if s.wantsAnswer(in, turn) || rt != nil {
		answer = &assembler{}
	}
	if re, ok := enc.(*responses.StreamEncoder); ok {
		// The response is kept before the caller sees its end, so that
		// a next turn sent at once finds it.
		re.OnFinal = func(o *responses.Object) { s.keepResponse(ctx, in, rt, answer.content, o) }
	}
	for {
		ev, err := es.Recv()
		if err == io.EOF {
			break
		}
		x.KeepAlive(ctx)
		if cutByShutdown(ctx) {
			// The decoder reports the cut as a vendor error; it is not.
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				clientGone = !cutByShutdown(ctx)
				break
			}
			ev = gw.Event{Type: gw.EventError, Err: streamBreak(in.Vendor, err)}
		}
		if ev.Type == gw.EventError && ctx.Err() != nil {
			// The caller went away and the cancelled read surfaced as
			// the decoder's error event: an abandoned stream, not a
			// vendor failure. Keep the usage it carries.
			mergeEventUsage(&usage, ev)
			clientGone = true
			break
		}
		switch ev.Type {
		case gw.EventStart:
			vendorID = ev.ID
			mergeEventUsage(&usage, ev)
			if ev.Usage == nil || ev.Usage.PromptTokens() == 0 {
				// Clients read the prompt size from the first event;
				// where the vendor tells it only at the end, send an
				// estimate rather than a zero.
				ev.Usage = &gw.Usage{InputTokens: promptEstimate(in)}
			}
		case gw.EventDelta:
			events++
			text += int64(len(ev.Text))
		case gw.EventFinish:
			finished = true
			mergeEventUsage(&usage, ev)
			if answer != nil && s.wantsAnswer(in, turn) {
				// Kept before the client sees the end of the
				// answer, so that its next turn finds it.
				s.keepAnswer(ctx, in, turn, answer.content)
			}
		case gw.EventError:
			mergeEventUsage(&usage, ev)
			streamErr = ev.Err
			if streamErr == nil {
				streamErr = &gw.Error{Code: gw.CodeUpstream, Message: in.Vendor + ": the vendor's stream failed"}
				ev.Err = streamErr
			}
		}
		if answer != nil {
			answer.add(&ev)
		}
		if gate != nil && ev.Type != gw.EventError {
			l, err := gate.event(ev, enc.Encode)
			if l != nil {
				leaked = l
				break
			}
			if err != nil {
				clientGone = true
				break
			}
			continue
		}
		if gate != nil {
			// The vendor's error ends the answer: what was held goes
			// first.
			if l, err := gate.close(nil, enc.Encode); l != nil || err != nil {
				leaked, clientGone = l, err != nil
				break
			}
		}
		if err := enc.Encode(ev); err != nil {
			clientGone = true
			break
		}
		if streamErr != nil {
			break
		}
	}
	if gate != nil && leaked == nil && !clientGone && streamErr == nil {
		var err error
		leaked, err = gate.close(nil, enc.Encode)
		clientGone = err != nil
	}
	if clientGone && leaked == nil && !finished && streamErr == nil && !cutByShutdown(ctx) {
		// The caller left: the vendor's stream is read on (within
		// proxy.StreamLinger), unwritten, for the usage it reports at
		// its end.
		finished = drainUsage(es, &usage)
	}
	if leaked != nil {
		u := abandonedUsage(in, usage, events, text)
		e := x.BlockAnswer(ctx, leaked, u)
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: e})
		charge, _ := s.finish(ctx, x, x.LeakOutcome(e, u))
		w.Header().Set(HeaderCharge, charge.CentsString())
		return
	}
	o, broke := streamOutcome(in, streamEnd{
		done:       finished,
		vendorErr:  streamErr,
		callerLeft: clientGone || ctx.Err() != nil,
		usage:      usage,
		events:     events,
		textBytes:  text,
	})
	o.TTFB, o.VendorResponseID = ttfb, vendorID
	if clientGone && finished && o.Success && !strings.Contains(o.Note, "abandoned") {
		o.Note = joinNote("abandoned", o.Note)
	}
	if broke != nil {
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: broke})
	} else if !clientGone && !finished && streamErr == nil && cutByShutdown(ctx) {
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: shutdownError()})
	}
	charge, _ := s.finish(ctx, x, o)
	w.Header().Set(HeaderCharge, charge.CentsString())
	runs.SetHeaders(w.Header(), x.Run())
}

// mergeEventUsage takes the usage an event carries: each is the vendor's
// whole report so far (see gw.Usage.Merge), so the latest replaces the
// earlier one, zeros included.
func mergeEventUsage(usage *gw.Usage, ev gw.Event) {
	if ev.Usage != nil {
		usage.Merge(*ev.Usage)
	}
}

// responseTextBytes is relayedTextBytes for a decoded answer: the UTF-8
// bytes of its text, reasoning text and tool-call arguments.
func responseTextBytes(resp *gw.Response) int64 {
	var n int64
	for _, p := range resp.Content {
		n += int64(len(p.Text) + len(p.Arguments))
	}
	return n
}
