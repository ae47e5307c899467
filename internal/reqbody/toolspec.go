package reqbody

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
)

// ToolSpecText appends the texts a tool definition or its JSON schema
// carries (every "description" and "title" member whose value is a
// string, and the strings of every "enum" and "examples" array, joined
// one a line, at any depth) as gw.TextToolSpec texts: a tool's description is
// written by whoever published the tool (an MCP server, a plugin), not
// by the caller, and the model reads it as instructions. Invalid JSON
// adds what was read before it (the vendor refuses the body).
func ToolSpecText(dst []gw.Text, raw []byte) []gw.Text {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	dst, _ = descriptions(dec, dst)
	return dst
}

// descriptions reads one value from dec, appending the descriptions in
// it.
func descriptions(dec *jsontext.Decoder, dst []gw.Text) ([]gw.Text, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return dst, err
		}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadValue()
			if err != nil {
				return dst, err
			}
			switch specKey(name) {
			case specText:
				if dec.PeekKind() == '"' {
					v, err := dec.ReadValue()
					if err != nil {
						return dst, err
					}
					dst = appendDescription(dst, v)
					continue
				}
			case specList:
				if dec.PeekKind() == '[' {
					v, err := dec.ReadValue()
					if err != nil {
						return dst, err
					}
					dst = appendList(dst, v)
					continue
				}
			}
			if dst, err = descriptions(dec, dst); err != nil {
				return dst, err
			}
		}
		_, err := dec.ReadToken()
		return dst, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return dst, err
		}
		for dec.PeekKind() != ']' {
			var err error
			if dst, err = descriptions(dec, dst); err != nil {
				return dst, err
			}
		}
		_, err := dec.ReadToken()
		return dst, err
	case 0:
		return dst, io.ErrUnexpectedEOF
	}
	return dst, dec.SkipValue()
}

// Kinds of schema members that carry text the model reads.
const (
	specNone = iota
	specText // a string: description, title
	specList // an array of strings: enum, examples
)

// specKey is the kind of a member name (quoted, as read), escaped or
// not, as the vendor decodes it.
func specKey(name jsontext.Value) int {
	n := string(name)
	if bytes.IndexByte(name, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, name)
		if err != nil {
			return specNone
		}
		n = `"` + string(u) + `"`
	}
	switch n {
	case `"description"`, `"title"`:
		return specText
	case `"enum"`, `"examples"`:
		return specList
	}
	return specNone
}

// appendList appends the strings of a JSON array (an enum's values),
// one a line, as one text; other values are left out.
func appendList(dst []gw.Text, v []byte) []gw.Text {
	var vals []string
	if err := json.Unmarshal(v, &vals); err != nil {
		var anys []any
		if json.Unmarshal(v, &anys) != nil {
			return dst
		}
		vals = vals[:0]
		for _, a := range anys {
			if s, ok := a.(string); ok {
				vals = append(vals, s)
			}
		}
	}
	if t := strings.TrimSpace(strings.Join(vals, "\n")); t != "" {
		dst = append(dst, gw.Text{Source: gw.TextToolSpec, Text: t})
	}
	return dst
}

// appendDescription appends a description's text (v is a JSON string).
func appendDescription(dst []gw.Text, v jsontext.Value) []gw.Text {
	if len(v) == 0 || v[0] != '"' {
		return dst
	}
	u, err := jsontext.AppendUnquote(nil, v)
	if err != nil || len(u) == 0 {
		return dst
	}
	return append(dst, gw.Text{Source: gw.TextToolSpec, Text: string(u)})
}

// toolSpec is ToolSpecText for a value the scanner has validated.
func toolSpec(dst []gw.Text, v []byte) []gw.Text {
	_, dst = specDescriptions(v, 0, dst)
	return dst
}

// specDescriptions reads the validated value at v[pos:], appending the
// descriptions in it, and returns where it ends.
func specDescriptions(v []byte, pos int, dst []gw.Text) (int, []gw.Text) {
	pos = skipSpace(v, pos)
	switch v[pos] {
	case '{', '[':
		obj := v[pos] == '{'
		if pos = skipSpace(v, pos+1); v[pos] == '}' || v[pos] == ']' {
			return pos + 1, dst
		}
		for {
			if obj {
				end := stringEnd(v, pos)
				kind := specKey(v[pos:end])
				pos = skipSpace(v, skipSpace(v, end)+1) // the colon
				switch {
				case kind == specText && v[pos] == '"':
					end := stringEnd(v, pos)
					dst = appendDesc(dst, v[pos:end])
					pos = end
				case kind == specList && v[pos] == '[':
					end, _ := specDescriptions(v, pos, nil)
					dst = appendList(dst, v[pos:end])
					pos = end
				default:
					pos, dst = specDescriptions(v, pos, dst)
				}
			} else {
				pos, dst = specDescriptions(v, pos, dst)
			}
			if pos = skipSpace(v, pos); v[pos] != ',' {
				return pos + 1, dst
			}
			pos = skipSpace(v, pos+1)
		}
	case '"':
		return stringEnd(v, pos), dst
	}
	for pos < len(v) && v[pos] != ',' && v[pos] != '}' && v[pos] != ']' && !isSpace(v[pos]) {
		pos++
	}
	return pos, dst
}

func skipSpace(v []byte, pos int) int {
	for pos < len(v) && isSpace(v[pos]) {
		pos++
	}
	return pos
}

// stringEnd is the end of the validated string at v[pos:].
func stringEnd(v []byte, pos int) int {
	for i := pos + 1; ; {
		q := bytes.IndexByte(v[i:], '"')
		i += q
		bs := 0
		for v[i-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return i + 1
		}
		i++
	}
}

// appendDesc is appendDescription for a validated value.
func appendDesc(dst []gw.Text, v []byte) []gw.Text {
	if len(v) == 0 || v[0] != '"' {
		return dst
	}
	if u := unquoteValid(v); u != "" {
		dst = append(dst, gw.Text{Source: gw.TextToolSpec, Text: u})
	}
	return dst
}
