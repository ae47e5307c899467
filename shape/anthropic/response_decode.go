package anthropic

import (
	"encoding/json"

	"github.com/gwlabs/gateway"
)

// wireMessage is an M message object as Anthropic returns it.
type wireResponse struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Model        string      `json:"model"`
	Content      []wireBlock `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        *wireUsage  `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// DecodeResponse decodes Anthropic's non-streaming answer into the
// canonical response: text, thinking (with signature), redacted_thinking
// and tool_use blocks (input as a compact JSON object text), stop reason,
// stop sequence and usage. A malformed body, an error object, or a block
// the canonical types cannot hold is an *gw.Error (upstream_error;
// overloaded for an overloaded_error).
func DecodeResponse(body []byte) (*gw.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, upstreamErr("malformed response body", err)
	}
	if w.Type == "error" || w.Error != nil {
		code := gw.CodeUpstream
		msg := "error"
		if w.Error != nil {
			if w.Error.Type == "overloaded_error" {
				code = gw.CodeOverloaded
			}
			msg = w.Error.Message
		}
		return nil, &gw.Error{Code: code, Message: "anthropic: " + msg}
	}
	if w.Type != "message" {
		return nil, upstreamErr("response is not a message", nil)
	}
	r := &gw.Response{ID: w.ID, Model: w.Model, Content: make([]gw.Part, 0, len(w.Content))}
	for i := range w.Content {
		p, err := responsePart(&w.Content[i])
		if err != nil {
			return nil, err
		}
		r.Content = append(r.Content, p)
	}
	if w.StopReason != nil {
		r.StopReason = gw.StopReason(*w.StopReason)
	}
	if w.StopSequence != nil {
		r.StopSequence = *w.StopSequence
	}
	if w.Usage != nil {
		applyUsage(&r.Usage, w.Usage)
	}
	return r, nil
}

// responsePart is the canonical part for one M response block.
func responsePart(b *wireBlock) (gw.Part, error) {
	switch b.Type {
	case "text":
		p := gw.Part{Type: gw.PartText}
		if b.Text != nil {
			p.Text = *b.Text
		}
		return p, nil
	case "thinking":
		p := gw.Part{Type: gw.PartThinking, Signature: b.Signature}
		if b.Thinking != nil {
			p.Text = *b.Thinking
		}
		return p, nil
	case "redacted_thinking":
		return gw.Part{Type: gw.PartRedactedThinking, RedactedData: b.Data}, nil
	case "tool_use":
		in, ok := compactObject(b.Input)
		if !ok {
			return gw.Part{}, upstreamErr("tool_use input is not a JSON object", nil)
		}
		return gw.Part{Type: gw.PartToolCall, ToolCallID: b.ID, ToolName: b.Name, Arguments: in}, nil
	}
	return gw.Part{}, gw.Errorf(gw.CodeUpstream, "anthropic: unsupported content block type %q", b.Type)
}
