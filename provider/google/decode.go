package google

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/gemini"
)

// DecodeResponse maps a generateContent answer to a canonical response.
// It runs the same state machine as the stream decoder over the whole
// answer, so both give the same blocks. A body that is not a Gemini
// answer, an error body, and a candidate that ended on a broken function
// call (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
// TOO_MANY_TOOL_CALLS) are *gw.Error.
func DecodeResponse(body []byte) (*gw.Response, error) {
	var gr genResponse
	if err := json.Unmarshal(body, &gr); err != nil {
		return nil, malformed(err)
	}
	if gr.Error != nil {
		return nil, rpcError(gr.Error.Code, nil, gr.Error)
	}
	var a assembler
	a.record(&gr)
	a.end(false)
	var resp gw.Response
	if err := collect(a.events, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func malformed(err error) *gw.Error {
	return &gw.Error{Code: gw.CodeUpstream, Message: "google: malformed response", Err: fmt.Errorf("decode gemini response: %w", err)}
}

// collect folds an event sequence into a response.
func collect(events []gw.Event, resp *gw.Response) error {
	var text, sig strings.Builder
	var cur *gw.Part
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case gw.EventStart:
			resp.ID, resp.Model = ev.ID, ev.Model
		case gw.EventBlockStart:
			p := *ev.Part
			cur = &p
			text.Reset()
			sig.Reset()
		case gw.EventDelta:
			text.WriteString(ev.Text)
			sig.WriteString(ev.Signature)
		case gw.EventBlockStop:
			switch cur.Type {
			case gw.PartToolCall:
				cur.Arguments = json.RawMessage(text.String())
			case gw.PartText, gw.PartThinking:
				cur.Text = text.String()
				if cur.Type == gw.PartThinking {
					cur.Signature = sig.String()
				}
			}
			resp.Content = append(resp.Content, *cur)
			cur = nil
		case gw.EventFinish:
			resp.StopReason, resp.StopSequence = ev.StopReason, ev.StopSequence
			if ev.Usage != nil {
				resp.Usage = *ev.Usage
			}
		case gw.EventError:
			return ev.Err
		}
	}
	return nil
}

// blockKind is the kind of the open content block.
type blockKind int

const (
	blockNone blockKind = iota
	blockText
	blockThinking
)

// assembler turns Gemini records into canonical events: it is the state
// machine of the stream decoder, and DecodeResponse feeds it one record.
//
// Text parts accumulate in one text block and thought parts in one
// thinking block until a part of another kind arrives. A thinking block
// holds at most one Gemini signature, sent as a single signature delta
// (SignaturePrefix + signature) just before the block stops. A signature
// Gemini put on an ordinary text part becomes a thinking block of its own
// with empty text right after that text (the encoder puts it back on the
// text part). Each functionCall part is a tool block of its own:
// BlockStart, one Delta with the whole argument JSON, BlockStop.
type assembler struct {
	events []gw.Event

	started    bool
	next       int       // index of the next block
	open       blockKind // the open text or thinking block, if any
	openSig    string    // the open thinking block's Gemini signature
	openSigSet bool
	calls      int // function calls seen
	responseID string

	finish        string // last finishReason
	finishMessage string
	blocked       string // promptFeedback.blockReason of a refused prompt
	usage         gw.Usage
	grounding     int64 // Google Search queries that grounded the answer
	sawCandidate  bool
	ended         bool
}

// record consumes one GenerateContentResponse (error records excepted).
func (a *assembler) record(gr *genResponse) {
	if a.responseID == "" {
		a.responseID = gr.ResponseID
	}
	for i := range gr.Candidates {
		if g := gr.Candidates[i].GroundingMetadata; g != nil {
			// Each stream chunk repeats the queries so far: the largest
			// count is the answer's.
			a.grounding = max(a.grounding, int64(len(g.WebSearchQueries)), 1)
		}
	}
	if gr.UsageMetadata != nil {
		u := usageOf(gr.UsageMetadata)
		u.Malformed = u.Malformed || a.usage.Malformed
		a.usage = u
	}
	if a.grounding > 0 && a.usage.Reported {
		a.usage.Hosted.GroundingQueries = a.grounding
	}
	if !a.started {
		a.started = true
		ev := gw.Event{Type: gw.EventStart, Model: gr.ModelVersion, ID: gr.ResponseID}
		if gr.UsageMetadata != nil {
			u := gw.Usage{InputTokens: a.usage.InputTokens, CacheReadTokens: a.usage.CacheReadTokens, Reported: true}
			ev.Usage = &u
		}
		a.events = append(a.events, ev)
	}
	var c *candidate
	for i := range gr.Candidates {
		if gr.Candidates[i].Index == 0 {
			c = &gr.Candidates[i]
			break
		}
	}
	if c != nil {
		a.sawCandidate = true
	}
	if c == nil {
		if len(gr.Candidates) == 0 && gr.PromptFeedback != nil && gr.PromptFeedback.BlockReason != "" {
			a.closeOpen()
			a.blocked = gr.PromptFeedback.BlockReason
		}
		return
	}
	if c.Content != nil {
		for i := range c.Content.Parts {
			a.part(&c.Content.Parts[i])
		}
	}
	if c.FinishReason != "" {
		a.closeOpen()
		a.finish, a.finishMessage = c.FinishReason, c.FinishMessage
	}
}

func (a *assembler) part(p *inPart) {
	switch {
	case p.FunctionCall != nil:
		a.call(p)
	case p.InlineData != nil:
		a.closeOpen()
		a.whole(&gw.Part{Type: mediaKind(p.InlineData.MimeType), MediaType: p.InlineData.MimeType, Data: p.InlineData.Data})
		a.carrier(p.ThoughtSignature)
	case p.FileData != nil:
		a.closeOpen()
		a.whole(&gw.Part{Type: mediaKind(p.FileData.MimeType), MediaType: p.FileData.MimeType, URL: p.FileData.FileURI})
		a.carrier(p.ThoughtSignature)
	case p.Thought:
		if a.open != blockThinking || (a.openSigSet && p.ThoughtSignature != "") {
			a.closeOpen()
			a.openBlock(blockThinking, gw.PartThinking)
		}
		if p.Text != "" {
			a.events = append(a.events, gw.Event{Type: gw.EventDelta, Index: a.next - 1, Text: p.Text})
		}
		if p.ThoughtSignature != "" {
			a.openSig, a.openSigSet = p.ThoughtSignature, true
		}
	default:
		text := p.Text
		switch {
		case p.ExecutableCode != nil:
			text = "```" + strings.ToLower(p.ExecutableCode.Language) + "\n" + p.ExecutableCode.Code + "\n```\n"
		case p.CodeExecutionResult != nil:
			text = "```\n" + p.CodeExecutionResult.Output + "\n```\n"
		}
		if text != "" {
			if a.open != blockText {
				a.closeOpen()
				a.openBlock(blockText, gw.PartText)
			}
			a.events = append(a.events, gw.Event{Type: gw.EventDelta, Index: a.next - 1, Text: text})
		}
		if p.ThoughtSignature != "" {
			a.closeOpen()
			a.carrier(p.ThoughtSignature)
		}
	}
}

func mediaKind(mimeType string) gw.PartType {
	if strings.HasPrefix(mimeType, "image/") {
		return gw.PartImage
	}
	return gw.PartDocument
}

// call emits one function call as a whole tool block.
func (a *assembler) call(p *inPart) {
	a.closeOpen()
	fc := p.FunctionCall
	args := compactObject(fc.Args)
	core := callCore(fc.ID, a.responseID, a.calls, fc.Name, args, p.ThoughtSignature)
	a.calls++
	part := &gw.Part{Type: gw.PartToolCall, ToolCallID: ToolCallID(core, p.ThoughtSignature), ToolName: fc.Name}
	if p.ThoughtSignature != "" {
		part.Signature = SignaturePrefix + p.ThoughtSignature
	}
	idx := a.next
	a.next++
	a.events = append(a.events,
		gw.Event{Type: gw.EventBlockStart, Index: idx, Part: part},
		gw.Event{Type: gw.EventDelta, Index: idx, Text: string(args)},
		gw.Event{Type: gw.EventBlockStop, Index: idx},
	)
}

// compactObject returns the arguments as compact JSON object text, "{}"
// when absent or not an object.
func compactObject(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return []byte("{}")
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if json.Compact(&buf, raw) != nil {
		return []byte("{}")
	}
	return buf.Bytes()
}

// whole emits a block that arrives complete (an inline image).
func (a *assembler) whole(p *gw.Part) {
	idx := a.next
	a.next++
	a.events = append(a.events, gw.Event{Type: gw.EventBlockStart, Index: idx, Part: p}, gw.Event{Type: gw.EventBlockStop, Index: idx})
}

// carrier emits a signature-only thinking block for a signature Gemini put
// on a part that cannot hold one for the caller.
func (a *assembler) carrier(sig string) {
	if sig == "" {
		return
	}
	idx := a.next
	a.next++
	a.events = append(a.events,
		gw.Event{Type: gw.EventBlockStart, Index: idx, Part: &gw.Part{Type: gw.PartThinking}},
		gw.Event{Type: gw.EventDelta, Index: idx, Signature: SignaturePrefix + sig},
		gw.Event{Type: gw.EventBlockStop, Index: idx},
	)
}

func (a *assembler) openBlock(k blockKind, t gw.PartType) {
	a.open = k
	a.events = append(a.events, gw.Event{Type: gw.EventBlockStart, Index: a.next, Part: &gw.Part{Type: t}})
	a.next++
}

func (a *assembler) closeOpen() {
	if a.open == blockNone {
		return
	}
	idx := a.next - 1
	if a.open == blockThinking {
		a.events = append(a.events, gw.Event{Type: gw.EventDelta, Index: idx, Signature: SignaturePrefix + a.openSig})
	}
	a.events = append(a.events, gw.Event{Type: gw.EventBlockStop, Index: idx})
	a.open, a.openSig, a.openSigSet = blockNone, "", false
}

// end emits the final event: Finish, or Error for a broken function call
// or (stream) a stream that ended before any finishReason.
func (a *assembler) end(stream bool) {
	if a.ended {
		return
	}
	a.ended = true
	a.closeOpen()
	if !a.started {
		a.started = true
		a.events = append(a.events, gw.Event{Type: gw.EventStart})
	}
	u := a.usage
	if a.blocked != "" && a.finish == "" {
		a.events = append(a.events, gw.Event{Type: gw.EventFinish, StopReason: gw.StopRefusal, Usage: &u})
		return
	}
	if a.finish == "" && stream {
		a.fail(&gw.Error{Code: gw.CodeUpstream, Message: "google: the stream ended before the model finished"})
		return
	}
	if !a.sawCandidate {
		a.fail(&gw.Error{Code: gw.CodeUpstream, Message: "google: the answer has no candidate"})
		return
	}
	reason, err := stopReason(a.finish, a.finishMessage, a.calls > 0)
	if err != nil {
		a.fail(err)
		return
	}
	a.events = append(a.events, gw.Event{Type: gw.EventFinish, StopReason: reason, Usage: &u})
}

// fail emits an error event (closing nothing: the contract lets Error come
// at any point).
func (a *assembler) fail(err *gw.Error) {
	a.ended = true
	ev := gw.Event{Type: gw.EventError, Err: err}
	if a.usage.Reported {
		// The latest usageMetadata, so that a stream the caller left
		// (its read cancelled) is billed for what the vendor reported.
		u := a.usage
		ev.Usage = &u
	}
	a.events = append(a.events, ev)
}

// stopReason maps finishReason. A turn that called functions ends with
// STOP on Gemini: it is tool_use here. The function-call failures
// (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS) are
// reported as an upstream error rather than end_turn: the turn did not
// complete, its content is usually empty, and a retry often succeeds, so a
// silent "end_turn" with nothing in it would mislead the caller.
func stopReason(reason, message string, sawCall bool) (gw.StopReason, *gw.Error) {
	switch reason {
	case "MAX_TOKENS":
		return gw.StopMaxTokens, nil
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII":
		return gw.StopRefusal, nil
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		msg := "google: the model ended with " + reason
		if message != "" {
			msg += ": " + truncate(message, 300)
		}
		return "", &gw.Error{Code: gw.CodeUpstream, Message: msg}
	}
	if strings.HasPrefix(reason, "IMAGE_") {
		return gw.StopRefusal, nil
	}
	// STOP, OTHER, LANGUAGE, NO_IMAGE, FINISH_REASON_UNSPECIFIED and
	// values newer than this table.
	if sawCall {
		return gw.StopToolUse, nil
	}
	return gw.StopEndTurn, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// usageOf normalises usageMetadata into disjoint buckets:
// promptTokenCount includes cachedContentTokenCount, and
// candidatesTokenCount excludes thoughtsTokenCount, which is billed as
// output. A count that is not a non-negative integer (negative, a
// float, a string), or usageMetadata without a prompt or candidates
// count, makes the usage malformed: billed from the gateway's own count.
// Absent counts are 0 (Gemini leaves zeros out).
func usageOf(m *gemini.UsageMetadata) gw.Usage {
	// One reading of usageMetadata for the vendor side and for the G
	// endpoint's relay meter (package shape/gemini).
	return (*gemini.UsageMetadata)(m).Usage()
}
