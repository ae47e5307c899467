package anthropic

import (
	"encoding/json"

	"github.com/gwlabs/gateway"
)

// ResponseMeta is what the server knows about a mapped response that the
// vendor's answer does not say: ID is the gateway request id (req_...),
// Model the vendor model id without its prefix, Created the Unix time.
type ResponseMeta struct {
	ID      string
	Model   string
	Created int64
}

// messageOut is an M message object, in the field order Anthropic uses.
type messageOut struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Role         string       `json:"role"`
	Model        string       `json:"model"`
	Content      []any        `json:"content"`
	StopReason   *string      `json:"stop_reason"`
	StopSequence *string      `json:"stop_sequence"`
	Usage        encodedUsage `json:"usage"`
}

// EncodeResponse encodes a canonical response as the M message the caller
// gets: id meta.ID, model meta.Model, content blocks (text, thinking with
// its signature, "" when none, redacted_thinking, tool_use with the
// parsed arguments as input), stop_reason, stop_sequence (null unless
// set) and usage. Tool arguments that are not a JSON object, content the
// M shape cannot carry, and StopError are *gw.Error upstream_error.
func EncodeResponse(r *gw.Response, meta ResponseMeta) ([]byte, error) {
	msg := messageOut{
		ID:      meta.ID,
		Type:    "message",
		Role:    "assistant",
		Model:   meta.Model,
		Content: make([]any, 0, len(r.Content)),
		Usage:   toEncodedUsage(r.Usage),
	}
	for i := range r.Content {
		b, err := responseBlock(&r.Content[i])
		if err != nil {
			return nil, err
		}
		msg.Content = append(msg.Content, b)
	}
	if r.StopReason == gw.StopError {
		return nil, &gw.Error{Code: gw.CodeUpstream, Message: "the vendor ended the response with an error"}
	}
	stop := string(r.StopReason)
	if stop == "" {
		stop = string(gw.StopEndTurn)
	}
	msg.StopReason = &stop
	if r.StopSequence != "" {
		msg.StopSequence = &r.StopSequence
	}
	out, err := marshal(&msg)
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: err}
	}
	return out, nil
}

// responseBlock is the M content block for one canonical response part.
func responseBlock(p *gw.Part) (any, error) {
	switch p.Type {
	case gw.PartText:
		return textOut{Type: "text", Text: p.Text}, nil
	case gw.PartThinking:
		return thinkingOut{Type: "thinking", Thinking: p.Text, Signature: p.Signature}, nil
	case gw.PartRedactedThinking:
		return redactedOut{Type: "redacted_thinking", Data: p.RedactedData}, nil
	case gw.PartToolCall:
		input, err := toolInput(p)
		if err != nil {
			return nil, &gw.Error{Code: gw.CodeUpstream, Message: err.Error()}
		}
		return toolUseOut{Type: "tool_use", ID: p.ToolCallID, Name: p.ToolName, Input: input}, nil
	}
	return nil, gw.Errorf(gw.CodeUpstream, "the vendor returned a %s part, which a Messages response cannot carry", p.Type)
}

// toolInput returns a tool call's arguments as a compact JSON object
// ("{}" when empty), or an error naming the call.
func toolInput(p *gw.Part) (json.RawMessage, error) {
	in, ok := compactObject(p.Arguments)
	if !ok {
		return nil, gw.Errorf(gw.CodeUpstream, "tool call %q (%s): arguments are not a JSON object", p.ToolCallID, p.ToolName)
	}
	return in, nil
}
