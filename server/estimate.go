package server

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
)

// When a vendor reports no usage (an answer without it, or a stream the
// caller left before it came), the request is billed from what was
// relayed, by one rule on every route, stream or not:
//
//   - Output: one token per UTF-8 byte of the text relayed (answer text,
//     reasoning text, tool-call arguments as JSON text). This is an upper
//     bound: the vendors' byte-level BPE tokenizers never put less than
//     one byte in a token. It is never derived from the request body.
//   - Prompt: one token per four bytes of the request body, leaving out
//     the members that only say how to deliver the answer ("stream",
//     "stream_options"), so a stream and a non-stream copy of a request
//     are estimated alike.
//
// A charge so estimated is still capped at the request's hold, and the
// record's note says "usage_missing".

// textKeys are the members whose string values are relayed text in the
// C and M shapes, streamed (delta.content, text_delta.text,
// input_json_delta.partial_json...) or not (message.content, a text
// block's text...).
var textKeys = []string{"content", "reasoning_content", "reasoning", "refusal", "arguments", "text", "thinking", "partial_json"}

// relayedTextBytes returns the UTF-8 bytes of the text carried by one
// relayed JSON document (a stream event's data or a whole answer): every
// string value of a textKeys member, at any depth, plus the JSON text of
// an Anthropic tool_use block's "input" object. It never fails: what it
// cannot read counts as no text.
func relayedTextBytes(doc []byte) int64 {
	var n int64
	walkJSON(doc, func(key string, val []byte) {
		switch {
		case len(val) > 0 && val[0] == '"':
			for _, k := range textKeys {
				if k == key {
					n += unescapedLen(val)
					return
				}
			}
		case key == "input" && len(val) > 0 && val[0] == '{':
			n += int64(len(val))
		}
	})
	return n
}

// walkJSON calls fn for every object member of doc at any depth with the
// member's key and raw value.
func walkJSON(doc []byte, fn func(key string, val []byte)) {
	var walk func(v []byte, depth int)
	walk = func(v []byte, depth int) {
		if depth > 64 || len(v) == 0 {
			return
		}
		switch v[0] {
		case '{':
			ms, err := rawjson.Members(v)
			if err != nil {
				return
			}
			for _, m := range ms {
				val := v[m.ValStart:m.ValEnd]
				fn(m.Key, val)
				walk(val, depth+1)
			}
		case '[':
			for _, el := range arrayElems(v) {
				walk(el, depth+1)
			}
		}
	}
	walk(trimSpace(doc), 0)
}

// arrayElems splits a JSON array into its raw elements (nil on error).
func arrayElems(v []byte) [][]byte {
	var out [][]byte
	depth, start, inStr, esc := 0, -1, false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			if depth == 1 && start < 0 {
				start = i
			}
		case '[', '{':
			depth++
			if depth == 2 && start < 0 {
				start = i
			}
		case ']', '}':
			if depth == 1 {
				if start >= 0 {
					out = append(out, trimSpace(v[start:i]))
				}
				return out
			}
			depth--
		case ',':
			if depth == 1 && start >= 0 {
				out = append(out, trimSpace(v[start:i]))
				start = -1
			}
		case ' ', '\t', '\r', '\n':
		default:
			if depth == 1 && start < 0 {
				start = i
			}
		}
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// unescapedLen returns the UTF-8 length of the JSON string literal q
// (quotes included in q) once unescaped.
func unescapedLen(q []byte) int64 {
	if len(q) < 2 {
		return 0
	}
	s := q[1 : len(q)-1]
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			n++
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		if s[i] != 'u' || i+4 >= len(s) {
			n++ // \n, \", ... and anything malformed: one byte
			continue
		}
		r, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 32)
		if err != nil {
			n++
			continue
		}
		i += 4
		if utf16.IsSurrogate(rune(r)) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
			if r2, err := strconv.ParseUint(string(s[i+3:i+7]), 16, 32); err == nil {
				if pr := utf16.DecodeRune(rune(r), rune(r2)); pr != utf8.RuneError {
					n += int64(utf8.RuneLen(pr))
					i += 6
					continue
				}
			}
		}
		if l := utf8.RuneLen(rune(r)); l > 0 {
			n += int64(l)
		} else {
			n += 3 // a lone surrogate becomes U+FFFD
		}
	}
	return n
}

// promptEstimate is the prompt of a request whose vendor reported no
// usage: one token per four bytes of the body without its delivery
// members.
func promptEstimate(in *proxy.Inbound) int64 {
	n := int64(len(in.Body))
	if ms, err := rawjson.Members(in.Body); err == nil {
		for _, m := range ms {
			if m.Key == "stream" || m.Key == "stream_options" {
				n -= int64(m.ValEnd-m.KeyStart) + 1 // and its comma
			}
		}
	}
	return (max(n, 0) + 3) / 4
}

// estimateUsage is the usage billed when the vendor reported none: the
// prompt estimate and one output token per byte of text relayed.
func estimateUsage(in *proxy.Inbound, textBytes int64) gw.Usage {
	return gw.Usage{InputTokens: promptEstimate(in), OutputTokens: textBytes}
}
