package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/leak"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/runs"
	"github.com/gwlabs/gateway/shape/responses"
	"github.com/gwlabs/gateway/sse"
)

// flushWriter flushes after every write, so each event leaves at once.
// With a timeout, each write must reach the caller's connection within
// it: a caller that stops reading is bounded by this deadline (and then
// counted as gone), never by the vendor's idle timer.
type flushWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (f flushWriter) Write(p []byte) (int, error) {
	if f.timeout > 0 {
		_ = f.rc.SetWriteDeadline(time.Now().Add(f.timeout))
	}
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.rc.Flush()
}

// relay answers with the vendor's own bytes: the endpoint and the vendor
// speak the same shape. A provider that is a gw.Normalizer fixes its
// SDK-breaking deviations first, changing nothing else.
func (s *Lifecycle) relay(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, up *gw.Upstream) {
	defer up.Body.Close()
	if x.Inbound().Stream {
		s.relayStream(w, r, x, up)
		return
	}
	in := x.Inbound()
	body, err := s.ReadAnswer(in.Vendor, up.Body)
	if err != nil {
		if !s.billTooLarge(w, r.Context(), x, err) {
			s.upstreamBroke(w, r.Context(), x, err)
		}
		return
	}
	ttfb := s.cfg.Now().Sub(in.Received)
	sh := s.shapeOf(in)
	if n, ok := x.Provider().(gw.Normalizer); ok {
		body = n.NormalizeBody(body)
	}
	if fix := unoptimized(sh, x, false); fix != nil {
		// The caller's own instructions, not the directive added to them.
		body = fix(body)
	}
	u, err := sh.UsageFromBody(body)
	if err != nil {
		// Not a JSON answer at all (malformed counts are not an error:
		// they mark the usage Malformed, billed below from the gateway's
		// own count).
		s.upstreamBroke(w, r.Context(), x, &gw.Error{Code: gw.CodeUpstream, Message: in.Vendor + ": the vendor sent a malformed answer", Err: err})
		return
	}
	note := ""
	vendorUsage := u
	if !usable(u) {
		u, note = estimated(in, u, relayedTextBytes(body)), unusableNote(u)
	}
	if l := checkAnswer(x, answerText(nil, body)); l != nil {
		s.blockAnswer(w, r, x, l, u)
		return
	}
	// The vendor answered: the request is billed even if the caller has
	// gone, since the answer was paid for upstream.
	// The caller left while the vendor answered: billed for what the
	// vendor reported, recorded as abandoned; cut by the shutdown grace
	// instead, the answer is still delivered, and noted so.
	note = joinNote(answeredNote(r.Context()), note)
	charge, err := s.finish(r.Context(), x, proxy.Outcome{Status: http.StatusOK, Usage: u, Success: true, TTFB: ttfb, Note: note, VendorResponseID: answerID(in.Vendor, body)})
	if err != nil {
		WriteError(w, sh, in.RequestID, &gw.Error{Code: gw.CodeInternal, Message: "the answer could not be billed; it was not delivered", Err: err})
		return
	}
	if c := s.relayCollector(in); c != nil {
		c.Body(body)
		s.keepRelayed(r.Context(), in, c)
	}
	if stateOf(sh).Threads {
		var msgID string
		_ = json.Unmarshal(rawjson.Get(body, "id"), &msgID)
		s.rememberNative(r.Context(), x, msgID, vendorUsage)
	}
	if stateOf(sh).KeptResponses {
		s.markOwner(r.Context(), in, responses.IDFromBody(body), u)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType(up, "application/json"))
	h.Set(HeaderCharge, charge.CentsString())
	runs.SetHeaders(h, x.Run())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// ContentType is the vendor answer's Content-Type, def when it sent
// none.
func ContentType(up *gw.Upstream, def string) string {
	if v := http.Header(up.Header).Get("Content-Type"); v != "" {
		return v
	}
	return def
}

// upstreamBroke answers a vendor failure that happened after its headers
// but before anything reached the caller.
func (s *Lifecycle) upstreamBroke(w http.ResponseWriter, ctx context.Context, x *proxy.Exchange, err error) {
	e := gw.AsError(err)
	if e.Code == gw.CodeInternal {
		e = &gw.Error{Code: gw.CodeUpstream, Message: x.Inbound().Vendor + ": the vendor's answer broke off", Err: err}
	}
	s.finish(ctx, x, proxy.Outcome{Status: e.Code.Status(), Err: e})
	WriteError(w, s.shapeOf(x.Inbound()), x.Inbound().RequestID, e)
}

// startStream sends the stream's headers, declaring the charge trailer.
func (s *Lifecycle) startStream(w http.ResponseWriter, up *gw.Upstream) flushWriter {
	h := w.Header()
	if up != nil {
		h.Set("Content-Type", ContentType(up, "text/event-stream"))
	} else {
		h.Set("Content-Type", "text/event-stream")
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("Trailer", HeaderCharge+", "+runs.HeaderSpend+", "+runs.HeaderRemaining)
	w.WriteHeader(http.StatusOK)
	fw := flushWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.StreamWriteTimeout}
	// A stream is bounded per event, not as a whole: the deadline set
	// with the header (timedWriter) gives way to the per-event one.
	if fw.timeout > 0 {
		_ = fw.rc.SetWriteDeadline(time.Now().Add(fw.timeout))
	} else {
		_ = fw.rc.SetWriteDeadline(time.Time{})
	}
	_ = fw.rc.Flush()
	return fw
}

// relayStream forwards a vendor stream event by event, each exactly as
// the vendor framed it and flushed at once, while the meter reads usage.
// The one exception: an event whose data a gw.Normalizer provider fixes
// (an SDK-breaking deviation of the vendor) is re-framed with the fixed
// data.
func (s *Lifecycle) relayStream(w http.ResponseWriter, r *http.Request, x *proxy.Exchange, up *gw.Upstream) {
	in := x.Inbound()
	ctx := r.Context()
	gate := newAnswerGate(x)
	fw := &lazyStream{s: s, w: w, up: up}
	if gate == nil {
		fw.start()
	}
	ttfb := s.cfg.Now().Sub(in.Received)
	sh := s.shapeOf(in)
	m := sh.NewMeter(in.Vendor, x.HideUsage)
	rd := sse.NewReader(up.Body)
	defer rd.Release()
	rd.SetMaxEventSize(s.cfg.MaxEventBytes)
	var fix func([]byte) []byte
	if n, ok := x.Provider().(gw.Normalizer); ok {
		fix = n.NormalizeStream()
	}
	if echo := unoptimized(sh, x, true); echo != nil {
		// The response object's echo of the instructions (created,
		// in_progress, completed...) is the caller's own, not the
		// directive added to them.
		norm := fix
		fix = func(d []byte) []byte {
			if norm != nil {
				d = norm(d)
			}
			return echo(d)
		}
	}
	// What the rest of the stream does not read of the request goes.
	s.letGo(x)
	var events, text int64
	var leaked *leak.Leak
	var rtext *responsesText // a Responses stream counts each text once
	if in.Endpoint == gw.ShapeR {
		rtext = &responsesText{}
	}
	clientGone, ownerMarked, terminated := false, false, false
	collect := s.relayCollector(in)
	var ev sse.Event // one for the stream: the meter's pointer keeps it on the heap
	for rd.Next() {
		// The hold lives as long as the stream (a clock read per event,
		// a store write per third of the hold's life).
		x.KeepAlive(ctx)
		ev = rd.Event()
		terminated = terminated || ev.Type == "message_stop" || string(ev.Data) == "[DONE]"
		if collect != nil && ev.Data != nil {
			if string(ev.Data) == "[DONE]" {
				// Kept before the client sees the end of the
				// answer, so that its next turn finds it.
				s.keepRelayed(ctx, in, collect)
				collect = nil
			} else {
				collect.Chunk(ev.Data)
			}
		}
		if m.Observe(&ev) {
			continue
		}
		if stateOf(sh).KeptResponses && !ownerMarked && (m.Done() || m.Err() != nil) {
			// Marked before the caller sees the end, so that a next
			// turn sent at once finds it.
			ownerMarked = true
			s.markOwner(ctx, in, m.ID(), m.Usage())
		}
		raw := ev.Raw
		if ev.Data != nil {
			if fix != nil {
				// Only an SDK-breaking deviation re-frames the event.
				if d := fix(ev.Data); !sameBytes(d, ev.Data) {
					raw = sse.AppendEvent(nil, ev.Type, d)
				}
			}
			events++
			if rtext != nil {
				rtext.observe(ev.Type, ev.Data)
				text = rtext.bytes()
			} else {
				text += relayedTextBytes(ev.Data)
			}
			if x.HideUsage {
				raw = stripUsageNull(raw)
			}
		}
		if gate != nil {
			l, err := gate.raw(raw, ev.Data, writeRaw(fw))
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
		if _, err := fw.Write(raw); err != nil {
			clientGone = true
			break
		}
	}
	readErr := rd.Err()
	if gate != nil && leaked == nil && !clientGone {
		var err error
		leaked, err = gate.close(writeRaw(fw), nil)
		clientGone = err != nil
	}
	if leaked != nil {
		s.leakedStream(ctx, w, fw, x, leaked, abandonedUsage(in, m.Usage(), events, text), m.StreamError)
		return
	}
	if clientGone && m.Err() == nil && !cutByShutdown(ctx) {
		// The caller left: the vendor's stream is read on (within
		// proxy.StreamLinger), unwritten, for the usage it reports at
		// its end; its text is not billed as relayed.
		for rd.Next() {
			ev = rd.Event()
			m.Observe(&ev)
		}
	}
	fw.start()
	// The meter says the answer is whole once the vendor said how it
	// ended (a finish_reason, a stop_reason): a cut after that loses
	// nothing of it, and it is billed as complete.
	o, broke := streamOutcome(in, streamEnd{
		done:       m.Done(),
		vendorErr:  m.Err(),
		readErr:    readErr,
		callerLeft: clientGone || ctx.Err() != nil,
		usage:      m.Usage(),
		events:     events,
		textBytes:  text,
	})
	o.TTFB, o.VendorResponseID = ttfb, m.ID()
	if clientGone && m.Done() && o.Success && !strings.Contains(o.Note, "abandoned") {
		o.Note = joinNote("abandoned", o.Note)
	}
	// The shape's in-stream error, after the vendor's last event (R
	// numbers it after that event).
	streamErr := func(e *gw.Error) { _, _ = fw.Write(m.StreamError(in.RequestID, e)) }
	switch {
	case broke != nil:
		streamErr(broke)
	case !clientGone && !m.Done() && m.Err() == nil && cutByShutdown(ctx):
		streamErr(shutdownError())
	case m.Err() != nil && !m.Done():
		// The vendor's own error event was relayed as is; a C stream
		// still ends with its terminator, which vendors leave out after
		// an error.
		writeTail(fw, sh.StreamTail(true))
	case m.Done() && !terminated && !clientGone && m.Err() == nil:
		// Whole, but cut before its terminator: the caller gets the
		// terminator its SDK waits for.
		writeTail(fw, sh.StreamTail(false))
	}
	charge, _ := s.finish(ctx, x, o)
	w.Header().Set(HeaderCharge, charge.CentsString())
	runs.SetHeaders(w.Header(), x.Run())
	if o.Success {
		s.rememberNative(ctx, x, m.ID(), m.Usage())
	}
}

// writeTail sends a stream's tail, if its shape has one.
func writeTail(fw io.Writer, tail []byte) {
	if tail != nil {
		_, _ = fw.Write(tail)
	}
}

// sameBytes reports whether a and b are the same slice (not just equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// streamEnd is how a relayed or mapped stream ended.
type streamEnd struct {
	done       bool      // the vendor's stream reached its end
	vendorErr  *gw.Error // the vendor's in-stream error (already sent on)
	readErr    error     // why reading stopped early, if it did
	callerLeft bool      // the caller went away
	usage      gw.Usage  // as reported so far
	events     int64     // content events relayed
	textBytes  int64     // UTF-8 bytes of the text relayed
}

// streamOutcome decides how a stream that began with 200 is recorded:
// abandoned by the caller before the end (billed for what was used), failed
// by the vendor (not billed), or complete (billed, with usage estimated
// when the vendor reported none). A caller that closes the body right
// after the last event has not abandoned anything. broke is the error the
// caller must still be sent in its shape: the stream stopped without the
// vendor saying why.
func streamOutcome(in *proxy.Inbound, end streamEnd) (o proxy.Outcome, broke *gw.Error) {
	o.Status = http.StatusOK
	switch {
	case !end.done && end.vendorErr == nil && end.callerLeft:
		o.Success, o.Usage, o.Note = true, abandonedUsage(in, end.usage, end.events, end.textBytes), "abandoned"
		if !usable(end.usage) {
			o.Note = "abandoned; " + unusableNote(end.usage)
		}
	case end.vendorErr != nil:
		o.Err = end.vendorErr
		o.Usage = spentUsage(in, end)
	case !end.done:
		broke = streamBreak(in.Vendor, end.readErr)
		o.Err = broke
		o.Usage = spentUsage(in, end)
	default:
		o.Success, o.Usage = true, end.usage
		if !usable(end.usage) {
			o.Usage, o.Note = estimated(in, end.usage, end.textBytes), unusableNote(end.usage)
		}
	}
	return o, broke
}

// usageNull is the member a C vendor adds to every chunk once asked for
// stream usage.
const usageNull = `,"usage":null`

// stripUsageNull removes the "usage":null member that only appears because
// the gateway asked for usage, so the caller gets the chunk it would have
// got. It edits raw in place (the reader's buffer, valid until its next
// event): no allocation per chunk.
func stripUsageNull(raw []byte) []byte {
	i := bytes.Index(raw, []byte(usageNull))
	if i < 0 {
		return raw
	}
	n := copy(raw[i:], raw[i+len(usageNull):])
	return raw[:i+n]
}

// streamBreak describes a vendor stream that ended without finishing.
func streamBreak(vendor string, err error) *gw.Error {
	var e *gw.Error
	if errors.As(err, &e) {
		return e
	}
	if err == nil {
		return &gw.Error{Code: gw.CodeUpstream, Message: vendor + ": the vendor's stream ended early"}
	}
	return &gw.Error{Code: gw.CodeUpstream, Message: vendor + ": the vendor's stream broke off", Err: err}
}

// abandonedUsage is what an abandoned stream is billed: the vendor's
// counts so far; where it reported none, or only an output count older
// than the content relayed since (fewer tokens than content events, as
// Anthropic's message_start), the output is the estimate from the text
// relayed (see estimateUsage) when that is larger.
// spentUsage is what a stream the vendor broke may have cost at the
// vendor: the usage it reported, or what was relayed (nothing when no
// event came). It is recorded as the operator's cost; the caller pays
// nothing for a broken stream.
func spentUsage(in *proxy.Inbound, end streamEnd) gw.Usage {
	if !end.usage.Reported && end.events == 0 {
		return gw.Usage{}
	}
	return abandonedUsage(in, end.usage, end.events, end.textBytes)
}

func abandonedUsage(in *proxy.Inbound, u gw.Usage, events, textBytes int64) gw.Usage {
	if !usable(u) {
		return estimated(in, u, textBytes)
	}
	if u.OutputTokens < events {
		u.OutputTokens = max(u.OutputTokens, textBytes, events)
	}
	return u
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// answerID reads the vendor's id of a relayed answer where
// reconciliation needs it: OpenRouter's generation id, by which its
// generation record (the cost it settled) is looked up. Other vendors'
// answers are not parsed again for it.
func answerID(vendor string, body []byte) string {
	if vendor != "openrouter" {
		return ""
	}
	var head struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &head) != nil {
		return ""
	}
	return head.ID
}
