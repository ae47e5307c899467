package openai

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gwlabs/gateway/internal/jsonenc"
	"github.com/gwlabs/gateway/internal/rawjson"
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
//     an id continues the last call. A non-stream answer's entries come
//     without "type" too (openai-node's runTools skips a call whose type
//     is not "function"): each gets "type":"function".
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
	if d.StreamToolCallIndex && bytes.Contains(body, []byte(`"tool_calls"`)) {
		body = fixToolCallType(body)
	}
	return body
}

// fixToolCallType gives "type":"function" to the tool_calls entries of a
// non-stream answer's messages that lack a type, right after each
// entry's '{'.
func fixToolCallType(body []byte) []byte {
	var edits []rawjson.Edit
	for _, arr := range choiceValues(body, "tool_calls") {
		els, err := rawjson.Elements(body[arr.Start:arr.End])
		if err != nil {
			return body
		}
		for _, el := range els {
			start := arr.Start + el.Start
			if body[start] != '{' {
				continue
			}
			ms, err := rawjson.Members(body[start : arr.Start+el.End])
			if err != nil {
				return body
			}
			if slices.ContainsFunc(ms, func(m rawjson.Member) bool { return m.Key == "type" }) {
				continue
			}
			ins := `"type":"function",`
			if len(ms) == 0 {
				ins = `"type":"function"`
			}
			edits = append(edits, rawjson.Edit{Start: start + 1, End: start + 1, Text: []byte(ins)})
		}
	}
	if len(edits) == 0 {
		return body
	}
	return rawjson.Splice(body, edits...)
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
// that lack them, inserting them right after each entry's '{'.
func (n *StreamNormalizer) fixToolCalls(data []byte) []byte {
	var edits []rawjson.Edit
	for _, arr := range choiceValues(data, "tool_calls") {
		els, err := rawjson.Elements(data[arr.Start:arr.End])
		if err != nil {
			return data
		}
		for _, el := range els {
			start := arr.Start + el.Start
			ms, err := rawjson.Members(data[start : arr.Start+el.End])
			if err != nil {
				return data
			}
			var hasID, hasType bool
			var index []byte
			for _, m := range ms {
				switch m.Key {
				case "id":
					hasID = true
				case "type":
					hasType = true
				case "index":
					index = data[start+m.ValStart : start+m.ValEnd]
				}
			}
			var ins string
			if index == nil {
				i := n.calls - 1
				if hasID || i < 0 {
					i = n.calls
				}
				ins += `"index":` + strconv.Itoa(i) + `,`
			}
			if !hasType && hasID {
				ins += `"type":"function",`
			}
			if hasID {
				n.calls++
			} else if i, err := strconv.Atoi(string(index)); err == nil && i+1 > n.calls {
				n.calls = i + 1
			}
			if ins != "" {
				if len(ms) == 0 {
					ins = strings.TrimSuffix(ins, ",") // an empty entry: no member follows
				}
				edits = append(edits, rawjson.Edit{Start: start + 1, End: start + 1, Text: []byte(ins)})
			}
		}
	}
	if len(edits) == 0 {
		return data
	}
	return rawjson.Splice(data, edits...)
}

// choiceValues returns the spans in data of the values of the members
// named key of each choice's "message" or "delta" object (choices[i].
// message.key, choices[i].delta.key), in order. Data that is not such an
// object yields none.
func choiceValues(data []byte, key string) []rawjson.Span {
	top, err := rawjson.Members(data)
	if err != nil {
		return nil
	}
	var out []rawjson.Span
	for _, m := range top {
		if m.Key != "choices" {
			continue
		}
		els, err := rawjson.Elements(data[m.ValStart:m.ValEnd])
		if err != nil {
			return nil
		}
		for _, el := range els {
			choice := m.ValStart + el.Start
			cms, err := rawjson.Members(data[choice : m.ValStart+el.End])
			if err != nil {
				continue
			}
			for _, cm := range cms {
				if cm.Key != "message" && cm.Key != "delta" {
					continue
				}
				obj := choice + cm.ValStart
				oms, err := rawjson.Members(data[obj : choice+cm.ValEnd])
				if err != nil {
					continue
				}
				for _, om := range oms {
					if om.Key == key {
						out = append(out, rawjson.Span{Start: obj + om.ValStart, End: obj + om.ValEnd})
					}
				}
			}
		}
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
	out := make([]byte, 0, len(data))
	last := 0
	for _, v := range choiceValues(data, "content") {
		if data[v.Start] != '[' {
			continue
		}
		sp := [2]int{v.Start, v.End}
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
		out = jsonenc.AppendString(out, text.String())
		if thinking.Len() > 0 {
			out = append(out, `,"reasoning_content":`...)
			out = jsonenc.AppendString(out, thinking.String())
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
