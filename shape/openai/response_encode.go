package openai

import (
	"fmt"
	"strings"

	"github.com/gwlabs/gateway"
)

// ResponseMeta carries what a mapped response reports about itself: the
// gateway's id ("chatcmpl_" + the request id's random part), the vendor
// model id without prefix, and the creation time (Unix seconds).
type ResponseMeta struct {
	ID      string
	Model   string
	Created int64
}

// clientResponse is the chat.completion body written to C clients.
type clientResponse struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []clientChoice `json:"choices"`
	Usage   *clientUsage   `json:"usage"`
}

type clientChoice struct {
	Index        int           `json:"index"`
	Message      clientMessage `json:"message"`
	Logprobs     *struct{}     `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type clientMessage struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	Refusal          *string       `json:"refusal"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
}

// finishReason maps a canonical stop reason to C's finish_reason.
func finishReason(s gw.StopReason) string {
	switch s {
	case gw.StopMaxTokens, gw.StopContextLimit:
		return "length"
	case gw.StopToolUse:
		return "tool_calls"
	case gw.StopRefusal:
		return "content_filter"
	}
	// end_turn, stop_sequence, pause_turn (no C equivalent), and "".
	return "stop"
}

// EncodeResponse renders a canonical response as a chat.completion body
// for a C client (the vendor protocol notes, section 7): text parts
// concatenated into content (null when there are none), tool calls with
// arguments as compact JSON text, thinking concatenated into
// reasoning_content (signatures and redacted thinking are dropped: C has
// no field for them), finish_reason from the stop reason, and usage with
// prompt_tokens counting every prompt bucket.
func EncodeResponse(r *gw.Response, meta ResponseMeta) ([]byte, error) {
	msg := clientMessage{Role: "assistant"}
	var text, thinking strings.Builder
	hasText := false
	for i, p := range r.Content {
		switch p.Type {
		case gw.PartText:
			text.WriteString(p.Text)
			hasText = true
		case gw.PartThinking:
			thinking.WriteString(p.Text)
		case gw.PartRedactedThinking:
		case gw.PartToolCall:
			args, err := compactArgs(p.Arguments)
			if err != nil {
				return nil, fmt.Errorf("encode response: content[%d]: %w", i, err)
			}
			msg.ToolCalls = append(msg.ToolCalls, outToolCall{ID: p.ToolCallID, Type: "function",
				Function: outFunctionCall{Name: p.ToolName, Arguments: args}})
		default:
			return nil, fmt.Errorf("encode response: content[%d]: unexpected %s part", i, p.Type)
		}
	}
	if hasText {
		s := text.String()
		msg.Content = &s
	}
	msg.ReasoningContent = thinking.String()
	resp := clientResponse{
		ID: meta.ID, Object: "chat.completion", Created: meta.Created, Model: meta.Model,
		Choices: []clientChoice{{Index: 0, Message: msg, FinishReason: finishReason(r.StopReason)}},
		Usage:   encodeUsage(r.Usage),
	}
	b, err := jsonMarshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode response: %w", err)
	}
	return b, nil
}
