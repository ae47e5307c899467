package gemini

import (
	"bytes"
	"encoding/json"
	"io"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// StreamEncoder writes canonical stream events as a streamGenerateContent
// answer: one GenerateContentResponse per text or thought fragment and
// one per finished function call (Gemini sends a call whole, never in
// pieces), then a last record with finishReason and usageMetadata. With
// SSE (the caller's alt=sse) each record is a data-only event; without,
// the records form Google's default JSON array ("[" record "," record
// "]"). Every record carries modelVersion and responseId. An EventError
// becomes a record {"error":{...}} in Google's envelope and ends the
// stream. Each record is one Write, so the caller can flush after each.
// A StreamEncoder is not safe for concurrent use.
type StreamEncoder struct {
	w         io.Writer
	meta      Meta
	sse       bool
	requestID string

	wrote bool // a record was written (array: "[" sent)
	done  bool
	buf   []byte
	calls map[int]*FunctionCall
	args  map[int]*bytes.Buffer
	kinds map[int]gw.PartType
	usage gw.Usage
}

// NewStreamEncoder returns an encoder writing to w; requestID goes into
// error records' ErrorInfo.
func NewStreamEncoder(w io.Writer, meta Meta, sseMode bool, requestID string) *StreamEncoder {
	return &StreamEncoder{w: w, meta: meta, sse: sseMode, requestID: requestID,
		calls: map[int]*FunctionCall{}, args: map[int]*bytes.Buffer{}, kinds: map[int]gw.PartType{}}
}

// Encode writes the records for ev. Events after Finish or Error are
// ignored. It returns the writer's error.
func (e *StreamEncoder) Encode(ev gw.Event) error {
	if e.done {
		return nil
	}
	switch ev.Type {
	case gw.EventStart:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
	case gw.EventBlockStart:
		if ev.Part == nil {
			return nil
		}
		e.kinds[ev.Index] = ev.Part.Type
		switch ev.Part.Type {
		case gw.PartToolCall:
			e.calls[ev.Index] = &FunctionCall{ID: ev.Part.ToolCallID, Name: ev.Part.ToolName}
			e.args[ev.Index] = &bytes.Buffer{}
			if len(ev.Part.Arguments) > 0 {
				e.args[ev.Index].Write(ev.Part.Arguments)
			}
		case gw.PartImage:
			if p, ok := partOf(ev.Part, false); ok {
				return e.record([]Part{p}, "", nil)
			}
		}
	case gw.EventDelta:
		switch e.kinds[ev.Index] {
		case gw.PartToolCall:
			if b := e.args[ev.Index]; b != nil {
				b.WriteString(ev.Text)
			}
		case gw.PartThinking:
			if e.meta.IncludeThoughts && ev.Text != "" {
				t := ev.Text
				return e.record([]Part{{Text: &t, Thought: true}}, "", nil)
			}
		case gw.PartText, "":
			if ev.Text != "" {
				t := ev.Text
				return e.record([]Part{{Text: &t}}, "", nil)
			}
		}
	case gw.EventBlockStop:
		c := e.calls[ev.Index]
		if c == nil {
			return nil
		}
		delete(e.calls, ev.Index)
		args, err := objectJSON(e.args[ev.Index].Bytes())
		if err != nil {
			return e.Encode(gw.Event{Type: gw.EventError, Err: &gw.Error{Code: gw.CodeUpstream, Message: "the vendor sent function-call arguments that are not a JSON object"}})
		}
		c.Args = args
		return e.record([]Part{{FunctionCall: c}}, "", nil)
	case gw.EventFinish:
		if ev.Usage != nil {
			e.usage.Merge(*ev.Usage)
		}
		if ev.StopReason == gw.StopError {
			return e.Encode(gw.Event{Type: gw.EventError, Err: &gw.Error{Code: gw.CodeUpstream, Message: "the vendor ended the response with an error"}})
		}
		e.done = true
		return e.record(nil, FinishReason(ev.StopReason), EncodeUsage(e.usage))
	case gw.EventError:
		e.done = true
		err := ev.Err
		if err == nil {
			err = &gw.Error{Code: gw.CodeUpstream, Message: "the vendor's stream failed"}
		}
		return e.write(ErrorBody(err, e.requestID))
	}
	return nil
}

// record writes one GenerateContentResponse.
func (e *StreamEncoder) record(parts []Part, finish string, usage *UsageMetadata) error {
	c := Candidate{FinishReason: finish}
	if len(parts) > 0 {
		c.Content = &Content{Role: "model", Parts: parts}
	}
	b, err := json.Marshal(&Response{Candidates: []Candidate{c}, UsageMetadata: usage, ModelVersion: e.meta.ModelVersion, ResponseID: e.meta.ResponseID})
	if err != nil {
		return err
	}
	return e.write(b)
}

func (e *StreamEncoder) write(data []byte) error {
	e.buf = e.buf[:0]
	if e.sse {
		e.buf = sse.AppendEvent(e.buf, "", data)
	} else {
		e.buf = AppendArrayElement(e.buf, data, !e.wrote)
		if e.done {
			e.buf = AppendArrayEnd(e.buf, false)
		}
	}
	e.wrote = true
	_, err := e.w.Write(e.buf)
	return err
}

// AppendArrayElement appends one record of Google's JSON-array stream:
// "[" before the first, "\n,\r\n" (Google's separator) before the others.
func AppendArrayElement(buf, data []byte, first bool) []byte {
	if first {
		buf = append(buf, '[')
	} else {
		buf = append(buf, "\n,\r\n"...)
	}
	return append(buf, data...)
}

// AppendArrayEnd closes the JSON-array stream; empty says no record was
// written (the answer is then "[]").
func AppendArrayEnd(buf []byte, empty bool) []byte {
	if empty {
		return append(buf, "[]"...)
	}
	return append(buf, "\n]"...)
}
