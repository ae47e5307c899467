package server

import (
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/proxy"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
	openaishape "github.com/gwlabs/gateway/shape/openai"
)

// encoder writes canonical stream events in the endpoint's shape.
type encoder interface{ Encode(ev gw.Event) error }

func (s *Server) newEncoder(w io.Writer, in *proxy.Inbound) encoder {
	created := in.Received.Unix()
	if in.Endpoint == gw.ShapeM {
		return anthropicshape.NewStreamEncoder(w, anthropicshape.ResponseMeta{ID: in.RequestID, Model: in.Model, Created: created})
	}
	include := in.Canonical != nil && in.Canonical.IncludeUsage
	return openaishape.NewStreamEncoder(w, openaishape.ResponseMeta{ID: "chatcmpl_" + id.Random(in.RequestID), Model: in.Model, Created: created}, include)
}

func encodeResponse(in *proxy.Inbound, resp *gw.Response) ([]byte, error) {
	created := in.Received.Unix()
	if in.Endpoint == gw.ShapeM {
		return anthropicshape.EncodeResponse(resp, anthropicshape.ResponseMeta{ID: in.RequestID, Model: in.Model, Created: created})
	}
	return openaishape.EncodeResponse(resp, openaishape.ResponseMeta{ID: "chatcmpl_" + id.Random(in.RequestID), Model: in.Model, Created: created})
}

// mapped answers in the endpoint's shape from a vendor that speaks
// another: the vendor's answer is decoded to the canonical form and
// encoded again.
func (s *Server) mapped(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, up *gw.Upstream) {
	codec, _ := x.Provider().(gw.Codec)
	in := x.Inbound()
	if in.Stream {
		s.mappedStream(w, r, x, codec.DecodeStream(&lineLimit{ReadCloser: up.Body, vendor: in.Vendor, max: s.cfg.MaxEventBytes}))
		return
	}
	defer up.Body.Close()
	body, err := s.readAnswer(in.Vendor, up.Body)
	if err != nil {
		s.upstreamBroke(w, r.Context(), x, err)
		return
	}
	ttfb := s.cfg.Now().Sub(in.Received)
	resp, err := codec.DecodeResponse(body)
	if err != nil {
		s.upstreamBroke(w, r.Context(), x, err)
		return
	}
	out, err := encodeResponse(in, resp)
	if err != nil {
		s.upstreamBroke(w, r.Context(), x, err)
		return
	}
	u, note := resp.Usage, ""
	if !u.Reported {
		u, note = estimateUsage(in, 0), "usage_missing"
	}
	charge, err := s.finish(r.Context(), x, proxy.Outcome{Status: http.StatusOK, Usage: u, Success: true, TTFB: ttfb, Note: note})
	if err != nil {
		writeError(w, in.Endpoint, in.RequestID, &gw.Error{Code: gw.CodeInternal, Message: "the answer could not be billed; it was not delivered", Err: err})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set(HeaderCharge, charge.CentsString())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// mappedStream decodes the vendor's stream into canonical events and
// encodes each one in the endpoint's shape as it arrives.
func (s *Server) mappedStream(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, es gw.EventStream) {
	defer es.Close()
	in := x.Inbound()
	ctx := r.Context()
	fw := startStream(w, nil)
	ttfb := s.cfg.Now().Sub(in.Received)
	enc := s.newEncoder(fw, in)
	var (
		usage      gw.Usage
		events     int64
		finished   bool
		streamErr  *gw.Error
		clientGone bool
	)
	for {
		ev, err := es.Recv()
		if err == io.EOF {
			break
		}
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
		switch ev.Type {
		case gw.EventStart:
			if ev.Usage != nil {
				usage.Merge(*ev.Usage)
			}
			if ev.Usage == nil || ev.Usage.PromptTokens() == 0 {
				// Clients read the prompt size from the first event;
				// where the vendor tells it only at the end, send an
				// estimate rather than a zero.
				est := estimateUsage(in, 0)
				ev.Usage = &gw.Usage{InputTokens: est.InputTokens}
			}
		case gw.EventDelta:
			events++
		case gw.EventFinish:
			finished = true
			if ev.Usage != nil {
				usage.Merge(*ev.Usage)
			}
		case gw.EventError:
			streamErr = ev.Err
			if streamErr == nil {
				streamErr = &gw.Error{Code: gw.CodeUpstream, Message: in.Vendor + ": the vendor's stream failed"}
				ev.Err = streamErr
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
	o, broke := streamOutcome(in, streamEnd{
		done:       finished,
		vendorErr:  streamErr,
		callerLeft: clientGone || ctx.Err() != nil,
		usage:      usage,
		events:     events,
	})
	o.TTFB = ttfb
	if broke != nil {
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: broke})
	} else if !clientGone && !finished && streamErr == nil && cutByShutdown(ctx) {
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: shutdownError()})
	}
	charge, _ := s.finish(ctx, x, o)
	w.Header().Set(HeaderCharge, charge.CentsString())
}
