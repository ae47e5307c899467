package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gwlabs/gateway"
)

// DecodeResponse decodes a C vendor's chat.completion body into the
// canonical response. Only the first choice is read (the canonical
// request never asks for more). Content order is thinking (from
// reasoning_content, reasoning, or Mistral's thinking chunks; no
// signature), then text, then tool calls. finish_reason maps by
// stopReason; a vendor-side abort (Mistral "error", DeepSeek
// "insufficient_system_resource", OpenRouter "error") or an error body is
// an *gw.Error with CodeUpstream (CodeOverloaded on an overload signal),
// as is a malformed body. d may be nil (plain OpenAI rules).
func DecodeResponse(body []byte, d *Dialect) (*gw.Response, error) {
	vendor := "upstream"
	if d != nil && d.Vendor != "" {
		vendor = d.Vendor
	}
	var w inResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, upstreamErr(vendor+": malformed response", fmt.Errorf("decode response: %w", err))
	}
	if isJSONValue(w.Error) {
		return nil, streamError(vendor, w.Error)
	}
	if len(w.Choices) == 0 {
		return nil, upstreamErr(vendor+": response has no choices", nil)
	}
	ch := &w.Choices[0]
	for i := range w.Choices {
		if w.Choices[i].Index == 0 {
			ch = &w.Choices[i]
			break
		}
	}
	resp := &gw.Response{ID: w.ID, Model: w.Model}
	msg := &ch.Message

	var thinking bytes.Buffer
	if msg.ReasoningContent != nil {
		thinking.WriteString(*msg.ReasoningContent)
	} else if msg.Reasoning != nil {
		thinking.WriteString(*msg.Reasoning)
	}
	var text bytes.Buffer
	text.WriteString(msg.Content.Text)
	for _, p := range msg.Content.Parts {
		switch p.Type {
		case "text":
			text.WriteString(p.Text)
		case "thinking":
			for _, t := range p.Thinking {
				thinking.WriteString(t.Text)
			}
		}
	}
	refused := false
	if text.Len() == 0 && msg.Refusal != nil && *msg.Refusal != "" {
		text.WriteString(*msg.Refusal)
		refused = true
	}
	if thinking.Len() > 0 {
		resp.Content = append(resp.Content, gw.Part{Type: gw.PartThinking, Text: thinking.String()})
	}
	if text.Len() > 0 {
		resp.Content = append(resp.Content, gw.Part{Type: gw.PartText, Text: text.String()})
	}
	for i, tc := range msg.ToolCalls {
		args := ""
		if tc.Function.Arguments != nil {
			args = *tc.Function.Arguments
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", w.ID, i)
		}
		resp.Content = append(resp.Content, gw.Part{
			Type: gw.PartToolCall, ToolCallID: id, ToolName: tc.Function.Name, Arguments: parseArgs(args),
		})
	}

	reason := ""
	if ch.FinishReason != nil {
		reason = *ch.FinishReason
	}
	stop := stopReason(reason, len(msg.ToolCalls) > 0)
	if refused {
		stop = gw.StopRefusal
	}
	if stop == gw.StopError {
		return nil, upstreamErr(vendor+": generation aborted (finish_reason "+reason+")", nil)
	}
	resp.StopReason = stop

	if u := (&usageBody{Usage: w.Usage, XGroq: w.XGroq}).pick(); u != nil {
		usage, err := u.normalise()
		if err != nil {
			return nil, upstreamErr(vendor+": malformed usage", err)
		}
		resp.Usage = usage
	}
	return resp, nil
}

// stopReason maps a C finish_reason (every vendor's variant) to the
// canonical stop reason. A "stop" (or missing) reason on a turn that made
// tool calls is tool_use: some vendors report stop there, and a caller's
// tool loop depends on it.
func stopReason(reason string, toolCalls bool) gw.StopReason {
	switch reason {
	case "length", "model_length":
		return gw.StopMaxTokens
	case "tool_calls", "function_call":
		return gw.StopToolUse
	case "content_filter":
		return gw.StopRefusal
	case "error", "insufficient_system_resource":
		return gw.StopError
	}
	// stop, eos, "" and unknown reasons.
	if toolCalls {
		return gw.StopToolUse
	}
	return gw.StopEndTurn
}

// parseArgs turns a tool call's argument text into canonical arguments: a
// JSON object text, compacted. Empty arguments are "{}". Text that is not
// a JSON object (a model that emitted broken JSON, or a call cut by
// max_tokens) is kept, not lost, as {"_raw": "<the text>"}; the caller's
// next turn then carries it back to the model verbatim in that wrapper.
func parseArgs(s string) json.RawMessage {
	t := bytes.TrimSpace([]byte(s))
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	if t[0] == '{' && json.Valid(t) {
		var buf bytes.Buffer
		if json.Compact(&buf, t) == nil {
			return buf.Bytes()
		}
	}
	b, _ := jsonMarshal(struct {
		Raw string `json:"_raw"`
	}{s})
	return b
}
