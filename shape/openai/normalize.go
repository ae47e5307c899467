package openai

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Native C routes relay the vendor's bytes unchanged, except for the few
// deviations from OpenAI's format that break the official SDKs' helpers
// (openai-node's chat.completions.stream() and runTools, openai-go's
// ChatCompletionAccumulator). Only the deviating members are rewritten;
// every other byte of the body or chunk is kept. The deviations, per
// dialect:
//
//   - FinishReasons: Together's finish_reason "eos" is "stop"; Mistral's
//     "model_length" is "length" (the SDKs' parse helpers raise their
//     length error on "length" only).
//   - StreamToolCallIndex (Mistral): streamed tool_calls entries come
//     without "index" and "type"; each entry with an id is a new call,
//     given the next index and "type":"function", and an entry without
//     an id continues the last call.
//   - ArrayContent (Mistral's reasoning models): message.content and
//     delta.content come as a list of chunks, {"type":"text","text"} and
//     {"type":"thinking","thinking":[{"type":"text","text"}]}; the SDKs
//     concatenate content as a string. The list becomes the string of
//     its text chunks, and the thinking text moves to a
//     "reasoning_content" member beside it (the field DeepSeek and the
//     gateway's mapped answers use), so nothing is lost.
//
// Other vendor extras (reasoning fields, x_groq, usage variants) are
// additions the SDKs ignore or keep, and stay as sent.

// finishReasonRE matches a finish_reason member with a string value. In
// valid JSON an unescaped quote starts or ends a string, so this can only
// match a real member, never text inside a string.
var finishReasonRE = regexp.MustCompile(`"finish_reason"\s*:\s*"([^"\\]*)"`)

// needsNormalizing reports whether d has any deviation to fix.
func (d *Dialect) needsNormalizing() bool {
	return len(d.FinishReasons) > 0 || d.StreamToolCallIndex || d.ArrayContent
}

// NormalizeBody returns a non-stream answer with the dialect's
// SDK-breaking deviations fixed; body itself when there is nothing to fix.
func (d *Dialect) NormalizeBody(body []byte) []byte {
	body = d.fixFinishReasons(body)
	if d.ArrayContent {
		body = fixArrayContent(body)
	}
	return body
}

func (d *Dialect) fixFinishReasons(b []byte) []byte {
	if len(d.FinishReasons) == 0 || !bytes.Contains(b, []byte(`"finish_reason"`)) {
		return b
	}
	// Most chunks carry none of the deviating values: skip the regexp.
	found := false
	for from := range d.FinishReasons {
		if bytes.Contains(b, []byte(from)) {
			found = true
			break
		}
	}
	if !found {
		return b
	}
	locs := finishReasonRE.FindAllSubmatchIndex(b, -1)
	var out []byte
	last := 0
	for _, l := range locs {
		to, ok := d.FinishReasons[string(b[l[2]:l[3]])]
		if !ok {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+8)
		}
		out = append(out, b[last:l[2]]...)
		out = append(out, to...)
		last = l[3]
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// StreamNormalizer fixes one relayed stream's chunks. It keeps the state
// a fix needs across chunks (the next tool call index).
type StreamNormalizer struct {
	d     *Dialect
	calls int // tool calls seen so far (Mistral)
}

// NewStreamNormalizer returns a normalizer for one stream, or nil when the
// dialect's streams need none.
func (d *Dialect) NewStreamNormalizer() *StreamNormalizer {
	if !d.needsNormalizing() {
		return nil
	}
	return &StreamNormalizer{d: d}
}

// Chunk returns the data of one stream event with the deviations fixed;
// data itself when there is nothing to fix. A chunk it cannot read is
// returned unchanged (the meter reports malformed chunks).
func (n *StreamNormalizer) Chunk(data []byte) []byte {
	data = n.d.fixFinishReasons(data)
	if n.d.ArrayContent {
		data = fixArrayContent(data)
	}
	if n.d.StreamToolCallIndex && bytes.Contains(data, []byte(`"tool_calls"`)) {
		data = n.fixToolCalls(data)
	}
	return data
}

// fixToolCalls gives index and type to the tool_calls entries of a chunk
// that lack them.
func (n *StreamNormalizer) fixToolCalls(data []byte) []byte {
	var c struct {
		Choices []struct {
			Delta struct {
				ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return data
	}
	// The inserts, in the order the entries appear in the chunk.
	var inserts []string
	missing := false
	for _, ch := range c.Choices {
		for _, tc := range ch.Delta.ToolCalls {
			var ins string
			_, hasID := tc["id"]
			if _, ok := tc["index"]; !ok {
				missing = true
				i := n.calls - 1
				if hasID || i < 0 {
					i = n.calls
				}
				ins += `"index":` + strconv.Itoa(i) + `,`
			}
			if _, ok := tc["type"]; !ok && hasID {
				missing = true
				ins += `"type":"function",`
			}
			if hasID {
				n.calls++
			} else if idx, ok := tc["index"]; ok {
				if i, err := strconv.Atoi(string(idx)); err == nil && i+1 > n.calls {
					n.calls = i + 1
				}
			}
			inserts = append(inserts, ins)
		}
	}
	if !missing {
		return data
	}
	pos := toolCallEntryStarts(data)
	if len(pos) != len(inserts) {
		return data
	}
	out := make([]byte, 0, len(data)+32*len(inserts))
	last := 0
	for k, p := range pos {
		out = append(out, data[last:p+1]...) // through the entry's '{'
		out = append(out, inserts[k]...)
		last = p + 1
	}
	return append(out, data[last:]...)
}

// toolCallEntryStarts returns the offsets of the '{' opening each entry of
// every "tool_calls" array in data, in order.
func toolCallEntryStarts(data []byte) []int {
	var out []int
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(inToolCalls bool) bool
	// walk consumes one value; it records entry starts of tool_calls
	// arrays.
	walk = func(inToolCalls bool) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				if !walk(k == "tool_calls") {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if inToolCalls {
					off := int(dec.InputOffset())
					for off < len(data) && data[off] != '{' {
						off++
					}
					out = append(out, off)
				}
				if !walk(false) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	if !walk(false) {
		return nil
	}
	return out
}

// fixArrayContent turns each list-valued "content" of a choice's message
// or delta into a string, moving thinking text to reasoning_content.
func fixArrayContent(data []byte) []byte {
	// Most chunks carry string content: decode only those with a list.
	if !hasArrayContent(data) {
		return data
	}
	spans := arrayContentSpans(data)
	if len(spans) == 0 {
		return data
	}
	out := make([]byte, 0, len(data))
	last := 0
	for _, sp := range spans {
		var chunks []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"thinking"`
		}
		if json.Unmarshal(data[sp[0]:sp[1]], &chunks) != nil {
			continue
		}
		var text, thinking strings.Builder
		for _, c := range chunks {
			switch c.Type {
			case "text":
				text.WriteString(c.Text)
			case "thinking":
				for _, t := range c.Thinking {
					thinking.WriteString(t.Text)
				}
			}
		}
		out = append(out, data[last:sp[0]]...)
		out = appendJSONString(out, text.String())
		if thinking.Len() > 0 {
			out = append(out, `,"reasoning_content":`...)
			out = appendJSONString(out, thinking.String())
		}
		last = sp[1]
	}
	return append(out, data[last:]...)
}

// hasArrayContent reports whether data has a "content" member whose value
// is a list.
func hasArrayContent(data []byte) bool {
	key := []byte(`"content"`)
	for i := bytes.Index(data, key); i >= 0; {
		j := i + len(key)
		for j < len(data) && (data[j] == ' ' || data[j] == ':' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
			j++
		}
		if j < len(data) && data[j] == '[' {
			return true
		}
		k := bytes.Index(data[j:], key)
		if k < 0 {
			return false
		}
		i = j + k
	}
	return false
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// arrayContentSpans returns the byte spans of the list values of
// "content" members of objects under a "message" or "delta" key.
func arrayContentSpans(data []byte) [][2]int {
	var out [][2]int
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(parent string) bool
	walk = func(parent string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := k.(string)
				if key == "content" && (parent == "message" || parent == "delta") {
					start := int(dec.InputOffset())
					for start < len(data) && (data[start] == ':' || data[start] == ' ' || data[start] == '\t' || data[start] == '\n' || data[start] == '\r') {
						start++
					}
					var raw json.RawMessage
					if dec.Decode(&raw) != nil {
						return false
					}
					if len(raw) > 0 && raw[0] == '[' {
						out = append(out, [2]int{start, int(dec.InputOffset())})
					}
					continue
				}
				if !walk(key) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !walk(parent) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	if !walk("") {
		return nil
	}
	return out
}
