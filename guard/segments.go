package guard

import (
	"bytes"
	"encoding/json"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// Segments extracts every piece of text a request body carries, in order,
// with its source.
//
// Shape M (Messages): the system string or text blocks; each message's
// string content or blocks: text, tool_result content (string or
// blocks), document blocks with a text source or nested content (plus
// their title and context), search results, and tool_use input (as
// assistant text). Thinking blocks are the model's own and are skipped,
// as are images and binary documents, which carry no text.
//
// Shape C (Chat Completions): system and developer messages as system
// text; user, assistant, tool and function messages with string or
// part-array content (text and refusal parts), and assistant tool-call
// arguments.
//
// Invalid JSON, or a field of the wrong type, is an error.
func Segments(shape gw.Shape, body []byte) ([]Segment, error) {
	switch shape {
	case gw.ShapeM:
		return segmentsM(body)
	case gw.ShapeC:
		return segmentsC(body)
	}
	return nil, fmt.Errorf("unsupported shape %q", shape)
}

type mRequest struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type mBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"` // tool_result, search_result
	Input   json.RawMessage `json:"input"`   // tool_use
	Title   string          `json:"title"`
	Context string          `json:"context"`
	Source  json.RawMessage `json:"source"` // document: an object; search_result: a URL string
}

type mDocSource struct {
	Type    string          `json:"type"`
	Data    string          `json:"data"`
	Content json.RawMessage `json:"content"`
}

func segmentsM(body []byte) ([]Segment, error) {
	var req mRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode messages request: %w", err)
	}
	var segs []Segment
	var err error
	if segs, err = appendMContent(segs, req.System, SourceSystem); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	for i, m := range req.Messages {
		src := SourceUser
		switch m.Role {
		case "assistant":
			src = SourceAssistant
		case "system": // not part of the API, but never let it pass unseen
			src = SourceSystem
		}
		if segs, err = appendMContent(segs, m.Content, src); err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
	}
	return segs, nil
}

// appendMContent handles content that is a string or an array of blocks.
func appendMContent(segs []Segment, raw json.RawMessage, src Source) ([]Segment, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return segs, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return appendText(segs, src, s), nil
	}
	var blocks []mBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	var err error
	for _, b := range blocks {
		switch b.Type {
		case "thinking", "redacted_thinking", "image":
			// The model's own reasoning, or no text.
		case "tool_result", "search_result":
			segs = appendText(segs, SourceTool, b.Title)
			if segs, err = appendMContent(segs, b.Content, SourceTool); err != nil {
				return nil, fmt.Errorf("%s content: %w", b.Type, err)
			}
		case "document":
			segs = appendText(segs, SourceTool, b.Title)
			segs = appendText(segs, SourceTool, b.Context)
			if src := bytes.TrimSpace(b.Source); len(src) > 0 && src[0] == '{' {
				var ds mDocSource
				if err := json.Unmarshal(src, &ds); err != nil {
					return nil, fmt.Errorf("document source: %w", err)
				}
				switch ds.Type {
				case "text":
					segs = appendText(segs, SourceTool, ds.Data)
				case "content":
					if segs, err = appendMContent(segs, ds.Content, SourceTool); err != nil {
						return nil, fmt.Errorf("document content: %w", err)
					}
				}
			}
		case "tool_use", "server_tool_use":
			if len(b.Input) > 0 {
				segs = appendText(segs, SourceAssistant, string(b.Input))
			}
		default: // "text" and any future block carrying text
			segs = appendText(segs, src, b.Text)
		}
	}
	return segs, nil
}

type cRequest struct {
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Refusal   string          `json:"refusal"`
		ToolCalls []struct {
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		FunctionCall *struct {
			Arguments string `json:"arguments"`
		} `json:"function_call"`
	} `json:"messages"`
}

type cPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

func segmentsC(body []byte) ([]Segment, error) {
	var req cRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decode chat request: %w", err)
	}
	var segs []Segment
	for i, m := range req.Messages {
		src := SourceUser
		switch m.Role {
		case "system", "developer":
			src = SourceSystem
		case "assistant":
			src = SourceAssistant
		case "tool", "function":
			src = SourceTool
		}
		raw := bytes.TrimSpace(m.Content)
		switch {
		case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			segs = appendText(segs, src, s)
		case raw[0] == '[':
			var parts []cPart
			if err := json.Unmarshal(raw, &parts); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			for _, p := range parts {
				segs = appendText(segs, src, p.Text)
				segs = appendText(segs, src, p.Refusal)
			}
		default:
			return nil, fmt.Errorf("messages[%d].content: not a string or an array", i)
		}
		segs = appendText(segs, src, m.Refusal)
		for _, tc := range m.ToolCalls {
			segs = appendText(segs, SourceAssistant, tc.Function.Arguments)
		}
		if m.FunctionCall != nil {
			segs = appendText(segs, SourceAssistant, m.FunctionCall.Arguments)
		}
	}
	return segs, nil
}

func appendText(segs []Segment, src Source, s string) []Segment {
	if s == "" {
		return segs
	}
	return append(segs, Segment{Source: src, Text: s})
}
