package rawjson

import (
	"encoding/json"
	"strings"
)

// maxDepth is encoding/json's nesting limit: a document with more
// arrays and objects open at once is not valid to it.
const maxDepth = 10000

// Valid reports whether b is one JSON value with only whitespace around
// it, accepting exactly what encoding/json.Valid accepts (bytes above
// 0x7F inside strings are not checked as UTF-8; at most 10,000 arrays and
// objects open at once) at a fraction of its cost: a loop over the bytes
// instead of a state function per byte. FuzzValid holds it to
// encoding/json.Valid.
func Valid(b []byte) bool {
	var buf [32]byte
	open := buf[:0] // the open containers, '{' or '['
	i := skipWS(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		var ok bool
		switch c := b[i]; c {
		case '{', '[':
			if len(open) >= maxDepth {
				return false
			}
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == end {
				i++
				ok = true
				break
			}
			open = append(open, c)
			if c == '{' {
				if i, ok = memberName(b, i); !ok {
					return false
				}
			}
			continue // its first value
		case '"':
			i, ok = validString(b, i)
		case 't':
			i, ok = literal(b, i, "true")
		case 'f':
			i, ok = literal(b, i, "false")
		case 'n':
			i, ok = literal(b, i, "null")
		default:
			i, ok = number(b, i)
		}
		if !ok {
			return false
		}
		// After a value: close containers, or go on to the next value.
		for {
			i = skipWS(b, i)
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := open[len(open)-1]
			if b[i] == ',' {
				i = skipWS(b, i+1)
				if top == '{' {
					if i, ok = memberName(b, i); !ok {
						return false
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return false
		}
	}
}

// memberName reads a member's name and its colon at i and returns where
// its value starts.
func memberName(b []byte, i int) (int, bool) {
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipWS(b, i+1), true
}

// validString returns the end of the string starting at i: no control
// character, only JSON's escapes.
func validString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// number returns the end of the number starting at i:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		i = digits(b, i)
	}
	return i, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// Field is a member for DecodeMembers: Name as a struct field's JSON
// name, Into where its value is decoded.
type Field struct {
	Name string
	Into any
}

// DecodeMembers is json.Unmarshal(b, &v) for a struct v whose fields are
// fields, without decoding the rest of b: every top-level member whose
// name folds to a field's (as encoding/json matches a field) is decoded
// into that field, in order, as Unmarshal does. ok is false when b is
// not a valid JSON object: json.Unmarshal then gives the answer (its
// error, or nothing for null).
func DecodeMembers(b []byte, fields ...Field) (ok bool, err error) {
	if !Valid(b) {
		return false, nil
	}
	ms, err := Members(b)
	if err != nil {
		return false, nil
	}
	for _, m := range ms {
		f := match(m.Key, fields)
		if f == nil {
			continue
		}
		if err := json.Unmarshal(b[m.ValStart:m.ValEnd], f.Into); err != nil {
			return true, err
		}
	}
	return true, nil
}

// match is the field a member named key decodes into: the one named
// exactly so, else the first whose name folds to key (encoding/json's
// rule), else nil.
func match(key string, fields []Field) *Field {
	var folded *Field
	for i := range fields {
		if fields[i].Name == key {
			return &fields[i]
		}
		if folded == nil && strings.EqualFold(fields[i].Name, key) {
			folded = &fields[i]
		}
	}
	return folded
}
