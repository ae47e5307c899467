package anthropic

import (
	"bytes"
	"encoding/json"
)

// wireBlock is any M content block as decoded: one struct covers every
// variant, discriminated by Type; fields of other variants stay zero.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	Source       *wireSource     `json:"source"`
	Title        string          `json:"title"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     *string         `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// wireSource is an image or document source.
type wireSource struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type"`
	Data      string          `json:"data"`
	URL       string          `json:"url"`
	Content   json.RawMessage `json:"content"`
}

// Outgoing content blocks, one type per variant so that required-but-empty
// fields ("thinking":"", "signature":"") are always written.
type (
	textOut struct {
		Type         string          `json:"type"`
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control,omitempty"`
	}
	thinkingOut struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	redactedOut struct {
		Type string `json:"type"`
		Data string `json:"data"`
	}
	toolUseOut struct {
		Type         string          `json:"type"`
		ID           string          `json:"id"`
		Name         string          `json:"name"`
		Input        json.RawMessage `json:"input"`
		CacheControl json.RawMessage `json:"cache_control,omitempty"`
	}
	sourceOut struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type,omitempty"`
		Data      string `json:"data,omitempty"`
		URL       string `json:"url,omitempty"`
	}
	mediaOut struct {
		Type         string          `json:"type"`
		Source       sourceOut       `json:"source"`
		Title        string          `json:"title,omitempty"`
		CacheControl json.RawMessage `json:"cache_control,omitempty"`
	}
	toolResultOut struct {
		Type         string          `json:"type"`
		ToolUseID    string          `json:"tool_use_id"`
		Content      any             `json:"content,omitempty"`
		IsError      bool            `json:"is_error,omitempty"`
		CacheControl json.RawMessage `json:"cache_control,omitempty"`
	}
)

// marshal encodes v as compact JSON without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// firstByte returns the first non-space byte of raw, or 0.
func firstByte(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// compactObject returns raw as a compact JSON object text, "{}" when raw
// is empty or null, and ok false when raw is not a JSON object.
func compactObject(raw []byte) (json.RawMessage, bool) {
	switch firstByte(raw) {
	case 0:
		return json.RawMessage("{}"), true
	case 'n':
		if string(bytes.TrimSpace(raw)) == "null" {
			return json.RawMessage("{}"), true
		}
		return nil, false
	case '{':
	default:
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}
