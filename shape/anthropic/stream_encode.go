package anthropic

import (
	"io"
	"strconv"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/jsonenc"
	"github.com/gwlabs/gateway/sse"
)

// StreamEncoder writes canonical stream events as an M event stream:
// message_start, then per block content_block_start, content_block_delta*
// and content_block_stop with the canonical indices, then message_delta
// (stop reason, stop sequence, final cumulative usage) and message_stop.
// Each wire event is one Write call, so the caller can flush after each.
// An EventError becomes an `event: error` and ends the stream. A
// StreamEncoder is not safe for concurrent use.
type StreamEncoder struct {
	w    io.Writer
	meta ResponseMeta
	buf  []byte
	tmp  []byte

	started bool
	done    bool
	open    bool // a block is open (started, not stopped)
	openIdx int  // its index
	kinds   []gw.PartType
	usage   gw.Usage
}

// NewStreamEncoder returns a StreamEncoder writing to w. meta.ID is the
// message id (the gateway request id) and meta.Model the model.
func NewStreamEncoder(w io.Writer, meta ResponseMeta) *StreamEncoder {
	return &StreamEncoder{w: w, meta: meta, buf: make([]byte, 0, 512)}
}

// Encode writes the wire events for ev. A Start carries the usage known
// up front (or the server's input estimate) into message_start; events
// out of order are repaired where the M sequence allows (a missing
// message_start is written first, an open block is stopped before the
// next one starts and before message_delta). Events after Finish or Error
// are ignored. Encode returns the writer's error, or an *gw.Error for an
// event the M shape cannot carry.
func (e *StreamEncoder) Encode(ev gw.Event) error {
	if e.done {
		return nil
	}
	switch ev.Type {
	case gw.EventStart:
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
		return e.start()
	case gw.EventBlockStart:
		if err := e.start(); err != nil {
			return err
		}
		if e.open {
			if err := e.stopBlock(e.openIdx); err != nil {
				return err
			}
		}
		return e.startBlock(ev.Index, ev.Part)
	case gw.EventDelta:
		if err := e.start(); err != nil {
			return err
		}
		return e.delta(&ev)
	case gw.EventBlockStop:
		if !e.open || ev.Index != e.openIdx {
			return nil
		}
		return e.stopBlock(ev.Index)
	case gw.EventFinish:
		if err := e.start(); err != nil {
			return err
		}
		if e.open {
			if err := e.stopBlock(e.openIdx); err != nil {
				return err
			}
		}
		if ev.StopReason == gw.StopError {
			e.done = true
			return e.write(ErrorEvent(e.meta.ID, &gw.Error{Code: gw.CodeUpstream, Message: "the vendor ended the response with an error"}))
		}
		if ev.Usage != nil {
			e.usage = *ev.Usage
		}
		e.done = true
		if err := e.messageDelta(ev.StopReason, ev.StopSequence); err != nil {
			return err
		}
		return e.write(append(e.buf[:0], "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...))
	case gw.EventError:
		e.done = true
		err := ev.Err
		if err == nil {
			err = &gw.Error{Code: gw.CodeUpstream, Message: "the vendor stream failed"}
		}
		return e.write(ErrorEvent(e.meta.ID, err))
	}
	return nil
}

func (e *StreamEncoder) write(b []byte) error {
	_, err := e.w.Write(b)
	return err
}

// event writes one named event whose data is e.tmp.
func (e *StreamEncoder) event(typ string) error {
	e.buf = sse.AppendEvent(e.buf[:0], typ, e.tmp)
	return e.write(e.buf)
}

func (e *StreamEncoder) start() error {
	if e.started {
		return nil
	}
	e.started = true
	b := append(e.tmp[:0], `{"type":"message_start","message":{"id":`...)
	b = jsonenc.AppendString(b, e.meta.ID)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = jsonenc.AppendString(b, e.meta.Model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = appendUsage(b, e.usage, true)
	b = append(b, "}}"...)
	e.tmp = b
	return e.event("message_start")
}

func (e *StreamEncoder) startBlock(idx int, p *gw.Part) error {
	if p == nil {
		return gw.Errorf(gw.CodeInternal, "stream block %d starts without a part", idx)
	}
	b := append(e.tmp[:0], `{"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, `,"content_block":`...)
	switch p.Type {
	case gw.PartText:
		b = append(b, `{"type":"text","text":""}`...)
	case gw.PartThinking:
		b = append(b, `{"type":"thinking","thinking":"","signature":""}`...)
	case gw.PartRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = jsonenc.AppendString(b, p.RedactedData)
		b = append(b, '}')
	case gw.PartToolCall:
		b = append(b, `{"type":"tool_use","id":`...)
		b = jsonenc.AppendString(b, p.ToolCallID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, p.ToolName)
		b = append(b, `,"input":{}}`...)
	default:
		return gw.Errorf(gw.CodeUpstream, "the vendor streamed a %s part, which a Messages stream cannot carry", p.Type)
	}
	b = append(b, '}')
	e.tmp = b
	for len(e.kinds) <= idx {
		e.kinds = append(e.kinds, "")
	}
	e.kinds[idx] = p.Type
	e.open, e.openIdx = true, idx
	return e.event("content_block_start")
}

func (e *StreamEncoder) delta(ev *gw.Event) error {
	if ev.Index < 0 || ev.Index >= len(e.kinds) {
		return gw.Errorf(gw.CodeInternal, "stream delta for unknown block %d", ev.Index)
	}
	kind := e.kinds[ev.Index]
	switch kind {
	case gw.PartText:
		if ev.Text == "" {
			return nil
		}
		return e.deltaEvent(ev.Index, "text_delta", "text", ev.Text)
	case gw.PartThinking:
		if ev.Text != "" {
			if err := e.deltaEvent(ev.Index, "thinking_delta", "thinking", ev.Text); err != nil {
				return err
			}
		}
		if ev.Signature != "" {
			return e.deltaEvent(ev.Index, "signature_delta", "signature", ev.Signature)
		}
		return nil
	case gw.PartToolCall:
		if ev.Text == "" {
			return nil
		}
		return e.deltaEvent(ev.Index, "input_json_delta", "partial_json", ev.Text)
	}
	// Redacted thinking arrives whole in its start; nothing to add.
	return nil
}

func (e *StreamEncoder) deltaEvent(idx int, typ, field, text string) error {
	b := append(e.tmp[:0], `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = jsonenc.AppendString(b, text)
	b = append(b, "}}"...)
	e.tmp = b
	return e.event("content_block_delta")
}

func (e *StreamEncoder) stopBlock(idx int) error {
	e.open = false
	b := append(e.tmp[:0], `{"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(idx), 10)
	e.tmp = append(b, '}')
	return e.event("content_block_stop")
}

func (e *StreamEncoder) messageDelta(stop gw.StopReason, seq string) error {
	if stop == "" {
		stop = gw.StopEndTurn
	}
	b := append(e.tmp[:0], `{"type":"message_delta","delta":{"stop_reason":`...)
	b = jsonenc.AppendString(b, string(stop))
	b = append(b, `,"stop_sequence":`...)
	if seq != "" {
		b = jsonenc.AppendString(b, seq)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `},"usage":`...)
	b = appendUsage(b, e.usage, false)
	e.tmp = append(b, '}')
	return e.event("message_delta")
}

// appendUsage appends an M usage object: message_start's full one (with
// the cache_creation TTL split) or message_delta's cumulative one
// (output_tokens first, as Anthropic sends it).
func appendUsage(b []byte, u gw.Usage, start bool) []byte {
	num := func(b []byte, name string, v int64) []byte {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		return strconv.AppendInt(b, v, 10)
	}
	if start {
		b = num(append(b, '{'), "input_tokens", u.InputTokens)
		b = num(append(b, ','), "cache_creation_input_tokens", u.CacheWriteTokens())
		b = num(append(b, ','), "cache_read_input_tokens", u.CacheReadTokens)
		b = num(append(b, `,"cache_creation":{`...), "ephemeral_5m_input_tokens", u.CacheWrite5mTokens)
		b = num(append(b, ','), "ephemeral_1h_input_tokens", u.CacheWrite1hTokens)
		b = num(append(b, "},"...), "output_tokens", u.OutputTokens)
		return append(b, '}')
	}
	b = num(append(b, '{'), "output_tokens", u.OutputTokens)
	b = num(append(b, ','), "input_tokens", u.InputTokens)
	b = num(append(b, ','), "cache_read_input_tokens", u.CacheReadTokens)
	b = num(append(b, ','), "cache_creation_input_tokens", u.CacheWriteTokens())
	if u.CacheWriteTokens() > 0 {
		// Anthropic's message_delta carries only the total; the TTL split
		// is added for readers that bill by it (clients that do not know
		// the field skip it).
		b = num(append(b, `,"cache_creation":{`...), "ephemeral_5m_input_tokens", u.CacheWrite5mTokens)
		b = num(append(b, ','), "ephemeral_1h_input_tokens", u.CacheWrite1hTokens)
		b = append(b, '}')
	}
	if u.ReasoningTokens > 0 {
		b = num(append(b, `,"output_tokens_details":{`...), "thinking_tokens", u.ReasoningTokens)
		b = append(b, '}')
	}
	return append(b, '}')
}

// ErrorEvent returns the complete SSE bytes of an in-stream M error
// event for e: `event: error` with data
// {"type":"error","error":{"type":"overloaded_error"|"api_error","message","request_id"}}.
// CodeOverloaded maps to overloaded_error, everything else to api_error,
// the types Anthropic's clients expect mid-stream.
func ErrorEvent(requestID string, e *gw.Error) []byte {
	typ := "api_error"
	switch e.Code {
	case gw.CodeOverloaded:
		typ = "overloaded_error"
	case gw.CodeRequestBlocked:
		// An answer the guard stopped: the gateway's own type, as in its
		// 403 envelope.
		typ = string(gw.CodeRequestBlocked)
	}
	b := make([]byte, 0, 96+len(e.Message)+len(requestID))
	b = append(b, `event: error`+"\n"+`data: {"type":"error","error":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","message":`...)
	b = jsonenc.AppendString(b, e.Message)
	if requestID != "" {
		b = append(b, `,"request_id":`...)
		b = jsonenc.AppendString(b, requestID)
	}
	if e.IncidentID != "" {
		b = append(b, `,"incident_id":`...)
		b = jsonenc.AppendString(b, e.IncidentID)
	}
	return append(b, "}}\n\n"...)
}
