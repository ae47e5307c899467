package openai

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/jsonenc"
)

// StreamEncoder writes a canonical event stream to a C client as
// chat.completion.chunk events (the vendor protocol notes, section 8.2).
// Each chunk is written with one Write call. Sequence: a role chunk
// (delta {"role":"assistant","content":""}) at Start; content chunks for
// text deltas; reasoning_content chunks for thinking deltas; tool_calls
// chunks whose index counts tool calls only (0, 1, 2, ... whatever blocks
// came before) with id, type and name on the first fragment only; at
// Finish a chunk with an empty delta and the finish_reason, then, when the
// caller asked for usage, a usage chunk (choices []; every other chunk
// then has "usage":null), then `data: [DONE]`. An Error event becomes the
// gateway's error chunk (ErrorChunk) followed by `data: [DONE]`. A
// StreamEncoder is not safe for concurrent use.
type StreamEncoder struct {
	w            io.Writer
	meta         ResponseMeta
	includeUsage bool
	requestID    string

	prefix []byte // `data: {"id":...,"choices":[` shared by every chunk
	buf    []byte

	started  bool
	ended    bool
	kind     gw.PartType // type of the open block
	tool     int         // C tool index of the open tool block
	nextTool int
	usage    gw.Usage
}

// NewStreamEncoder returns a StreamEncoder writing to w. includeUsage is
// the caller's stream_options.include_usage.
func NewStreamEncoder(w io.Writer, meta ResponseMeta, includeUsage bool) *StreamEncoder {
	e := &StreamEncoder{w: w, meta: meta, includeUsage: includeUsage}
	if rest, ok := strings.CutPrefix(meta.ID, "chatcmpl_"); ok {
		e.requestID = "req_" + rest
	}
	p := []byte(`data: {"id":`)
	p = jsonenc.AppendString(p, meta.ID)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, meta.Created, 10)
	p = append(p, `,"model":`...)
	p = jsonenc.AppendString(p, meta.Model)
	p = append(p, `,"choices":[`...)
	e.prefix = p
	e.buf = make([]byte, 0, 512)
	return e
}

// SetRequestID sets the request id reported in an error chunk; by default
// it is derived from the meta id ("chatcmpl_X" -> "req_X").
func (e *StreamEncoder) SetRequestID(id string) { e.requestID = id }

// Encode writes the chunks for one event. Events after Finish or Error
// are ignored.
func (e *StreamEncoder) Encode(ev gw.Event) error {
	if e.ended {
		return nil
	}
	switch ev.Type {
	case gw.EventStart:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
		return e.start()
	case gw.EventBlockStart:
		if err := e.start(); err != nil {
			return err
		}
		e.kind = ""
		if ev.Part == nil {
			return nil
		}
		e.kind = ev.Part.Type
		if e.kind != gw.PartToolCall {
			return nil
		}
		e.tool = e.nextTool
		e.nextTool++
		b := e.open()
		b = append(b, `{"tool_calls":[{"index":`...)
		b = strconv.AppendInt(b, int64(e.tool), 10)
		b = append(b, `,"id":`...)
		b = jsonenc.AppendString(b, ev.Part.ToolCallID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = jsonenc.AppendString(b, ev.Part.ToolName)
		b = append(b, `,"arguments":""}}]}`...)
		return e.close(b, "")
	case gw.EventDelta:
		if ev.Text == "" {
			return nil
		}
		if err := e.start(); err != nil {
			return err
		}
		b := e.open()
		switch e.kind {
		case gw.PartText:
			b = append(b, `{"content":`...)
			b = jsonenc.AppendString(b, ev.Text)
			b = append(b, '}')
		case gw.PartThinking:
			b = append(b, `{"reasoning_content":`...)
			b = jsonenc.AppendString(b, ev.Text)
			b = append(b, '}')
		case gw.PartToolCall:
			b = append(b, `{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(e.tool), 10)
			b = append(b, `,"function":{"arguments":`...)
			b = jsonenc.AppendString(b, ev.Text)
			b = append(b, `}}]}`...)
		default:
			return nil // redacted thinking and unknown blocks have no C form
		}
		return e.close(b, "")
	case gw.EventBlockStop:
		e.kind = ""
		return nil
	case gw.EventFinish:
		if err := e.start(); err != nil {
			return err
		}
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
		e.ended = true
		b := e.open()
		b = append(b, `{}`...)
		if err := e.close(b, finishReason(ev.StopReason)); err != nil {
			return err
		}
		if e.includeUsage {
			b = append(e.buf[:0], e.prefix...)
			b = append(b, `],"usage":`...)
			ub, err := jsonMarshal(encodeUsage(e.usage))
			if err != nil {
				return fmt.Errorf("encode usage chunk: %w", err)
			}
			b = append(b, ub...)
			b = append(b, "}\n\n"...)
			if err := e.write(b); err != nil {
				return err
			}
		}
		return e.done()
	case gw.EventError:
		e.ended = true
		b := append(e.buf[:0], "data: "...)
		b = append(b, ErrorChunk(e.requestID, ev.Err)...)
		b = append(b, "\n\n"...)
		if err := e.write(b); err != nil {
			return err
		}
		return e.done()
	}
	return nil
}

// start writes the role chunk once.
func (e *StreamEncoder) start() error {
	if e.started {
		return nil
	}
	e.started = true
	b := e.open()
	b = append(b, `{"role":"assistant","content":""}`...)
	return e.close(b, "")
}

// open starts a chunk up to its delta value.
func (e *StreamEncoder) open() []byte {
	b := append(e.buf[:0], e.prefix...)
	return append(b, `{"index":0,"delta":`...)
}

// close finishes a chunk opened by open (after its delta) and writes it.
func (e *StreamEncoder) close(b []byte, finish string) error {
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, finish)
	}
	b = append(b, "}]"...)
	if e.includeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, "}\n\n"...)
	return e.write(b)
}

func (e *StreamEncoder) write(b []byte) error {
	e.buf = b[:0]
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("write chunk: %w", err)
	}
	return nil
}

func (e *StreamEncoder) done() error {
	return e.write(append(e.buf[:0], "data: [DONE]\n\n"...))
}
