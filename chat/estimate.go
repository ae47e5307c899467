package chat

import (
	"encoding/json"
	"strconv"
	"strings"
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

// relayedTextBytes returns the UTF-8 bytes of the text carried by one
// relayed JSON document (a stream event's data or a whole answer): every
// string value of a text member (isTextKey), at any depth, plus the JSON text of
// an Anthropic tool_use block's "input" object. It is a single pass over
// the bytes that allocates nothing (it runs on every relayed event), and
// never fails: what it cannot read counts as no text.
func relayedTextBytes(doc []byte) int64 {
	var n int64
	var key []byte // the member name the next value belongs to
	for i := 0; i < len(doc); {
		switch doc[i] {
		case '"':
			end := stringEnd(doc, i)
			if end < 0 {
				return n
			}
			j := skipSpace(doc, end)
			if j < len(doc) && doc[j] == ':' {
				key = doc[i+1 : end-1]
				i = j + 1
				if string(key) == "input" {
					if v := skipSpace(doc, i); v < len(doc) && doc[v] == '{' {
						if e := objectEnd(doc, v); e > 0 {
							n += int64(e - v)
							i, key = e, nil
						}
					}
				}
				continue
			}
			if isTextKey(key) {
				n += unescapedLen(doc[i:end])
			}
			key, i = nil, end
		case ',', '{', '[', '}', ']':
			key = nil
			i++
		default:
			i++
		}
	}
	return n
}

func isTextKey(k []byte) bool {
	switch string(k) {
	case "content", "reasoning_content", "reasoning", "refusal", "arguments", "text", "thinking", "partial_json":
		return true
	}
	return false
}

// stringEnd returns the index just past the JSON string starting at
// doc[i] (a quote), or -1 when it does not end.
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// objectEnd returns the index just past the object or array starting at
// doc[i], or -1.
func objectEnd(doc []byte, i int) int {
	depth := 0
	for j := i; j < len(doc); j++ {
		switch doc[j] {
		case '"':
			e := stringEnd(doc, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
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
// members (Inbound.BodyTokens once the body was let go, see letGo).
func promptEstimate(in *proxy.Inbound) int64 {
	if in.Body == nil {
		return in.BodyTokens
	}
	n := int64(len(in.Body))
	ms, err := in.Members, error(nil)
	if ms == nil {
		// Begin read them once; a request refused before it did reads
		// them here.
		ms, err = rawjson.Members(in.Body)
	}
	if err == nil {
		n -= deliveryBytes(ms)
	}
	return (max(n, 0) + 3) / 4
}

// estimateUsage is the usage billed when the vendor reported none: the
// prompt estimate and one output token per byte of text relayed.
func estimateUsage(in *proxy.Inbound, textBytes int64) gw.Usage {
	return gw.Usage{InputTokens: promptEstimate(in), OutputTokens: textBytes}
}

// usable reports whether u is the vendor's readable word on the
// request's usage: reported, and never malformed (a count that was not a
// non-negative integer, an object without counts). Otherwise the request
// is billed from the gateway's own count, the same way on every route.
func usable(u gw.Usage) bool { return u.Reported && !u.Malformed }

// unusableNote is the record's note for usage the gateway estimated.
func unusableNote(u gw.Usage) string {
	if u.Malformed {
		return "usage_malformed"
	}
	return "usage_missing"
}

// responsesText counts the text of a relayed Responses stream once. The
// stream carries each piece of text up to four times (its *.delta events,
// the *.done event of its part, the output_item.done event of its item
// and the terminal response object), so only the deltas are counted, and
// the terminal response's text when it holds more (a vendor that sends
// whole parts without deltas).
type responsesText struct {
	deltas, final int64
}

// observe counts one event's data; typ is its "event:" field.
func (t *responsesText) observe(typ string, data []byte) {
	if typ == "" {
		if raw := rawjson.Get(data, "type"); raw != nil {
			_ = json.Unmarshal(raw, &typ)
		}
	}
	switch {
	case typ == "response.audio.delta":
		// Base64 audio, not text.
	case strings.HasSuffix(typ, ".delta"):
		if d := rawjson.Get(data, "delta"); len(d) > 1 && d[0] == '"' {
			t.deltas += unescapedLen(d)
		}
	case typ == "response.completed" || typ == "response.incomplete" || typ == "response.failed":
		if out := rawjson.Get(rawjson.Get(data, "response"), "output"); out != nil {
			t.final = max(t.final, relayedTextBytes(out))
		}
	}
}

// bytes is the text relayed so far, each piece once.
func (t *responsesText) bytes() int64 { return max(t.deltas, t.final) }
