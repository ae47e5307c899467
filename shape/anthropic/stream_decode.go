package anthropic

import (
	"encoding/json"
	"io"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// StreamDecoder turns Anthropic's event stream into canonical events. It
// follows the stream's own order: message_start -> Start (with the
// input and cache usage known so far); content_block_start/delta/stop ->
// BlockStart/Delta/BlockStop (text_delta and thinking_delta as Text,
// signature_delta as Signature, input_json_delta as Text of the tool
// block; citations_delta carries no text and is skipped);
// message_delta's stop reason and cumulative usage (which replaces, never
// adds to, earlier counts) -> Finish at message_stop; ping and unknown
// event types are skipped. An `error` event becomes EventError
// (CodeOverloaded for overloaded_error, else CodeUpstream), and so does a
// stream that ends before message_stop: a cut stream is never a success.
type StreamDecoder struct {
	body io.ReadCloser
	r    *sse.Reader

	queue   []gw.Event // events to hand out, from qhead on
	qhead   int
	done    bool
	started bool // Start was queued

	usage        gw.Usage
	stopReason   gw.StopReason
	stopSequence string

	next     int  // next canonical block index
	open     bool // a block is open
	openWire int  // the open block's wire index
	openIdx  int  // its canonical index

	ev    streamEvent // decode targets, reused
	delta deltaEvent
}

// NewStreamDecoder returns a gw.EventStream over an Anthropic SSE body. It
// owns body and closes it on Close.
func NewStreamDecoder(body io.ReadCloser) gw.EventStream {
	return &StreamDecoder{body: body, r: sse.NewReader(body)}
}

// streamEvent is any M stream event's payload; fields of other event
// types stay zero.
type streamEvent struct {
	Type         string        `json:"type"`
	Index        int           `json:"index"`
	Message      *wireResponse `json:"message"`
	ContentBlock *wireBlock    `json:"content_block"`
	Delta        struct {
		deltaFields
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// deltaFields are a content_block_delta's delta.
type deltaFields struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
}

// deltaEvent is a content_block_delta event.
type deltaEvent struct {
	Index int         `json:"index"`
	Delta deltaFields `json:"delta"`
}

func (d *StreamDecoder) contentDelta(ev *deltaEvent) {
	if !d.open || ev.Index != d.openWire {
		d.fail(upstreamErr("content_block_delta for a block that is not open", nil))
		return
	}
	delta := gw.Event{Type: gw.EventDelta, Index: d.openIdx}
	switch ev.Delta.Type {
	case "text_delta":
		delta.Text = ev.Delta.Text
	case "thinking_delta":
		delta.Text = ev.Delta.Thinking
	case "signature_delta":
		delta.Signature = ev.Delta.Signature
	case "input_json_delta":
		delta.Text = ev.Delta.PartialJSON
	default:
		// citations_delta and future delta types add no text.
		return
	}
	if delta.Text != "" || delta.Signature != "" {
		d.push(delta)
	}
}

// Recv returns the next canonical event, io.EOF after the last one.
func (d *StreamDecoder) Recv() (gw.Event, error) {
	for d.qhead == len(d.queue) {
		d.queue, d.qhead = d.queue[:0], 0
		if d.done {
			return gw.Event{}, io.EOF
		}
		d.step()
	}
	ev := d.queue[d.qhead]
	d.queue[d.qhead] = gw.Event{}
	d.qhead++
	return ev, nil
}

// Close closes the body.
func (d *StreamDecoder) Close() error { return d.body.Close() }

func (d *StreamDecoder) push(ev gw.Event) { d.queue = append(d.queue, ev) }

// fail ends the stream with an error event. The event also carries the
// usage seen so far, when any was, so that a failed stream can still be
// metered.
func (d *StreamDecoder) fail(err *gw.Error) {
	ev := gw.Event{Type: gw.EventError, Err: err}
	if d.usage.Reported {
		u := d.usage
		ev.Usage = &u
	}
	d.queue = append(d.queue[:d.qhead], ev)
	d.done = true
}

// finish ends the stream with Finish.
func (d *StreamDecoder) finish() {
	d.closeOpen()
	fin := gw.Event{Type: gw.EventFinish, StopReason: d.stopReason, StopSequence: d.stopSequence}
	if d.usage.Reported {
		u := d.usage
		fin.Usage = &u
	}
	d.push(fin)
	d.done = true
}

// step reads one wire event and queues what it becomes.
func (d *StreamDecoder) step() {
	if !d.r.Next() {
		if d.stopReason != "" {
			// message_delta said how the answer ended: it is whole, and
			// a cut before message_stop ends it as finished (billed).
			d.finish()
			return
		}
		if err := d.r.Err(); err != nil {
			d.fail(upstreamErr("stream read failed", err))
			return
		}
		d.fail(&gw.Error{Code: gw.CodeUpstream, Message: "anthropic: stream ended early"})
		return
	}
	raw := d.r.Event()
	typ := raw.Type
	if raw.Data == nil || typ == "ping" {
		return
	}
	switch typ {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop", "error", "":
	default:
		// Anthropic may add event types; its clients skip unknown ones.
		return
	}
	if typ == "content_block_delta" {
		// The hot path: a small struct, no pointers to reset.
		d.delta = deltaEvent{}
		if err := json.Unmarshal(raw.Data, &d.delta); err != nil {
			d.fail(upstreamErr("malformed stream event", err))
			return
		}
		d.contentDelta(&d.delta)
		return
	}
	d.ev = streamEvent{}
	ev := &d.ev
	if err := json.Unmarshal(raw.Data, ev); err != nil {
		d.fail(upstreamErr("malformed stream event", err))
		return
	}
	if typ == "" {
		typ = ev.Type
	}
	if typ == "message_start" {
		if m := ev.Message; m != nil && m.Usage != nil {
			applyUsage(&d.usage, m.Usage)
		}
		if !d.started {
			d.started = true
			start := gw.Event{Type: gw.EventStart}
			if m := ev.Message; m != nil {
				start.ID, start.Model = m.ID, m.Model
			}
			if d.usage.Reported {
				u := d.usage
				start.Usage = &u
			}
			d.push(start)
		}
		return
	}
	if !d.started && typ != "error" {
		// Content before message_start: the canonical stream still
		// begins with Start.
		d.started = true
		d.push(gw.Event{Type: gw.EventStart})
	}
	switch typ {
	case "content_block_start":
		d.blockStart(ev)
	case "content_block_delta":
		// A data-only stream: decoded generically above.
		d.contentDelta(&deltaEvent{Index: ev.Index, Delta: ev.Delta.deltaFields})
	case "content_block_stop":
		if d.open && ev.Index == d.openWire {
			d.open = false
			d.push(gw.Event{Type: gw.EventBlockStop, Index: d.openIdx})
		}
	case "message_delta":
		if ev.Delta.StopReason != nil {
			d.stopReason = gw.StopReason(*ev.Delta.StopReason)
		}
		if ev.Delta.StopSequence != nil {
			d.stopSequence = *ev.Delta.StopSequence
		}
		if ev.Usage != nil {
			applyUsage(&d.usage, ev.Usage)
		}
	case "message_stop":
		d.finish()
	case "error":
		code, msg := gw.CodeUpstream, "stream error"
		if ev.Error != nil {
			if ev.Error.Type == "overloaded_error" {
				code = gw.CodeOverloaded
			}
			if ev.Error.Message != "" {
				msg = ev.Error.Message
			} else if ev.Error.Type != "" {
				msg = ev.Error.Type
			}
		}
		d.fail(&gw.Error{Code: code, Message: "anthropic: " + msg})
	}
}

func (d *StreamDecoder) closeOpen() {
	if d.open {
		d.open = false
		d.push(gw.Event{Type: gw.EventBlockStop, Index: d.openIdx})
	}
}

func (d *StreamDecoder) blockStart(ev *streamEvent) {
	b := ev.ContentBlock
	if b == nil {
		d.fail(upstreamErr("content_block_start without a block", nil))
		return
	}
	d.closeOpen()
	idx := d.next
	var p gw.Part
	var first gw.Event // initial content carried by the start, if any
	switch b.Type {
	case "text":
		p.Type = gw.PartText
		if b.Text != nil && *b.Text != "" {
			first = gw.Event{Type: gw.EventDelta, Index: idx, Text: *b.Text}
		}
	case "thinking":
		p.Type = gw.PartThinking
		if b.Thinking != nil && *b.Thinking != "" {
			first = gw.Event{Type: gw.EventDelta, Index: idx, Text: *b.Thinking}
		}
		if b.Signature != "" {
			first.Type, first.Index, first.Signature = gw.EventDelta, idx, b.Signature
		}
	case "redacted_thinking":
		p = gw.Part{Type: gw.PartRedactedThinking, RedactedData: b.Data}
	case "tool_use":
		p = gw.Part{Type: gw.PartToolCall, ToolCallID: b.ID, ToolName: b.Name}
		if in, ok := compactObject(b.Input); ok && string(in) != "{}" {
			first = gw.Event{Type: gw.EventDelta, Index: idx, Text: string(in)}
		}
	default:
		d.fail(gw.Errorf(gw.CodeUpstream, "anthropic: unsupported content block type %q", b.Type))
		return
	}
	d.next++
	d.open, d.openWire, d.openIdx = true, ev.Index, idx
	d.push(gw.Event{Type: gw.EventBlockStart, Index: idx, Part: &p})
	if first.Type != 0 {
		d.push(first)
	}
}
