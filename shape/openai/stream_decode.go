package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// NewStreamDecoder returns the canonical event stream of a C vendor's SSE
// body (the vendor protocol notes, section 8.1). It takes ownership of
// body and closes it on Close. d may be nil (plain OpenAI rules).
//
// The decoder is a state machine over chunks:
//   - Start comes with the first chunk (its id and model).
//   - reasoning_content / reasoning / Mistral thinking chunks form a
//     thinking block, content a text block; switching kind closes the
//     open block first. Empty fragments are skipped.
//   - A tool call (keyed by its index; a repeated index with a new id, or
//     a call without index but with an id, is a new call) opens a tool
//     block whose argument fragments stream live as Delta text. Blocks are
//     strictly sequential, so a second call that starts while the first is
//     open is buffered and emitted whole (start, one delta, stop) once the
//     open block closes; fragments interleaved between parallel calls thus
//     stay on their own call. A call that never got arguments gets "{}".
//   - finish_reason closes the open block; Finish follows at [DONE] (or
//     EOF after a finish_reason) with the last usage seen (top-level usage
//     on any chunk, or Groq's x_groq.usage).
//   - An {"error":...} chunk, Groq's x_groq.error, or a finish_reason of
//     "error" / "insufficient_system_resource" is an EventError, as is a
//     stream cut before any finish (CodeUpstream; CodeOverloaded for an
//     overload signal). Nothing follows an EventError or Finish.
func NewStreamDecoder(body io.ReadCloser, d *Dialect) gw.EventStream {
	vendor := "upstream"
	if d != nil && d.Vendor != "" {
		vendor = d.Vendor
	}
	return &streamDecoder{body: body, rd: sse.NewReader(body), vendor: vendor, open: blockNone}
}

type blockKind int

const (
	blockNone blockKind = iota
	blockThinking
	blockText
	blockTool
)

// toolCall is one tool call of the stream.
type toolCall struct {
	cIndex   int    // the vendor's index, or a synthetic negative key
	id, name string // as first seen
	args     []byte // buffered argument text (pending calls only)
	block    int    // canonical block index once started
	state    toolState
	sentArgs bool // a non-empty argument fragment went out live
}

type toolState int

const (
	toolPending toolState = iota // buffered, no block yet
	toolLive                     // its block is the open block
	toolDone                     // its block is closed
)

type streamDecoder struct {
	body   io.ReadCloser
	rd     *sse.Reader
	vendor string

	queue []gw.Event
	head  int

	started  bool // Start emitted
	terminal bool // Finish or Error emitted: nothing more
	closed   bool

	open      blockKind
	openIndex int // canonical index of the open block
	next      int // next canonical block index

	calls    []*toolCall // every call, in order of appearance
	live     *toolCall   // the call whose block is open
	pending  []*toolCall // calls waiting for the open block to close
	sawTools bool

	finished bool // a finish_reason arrived
	refused  bool // the text was a refusal
	stop     gw.StopReason
	usage    gw.Usage

	chunk inChunk // reused decode target
}

// Recv returns the next canonical event, or io.EOF after the last one
// (and after Close).
func (s *streamDecoder) Recv() (gw.Event, error) {
	if s.closed {
		return gw.Event{}, io.EOF
	}
	for s.head >= len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
		if s.terminal || s.closed {
			return gw.Event{}, io.EOF
		}
		s.step()
	}
	ev := s.queue[s.head]
	s.queue[s.head] = gw.Event{}
	s.head++
	return ev, nil
}

// Close releases the body; it may be called more than once.
func (s *streamDecoder) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.body.Close()
}

func (s *streamDecoder) push(ev gw.Event) { s.queue = append(s.queue, ev) }

// fail ends the stream with an error event.
func (s *streamDecoder) fail(e *gw.Error) {
	ev := gw.Event{Type: gw.EventError, Err: e}
	if s.usage.Reported {
		// The usage seen so far, so that a stream the caller left (its
		// read cancelled) is billed for what the vendor reported.
		u := s.usage
		ev.Usage = &u
	}
	s.push(ev)
	s.terminal = true
}

// step reads one SSE event and queues what it yields.
func (s *streamDecoder) step() {
	if !s.rd.Next() {
		if s.finished {
			// A finish_reason was seen: the answer is whole, whether the
			// stream then ended or was cut before [DONE] (and before a
			// usage chunk: the gateway's own count bills it).
			s.end()
			return
		}
		if err := s.rd.Err(); err != nil {
			s.fail(upstreamErr(s.vendor+": stream read failed", fmt.Errorf("read stream: %w", err)))
			return
		}
		s.fail(upstreamErr(s.vendor+": stream ended before it finished", nil))
		return
	}
	ev := s.rd.Event()
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return // comments (": keep-alive"), blank blocks
	}
	if string(data) == doneMarker {
		s.end()
		return
	}
	s.chunkEvent(data)
}

// end emits Finish after [DONE] (or EOF after a finish_reason).
func (s *streamDecoder) end() {
	if !s.started {
		s.fail(upstreamErr(s.vendor+": stream ended without content", nil))
		return
	}
	s.closeOpen()
	stop := s.stop
	if !s.finished {
		stop = stopReason("", s.sawTools)
	}
	u := s.usage
	s.push(gw.Event{Type: gw.EventFinish, StopReason: stop, Usage: &u})
	s.terminal = true
}

func (s *streamDecoder) chunkEvent(data []byte) {
	c := &s.chunk
	choices := c.Choices[:cap(c.Choices)]
	clear(choices)
	*c = inChunk{Choices: choices[:0]}
	if err := json.Unmarshal(data, c); err != nil {
		s.fail(upstreamErr(s.vendor+": malformed stream chunk", fmt.Errorf("decode chunk: %w", err)))
		return
	}
	if isJSONValue(c.Error) {
		s.fail(streamError(s.vendor, c.Error))
		return
	}
	if !s.started {
		s.started = true
		var h inChunkHead
		_ = json.Unmarshal(data, &h) // it decoded as a chunk just now
		s.push(gw.Event{Type: gw.EventStart, ID: h.ID, Model: h.Model})
	}
	if c.Usage != nil {
		if u, err := c.Usage.normalise(); err == nil {
			u.Malformed = u.Malformed || s.usage.Malformed
			s.usage = u
		}
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		if u, err := c.XGroq.Usage.normalise(); err == nil {
			u.Malformed = u.Malformed || s.usage.Malformed
			s.usage = u
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // the canonical request asks for one choice
		}
		s.delta(&ch.Delta)
		if s.terminal {
			return
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish(*ch.FinishReason)
			if s.terminal {
				return
			}
		}
	}
	if c.XGroq != nil && isJSONValue(c.XGroq.Error) {
		s.fail(streamError(s.vendor, c.XGroq.Error))
	}
}

func (s *streamDecoder) delta(d *inMessage) {
	if d.ReasoningContent != nil {
		s.appendText(blockThinking, *d.ReasoningContent)
	} else if d.Reasoning != nil {
		s.appendText(blockThinking, *d.Reasoning)
	}
	s.appendText(blockText, d.Content.Text)
	for _, p := range d.Content.Parts {
		switch p.Type {
		case "text":
			s.appendText(blockText, p.Text)
		case "thinking":
			for _, t := range p.Thinking {
				s.appendText(blockThinking, t.Text)
			}
		}
	}
	if d.Refusal != nil && *d.Refusal != "" {
		s.refused = true
		s.appendText(blockText, *d.Refusal)
	}
	for i := range d.ToolCalls {
		s.toolDelta(&d.ToolCalls[i])
		if s.terminal {
			return
		}
	}
}

// appendText adds a thinking or text fragment, opening its block.
func (s *streamDecoder) appendText(kind blockKind, text string) {
	if text == "" {
		return
	}
	if s.open != kind {
		s.closeOpen()
		s.open, s.openIndex = kind, s.next
		s.next++
		pt := gw.PartText
		if kind == blockThinking {
			pt = gw.PartThinking
		}
		s.push(gw.Event{Type: gw.EventBlockStart, Index: s.openIndex, Part: &gw.Part{Type: pt}})
	}
	s.push(gw.Event{Type: gw.EventDelta, Index: s.openIndex, Text: text})
}

// closeOpen closes the open block and emits any buffered tool calls.
func (s *streamDecoder) closeOpen() {
	switch s.open {
	case blockNone:
	case blockTool:
		if !s.live.sentArgs {
			s.push(gw.Event{Type: gw.EventDelta, Index: s.live.block, Text: "{}"})
		}
		s.push(gw.Event{Type: gw.EventBlockStop, Index: s.live.block})
		s.live.state = toolDone
		s.live = nil
	default:
		s.push(gw.Event{Type: gw.EventBlockStop, Index: s.openIndex})
	}
	s.open = blockNone
	for _, tc := range s.pending {
		tc.block = s.next
		s.next++
		s.push(gw.Event{Type: gw.EventBlockStart, Index: tc.block, Part: toolPart(tc)})
		args := string(bytes.TrimSpace(tc.args))
		if args == "" {
			args = "{}"
		}
		s.push(gw.Event{Type: gw.EventDelta, Index: tc.block, Text: args})
		s.push(gw.Event{Type: gw.EventBlockStop, Index: tc.block})
		tc.state, tc.args = toolDone, nil
	}
	s.pending = s.pending[:0]
}

func toolPart(tc *toolCall) *gw.Part {
	return &gw.Part{Type: gw.PartToolCall, ToolCallID: tc.id, ToolName: tc.name}
}

func (s *streamDecoder) findCall(tc *inToolCall) *toolCall {
	if tc.Index == nil {
		if tc.ID == "" && len(s.calls) > 0 {
			return s.calls[len(s.calls)-1]
		}
		return nil
	}
	for i := len(s.calls) - 1; i >= 0; i-- {
		c := s.calls[i]
		if c.cIndex == *tc.Index {
			if tc.ID != "" && c.id != "" && tc.ID != c.id {
				return nil // the index was reused for a new call
			}
			return c
		}
	}
	return nil
}

func (s *streamDecoder) toolDelta(tc *inToolCall) {
	s.sawTools = true
	call := s.findCall(tc)
	if call == nil {
		call = &toolCall{cIndex: -1 - len(s.calls), id: tc.ID, name: tc.Function.Name}
		if tc.Index != nil {
			call.cIndex = *tc.Index
		}
		if call.id == "" {
			call.id = "call_" + strconv.Itoa(len(s.calls))
		}
		s.calls = append(s.calls, call)
		if s.open == blockTool {
			call.state = toolPending
			s.pending = append(s.pending, call)
		} else {
			s.closeOpen()
			call.state, call.block = toolLive, s.next
			s.next++
			s.open, s.openIndex, s.live = blockTool, call.block, call
			s.push(gw.Event{Type: gw.EventBlockStart, Index: call.block, Part: toolPart(call)})
		}
	} else if call.name == "" && tc.Function.Name != "" && call.state == toolPending {
		call.name = tc.Function.Name
	}
	if tc.Function.Arguments == nil || *tc.Function.Arguments == "" {
		return
	}
	frag := *tc.Function.Arguments
	switch call.state {
	case toolLive:
		call.sentArgs = true
		s.push(gw.Event{Type: gw.EventDelta, Index: call.block, Text: frag})
	case toolPending:
		call.args = append(call.args, frag...)
	default:
		s.fail(upstreamErr(s.vendor+": tool call arguments arrived after the call ended", nil))
	}
}

func (s *streamDecoder) finish(reason string) {
	s.closeOpen()
	st := stopReason(reason, s.sawTools)
	if st == gw.StopError {
		s.fail(upstreamErr(s.vendor+": generation aborted (finish_reason "+reason+")", nil))
		return
	}
	if s.refused {
		st = gw.StopRefusal
	}
	s.finished, s.stop = true, st
}
