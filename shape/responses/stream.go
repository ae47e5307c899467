package responses

import (
	"encoding/json"
	"io"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// StreamEncoder writes canonical stream events as a Responses event
// stream: response.created and response.in_progress first; per block an
// output item (output_item.added ... output_item.done) with its content
// part and text deltas (messages), argument deltas (function calls), the
// input (custom tool calls, sent whole when the call is complete: it
// arrives as the JSON of a wrapped argument), or summary part and text
// deltas (reasoning); then response.completed (or response.incomplete);
// or, on a failure, an error event and response.failed. Every event has
// its sequence_number, counted from 0, and an SSE event line of its
// type, as OpenAI sends them.
type StreamEncoder struct {
	// OnFinal, when set, sees the final response object of a completed
	// or incomplete stream before its terminal event is written.
	OnFinal func(o *Object)

	w    io.Writer
	meta Meta
	seq  int64
	buf  []byte

	started bool
	ended   bool
	output  []any
	usage   gw.Usage

	// The open block.
	open     bool
	part     gw.Part
	item     int // output index
	itemID   string
	text     strings.Builder
	sig      strings.Builder
	summary  bool // a summary part was opened
	toolName ToolName
}

// NewStreamEncoder returns an encoder writing to w.
func NewStreamEncoder(w io.Writer, meta Meta) *StreamEncoder {
	return &StreamEncoder{w: w, meta: meta}
}

// Output returns the output items encoded so far (the final response's).
func (e *StreamEncoder) Output() []any { return e.output }

func (e *StreamEncoder) emit(typ string, v map[string]any) error {
	v["type"] = typ
	v["sequence_number"] = e.seq
	e.seq++
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.buf = sse.AppendEvent(e.buf[:0], typ, data)
	_, err = e.w.Write(e.buf)
	return err
}

func (e *StreamEncoder) start() error {
	if e.started {
		return nil
	}
	e.started = true
	o := e.meta.base("in_progress")
	if err := e.emit("response.created", map[string]any{"response": o}); err != nil {
		return err
	}
	return e.emit("response.in_progress", map[string]any{"response": o})
}

// Encode writes the Responses events of one canonical event.
func (e *StreamEncoder) Encode(ev gw.Event) error {
	if e.ended {
		return nil
	}
	if ev.Usage != nil {
		e.usage.Merge(*ev.Usage)
	}
	if err := e.start(); err != nil {
		return err
	}
	switch ev.Type {
	case gw.EventBlockStart:
		if ev.Part == nil {
			return nil
		}
		if e.open {
			if err := e.stop(); err != nil {
				return err
			}
		}
		return e.blockStart(*ev.Part)
	case gw.EventDelta:
		if !e.open {
			return nil
		}
		return e.delta(ev)
	case gw.EventBlockStop:
		if !e.open {
			return nil
		}
		return e.stop()
	case gw.EventFinish:
		if e.open {
			if err := e.stop(); err != nil {
				return err
			}
		}
		e.ended = true
		status, inc := outcome(ev.StopReason)
		o := e.meta.base(status)
		o.IncompleteDetails = inc
		o.Output = append(o.Output, e.output...)
		o.Usage = EncodeUsage(e.usage)
		typ := "response.completed"
		switch status {
		case "incomplete":
			typ = "response.incomplete"
		case "failed":
			typ = "response.failed"
			o.Error = &ObjectError{Code: "server_error", Message: "the vendor ended the answer with an error"}
		}
		if e.OnFinal != nil && status != "failed" {
			e.OnFinal(o)
		}
		return e.emit(typ, map[string]any{"response": o})
	case gw.EventError:
		e.ended = true
		code, msg := "server_error", "the vendor's stream failed"
		if ev.Err != nil {
			code, msg = string(ev.Err.Code), ev.Err.Message
		}
		errEv := map[string]any{"code": code, "message": msg, "param": nil}
		if ev.Err != nil && ev.Err.IncidentID != "" {
			errEv["incident_id"] = ev.Err.IncidentID
		}
		if err := e.emit("error", errEv); err != nil {
			return err
		}
		o := e.meta.base("failed")
		o.Output = append(o.Output, e.output...)
		o.Error = &ObjectError{Code: code, Message: msg}
		o.Usage = EncodeUsage(e.usage)
		return e.emit("response.failed", map[string]any{"response": o})
	}
	return nil
}

func (e *StreamEncoder) blockStart(p gw.Part) error {
	e.open, e.part, e.summary = true, p, false
	e.text.Reset()
	e.sig.Reset()
	e.item = len(e.output)
	var added any
	switch p.Type {
	case gw.PartText:
		e.itemID = e.meta.itemID("msg", e.item)
		added = messageItem{ID: e.itemID, Type: "message", Status: "in_progress", Role: "assistant", Content: []outputText{}}
	case gw.PartToolCall:
		e.toolName = ToolName{Name: p.ToolName}
		if e.meta.Req != nil {
			e.toolName = e.meta.Req.Tools.Lookup(p.ToolName)
		}
		if e.toolName.Custom {
			e.itemID = e.meta.itemID("ctc", e.item)
			added = customCallItem{ID: e.itemID, Type: "custom_tool_call", Status: "in_progress", CallID: p.ToolCallID, Name: e.toolName.Name, Namespace: e.toolName.Namespace}
		} else {
			e.itemID = e.meta.itemID("fc", e.item)
			added = functionCallItem{ID: e.itemID, Type: "function_call", Status: "in_progress", CallID: p.ToolCallID, Name: e.toolName.Name, Namespace: e.toolName.Namespace}
		}
	case gw.PartThinking, gw.PartRedactedThinking:
		e.itemID = e.meta.itemID("rs", e.item)
		added = reasoningItem{ID: e.itemID, Type: "reasoning", Summary: []summaryText{}}
	default:
		e.open = false
		return nil
	}
	if err := e.emit("response.output_item.added", map[string]any{"output_index": e.item, "item": added}); err != nil {
		return err
	}
	if p.Type == gw.PartText {
		return e.emit("response.content_part.added", map[string]any{"item_id": e.itemID, "output_index": e.item, "content_index": 0, "part": newOutputText("")})
	}
	return nil
}

func (e *StreamEncoder) delta(ev gw.Event) error {
	e.sig.WriteString(ev.Signature)
	if ev.Text == "" {
		return nil
	}
	e.text.WriteString(ev.Text)
	switch e.part.Type {
	case gw.PartText:
		return e.emit("response.output_text.delta", map[string]any{"item_id": e.itemID, "output_index": e.item, "content_index": 0, "delta": ev.Text, "logprobs": []any{}})
	case gw.PartThinking:
		if !e.summary {
			e.summary = true
			if err := e.emit("response.reasoning_summary_part.added", map[string]any{"item_id": e.itemID, "output_index": e.item, "summary_index": 0, "part": summaryText{Type: "summary_text", Text: ""}}); err != nil {
				return err
			}
		}
		return e.emit("response.reasoning_summary_text.delta", map[string]any{"item_id": e.itemID, "output_index": e.item, "summary_index": 0, "delta": ev.Text})
	case gw.PartToolCall:
		if e.toolName.Custom {
			return nil // sent whole at the end (it is the JSON of the wrapper)
		}
		return e.emit("response.function_call_arguments.delta", map[string]any{"item_id": e.itemID, "output_index": e.item, "delta": ev.Text})
	}
	return nil
}

func (e *StreamEncoder) stop() error {
	e.open = false
	p := e.part
	switch p.Type {
	case gw.PartText:
		p.Text += e.text.String()
	case gw.PartThinking:
		p.Text += e.text.String()
		p.Signature += e.sig.String()
	case gw.PartToolCall:
		args := strings.TrimSpace(e.text.String())
		if args == "" {
			args = "{}"
		}
		p.Arguments = json.RawMessage(args)
	}
	done, err := e.meta.item(&p, e.item, "completed")
	if err != nil {
		return err
	}
	switch p.Type {
	case gw.PartText:
		if err := e.emit("response.output_text.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "content_index": 0, "text": p.Text, "logprobs": []any{}}); err != nil {
			return err
		}
		if err := e.emit("response.content_part.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "content_index": 0, "part": newOutputText(p.Text)}); err != nil {
			return err
		}
	case gw.PartThinking:
		if e.summary {
			if err := e.emit("response.reasoning_summary_text.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "summary_index": 0, "text": p.Text}); err != nil {
				return err
			}
			if err := e.emit("response.reasoning_summary_part.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "summary_index": 0, "part": summaryText{Type: "summary_text", Text: p.Text}}); err != nil {
				return err
			}
		}
	case gw.PartToolCall:
		if c, ok := done.(customCallItem); ok {
			if c.Input != "" {
				if err := e.emit("response.custom_tool_call_input.delta", map[string]any{"item_id": e.itemID, "output_index": e.item, "delta": c.Input}); err != nil {
					return err
				}
			}
			if err := e.emit("response.custom_tool_call_input.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "input": c.Input}); err != nil {
				return err
			}
		} else if f, ok := done.(functionCallItem); ok {
			if err := e.emit("response.function_call_arguments.done", map[string]any{"item_id": e.itemID, "output_index": e.item, "name": f.Name, "arguments": f.Arguments}); err != nil {
				return err
			}
		}
	}
	e.output = append(e.output, done)
	return e.emit("response.output_item.done", map[string]any{"output_index": e.item, "item": done})
}
