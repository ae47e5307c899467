// Package rawjson edits the top-level members of a JSON object in place,
// byte for byte, without decoding and re-encoding the rest: the
// pass-through path rewrites only "model" (and, for usage, one stream
// option) so that everything else the caller sent reaches the vendor
// exactly as sent, keeping vendors' prompt caches warm.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Member is one top-level member: Key decoded, and the byte offsets of
// the key's opening quote and of the value [ValStart, ValEnd).
type Member struct {
	Key      string
	KeyStart int
	ValStart int
	ValEnd   int
}

var errSyntax = errors.New("rawjson: malformed JSON object")

// Members returns the top-level members of the JSON object b, in order.
func Members(b []byte) ([]Member, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errSyntax
	}
	i++
	// Most objects the gateway reads have a handful of members: one
	// allocation instead of the slice's doublings.
	out := make([]Member, 0, 8)
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return nil, errSyntax
		}
		if b[i] == '}' {
			return out, nil
		}
		if len(out) > 0 {
			if b[i] != ',' {
				return nil, errSyntax
			}
			i = skipWS(b, i+1)
		}
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return nil, err
		}
		key, err := decodeKey(b[ks:ke])
		if err != nil {
			return nil, err
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, errSyntax
		}
		vs := skipWS(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return nil, err
		}
		out = append(out, Member{Key: key, KeyStart: ks, ValStart: vs, ValEnd: ve})
		i = ve
	}
}

func decodeKey(q []byte) (string, error) {
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' {
			var s string
			if err := json.Unmarshal(q, &s); err != nil {
				return "", fmt.Errorf("rawjson: key: %w", err)
			}
			return s, nil
		}
	}
	return internKey(q[1 : len(q)-1]), nil
}

// internKey returns k as a string, without allocating for the member
// names the gateway's request and answer bodies carry most.
func internKey(k []byte) string {
	switch string(k) { // compiled to comparisons, no conversion
	case "model":
		return "model"
	case "messages":
		return "messages"
	case "role":
		return "role"
	case "content":
		return "content"
	case "stream":
		return "stream"
	case "stream_options":
		return "stream_options"
	case "max_tokens":
		return "max_tokens"
	case "max_completion_tokens":
		return "max_completion_tokens"
	case "max_output_tokens":
		return "max_output_tokens"
	case "temperature":
		return "temperature"
	case "tools":
		return "tools"
	case "system":
		return "system"
	case "type":
		return "type"
	case "text":
		return "text"
	case "id":
		return "id"
	case "object":
		return "object"
	case "created":
		return "created"
	case "choices":
		return "choices"
	case "index":
		return "index"
	case "message":
		return "message"
	case "finish_reason":
		return "finish_reason"
	case "logprobs":
		return "logprobs"
	case "usage":
		return "usage"
	case "system_fingerprint":
		return "system_fingerprint"
	case "prompt_cache_key":
		return "prompt_cache_key"
	case "input":
		return "input"
	case "instructions":
		return "instructions"
	case "metadata":
		return "metadata"
	case "n":
		return "n"
	}
	return string(k)
}

// Set returns b with every top-level member named key given the raw JSON
// value v, or with the member appended when b has none.
func Set(b []byte, key string, v []byte) ([]byte, error) {
	ms, err := Members(b)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(v)+len(key)+4)
	last := 0
	found := false
	for _, m := range ms {
		if m.Key != key {
			continue
		}
		found = true
		out = append(out, b[last:m.ValStart]...)
		out = append(out, v...)
		last = m.ValEnd
	}
	if found {
		return append(out, b[last:]...), nil
	}
	// Append before the closing brace.
	end := len(b) - 1
	for end >= 0 && b[end] != '}' {
		end--
	}
	out = append(out, b[:end]...)
	if len(ms) > 0 {
		out = append(out, ',')
	}
	kq, _ := json.Marshal(key)
	out = append(out, kq...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, b[end:]...), nil
}

// Get returns the raw value of the last top-level member named key (the
// one encoding/json would keep), or nil.
func Get(b []byte, key string) []byte {
	ms, err := Members(b)
	if err != nil {
		return nil
	}
	var v []byte
	for _, m := range ms {
		if m.Key == key {
			v = b[m.ValStart:m.ValEnd]
		}
	}
	return v
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string that opens at i.
// It jumps from quote to quote (bytes.IndexByte, vectorised) instead of
// reading every byte: a quote ends the string unless an odd number of
// backslashes precedes it (each pair is one escaped backslash).
func skipString(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, errSyntax
	}
	// Short strings (keys, types, ids) end before a call would pay off.
	i++
	for end := min(i+16, len(b)); i < end; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	// i is past any escape here: what precedes it is not an open one.
	from := i
	for from < len(b) {
		j := bytes.IndexByte(b[from:], '"')
		if j < 0 {
			return 0, errSyntax
		}
		j += from
		// Backslashes right before the quote, back to from: the byte
		// before from closes no escape left open (it is the opening
		// quote, an escaped quote or the end of an escape).
		k := j
		for k > from && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1, nil
		}
		from = j + 1
	}
	return 0, errSyntax
}

// structural marks the bytes a container's skip must look at.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			// The bytes between structural ones (numbers, spaces,
			// commas, colons, literals: most of a vector's bytes) in
			// one tight loop.
			for i < len(b) && !structural[b[i]] {
				i++
			}
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '"':
				e, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errSyntax
	default:
		s := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
			i++
		}
		if i == s {
			return 0, errSyntax
		}
		return i, nil
	}
}

// Span is one element of a JSON array: the byte offsets [Start, End) of
// its value.
type Span struct {
	Start int
	End   int
}

// Elements returns the elements of the JSON array b, in order, as offsets
// into b.
func Elements(b []byte) ([]Span, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errSyntax
	}
	i++
	var out []Span
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return nil, errSyntax
		}
		if b[i] == ']' {
			return out, nil
		}
		if len(out) > 0 {
			if b[i] != ',' {
				return nil, errSyntax
			}
			i = skipWS(b, i+1)
		}
		e, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		out = append(out, Span{Start: i, End: e})
		i = e
	}
}

// Splice returns b with each edit applied: the bytes [Start, End) of b
// replaced by Text. Edits are offsets into b, sorted and not
// overlapping (an insertion has Start == End).
func Splice(b []byte, edits ...Edit) []byte {
	n := len(b)
	for _, e := range edits {
		n += len(e.Text) - (e.End - e.Start)
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, b[last:e.Start]...)
		out = append(out, e.Text...)
		last = e.End
	}
	return append(out, b[last:]...)
}

// Delete returns b without its top-level member key (b itself when it
// has none).
func Delete(b []byte, key string) ([]byte, error) {
	ms, err := Members(b)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if m.Key != key {
			continue
		}
		switch {
		case i > 0: // from the end of the previous value: ", "key": v"
			return Splice(b, Edit{Start: ms[i-1].ValEnd, End: m.ValEnd}), nil
		case len(ms) > 1: // the first of several: up to the next key
			return Splice(b, Edit{Start: m.KeyStart, End: ms[1].KeyStart}), nil
		default:
			return Splice(b, Edit{Start: m.KeyStart, End: m.ValEnd}), nil
		}
	}
	return b, nil
}

// Edit replaces the bytes [Start, End) of a document with Text.
type Edit struct {
	Start int
	End   int
	Text  []byte
}
