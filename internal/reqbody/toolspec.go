package reqbody

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
)

// ToolSpecText appends the descriptions a tool definition or its JSON
// schema carries (every "description" member whose value is a string,
// at any depth) as gw.TextToolSpec texts: a tool's description is
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
			if isDescription(name) && dec.PeekKind() == '"' {
				v, err := dec.ReadValue()
				if err != nil {
					return dst, err
				}
				dst = appendDescription(dst, v)
				continue
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

// isDescription reports whether a member name (quoted, as read) is
// "description", escaped or not, as the vendor decodes it.
func isDescription(name jsontext.Value) bool {
	if string(name) == `"description"` {
		return true
	}
	if bytes.IndexByte(name, '\\') < 0 {
		return false
	}
	u, err := jsontext.AppendUnquote(nil, name)
	return err == nil && string(u) == "description"
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
