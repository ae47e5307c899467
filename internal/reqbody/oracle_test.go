package reqbody

// The jsontext-based parser that Parse replaced, kept as the oracle the
// differential fuzz target compares Parse with.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
)

type oracle struct {
	dec   *jsontext.Decoder
	shape gw.Shape
	text  []gw.Text
	tools []gw.Text // tool descriptions, put before the conversation's text
}

// Parse validates body and reads it. Errors are *gw.Error with code
// invalid_request and a message that names the field.
func oracleParse(shape gw.Shape, body []byte) (*Body, error) {
	if len(body) == 0 {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "request body is empty; send a JSON object")
	}
	if shape != gw.ShapeM && shape != gw.ShapeC {
		return nil, fmt.Errorf("reqbody: unsupported shape %q", shape)
	}
	p := &oracle{dec: jsontext.NewDecoder(bytes.NewBuffer(body)), shape: shape}
	b, err := p.top()
	if err != nil {
		return nil, p.wrap(err)
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level object")
		}
		return nil, p.wrap(err)
	}
	b.Text = p.text
	if len(p.tools) > 0 {
		// The tools are read first, as vendors present them, wherever the
		// body lists them: the conversation's last text stays last.
		b.Text = append(p.tools, p.text...)
	}
	return b, nil
}

func (p *oracle) wrap(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return gw.Errorf(gw.CodeInvalidRequest, "%s", fe.msg)
	}
	if errors.Is(err, jsontext.ErrDuplicateName) {
		var se *jsontext.SyntacticError
		at := ""
		if errors.As(err, &se) {
			at = " at " + strconv.Quote(string(se.JSONPointer))
		}
		return &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body has a duplicate key" + at + "; send each key once", Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not valid JSON: " + err.Error(), Err: err}
}

// peek returns the next token's kind, or the decoder's error.
func (p *oracle) peek() (jsontext.Kind, error) {
	if k := p.dec.PeekKind(); k != 0 {
		return k, nil
	}
	_, err := p.dec.ReadToken()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}

// open reads the start of an object or array of the given kind ('{' or
// '['); null gives ok false. Any other kind is a field error saying what
// (its parts joined: built only then).
func (p *oracle) open(kind jsontext.Kind, what ...string) (ok bool, err error) {
	k, err := p.peek()
	if err != nil {
		return false, err
	}
	switch k {
	case 'n':
		_, err := p.dec.ReadToken()
		return false, err
	case kind:
		_, err := p.dec.ReadToken()
		return err == nil, err
	}
	return false, fieldErrorf("%s", strings.Join(what, ""))
}

// more reports whether the object or array being read has another item,
// reading its end if not.
func (p *oracle) more() (bool, error) {
	k, err := p.peek()
	if err != nil {
		return false, err
	}
	if k == '}' || k == ']' {
		_, err := p.dec.ReadToken()
		return false, err
	}
	return true, nil
}

// elements reads the rest of an array whose '[' was read, calling f with
// each element's path (where[i]).
func (p *oracle) elements(where string, f func(where string) error) error {
	for i := 0; ; i++ {
		if ok, err := p.more(); err != nil || !ok {
			return err
		}
		if err := f(where + "[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
}

// members reads the rest of an object whose '{' was read, calling f with
// each member's name; f reads (or skips) the value.
func (p *oracle) members(where string, f func(name string) error) error {
	for {
		if ok, err := p.more(); err != nil || !ok {
			return err
		}
		n, err := p.name(where)
		if err != nil {
			return err
		}
		if err := f(n); err != nil {
			return err
		}
	}
}

// object reads the '{' that must open the value at where (what: "an
// object", "a content part object").
func (p *oracle) object(where, what string) error {
	ok, err := p.open('{', where, " must be ", what)
	if err != nil {
		return err
	}
	if !ok {
		return fieldErrorf("%s must be %s", where, what)
	}
	return nil
}

// content reads message content that is a string (text of src), null,
// or an array whose elements each reads; items names them in errors.
func (p *oracle) content(src gw.TextSource, where, items string, each func(where string) error) error {
	k, err := p.peek()
	if err != nil {
		return err
	}
	switch k {
	case 'n':
		_, err := p.dec.ReadToken()
		return err
	case '"':
		s, err := p.str(where, "")
		p.add(src, s)
		return err
	case '[':
	default:
		return fieldErrorf("%s must be a string or an array of %s", where, items)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	return p.elements(where, each)
}

// name reads an object member name and checks it: where the gateway reads
// the object, keys are the APIs' lower-case ones or something the vendor
// refuses anyway. It returns a name the oracle acts on, or "" for any
// other (to be skipped).
func (p *oracle) name(where string) (string, error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return "", err
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return "", err
		}
		raw = u
	}
	for _, c := range raw {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			n := string(raw)
			return "", fieldErrorf("%s has the key %s: keys are case-sensitive and lower-case (vendors read %s and %s as different keys)", where, echo(n), echo(n), echo(lowerASCII(n)))
		}
	}
	return known[string(raw)], nil
}

// str reads a string or null ("" for null); where and field (".role",
// or "") name it in the error, built only then.
func (p *oracle) str(where, field string) (string, error) {
	k, err := p.peek()
	if err != nil {
		return "", err
	}
	if k != '"' && k != 'n' {
		return "", fieldErrorf("%s%s must be a string", where, field)
	}
	if k == 'n' {
		_, err := p.dec.ReadToken()
		return "", err
	}
	raw, err := p.dec.ReadValue()
	if err != nil {
		return "", err
	}
	return unquote(raw)
}

// unquote decodes a JSON string the decoder has read (and so checked:
// valid UTF-8, valid escapes). It copies the runs between backslashes
// whole; a string with a \u escape is left to jsontext, which knows
// the surrogates' rules, from the first \u met.
func unquote(raw jsontext.Value) (string, error) {
	s := raw[1 : len(raw)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return string(s), nil
	}
	// Unquoting never lengthens a string: out never grows, and the
	// string is made from it without a copy (nothing else holds it).
	out := make([]byte, 0, len(s))
	for {
		out = append(out, s[:i]...)
		switch c := s[i+1]; c {
		case 'u':
			// Met on the way rather than searched for first: one pass
			// over the string instead of two.
			b, err := jsontext.AppendUnquote(out[:0], raw)
			if err != nil {
				return "", err
			}
			return bytesString(b), nil
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		s = s[i+2:]
		if i = bytes.IndexByte(s, '\\'); i < 0 {
			out = append(out, s...)
			return bytesString(out), nil
		}
	}
}

func (p *oracle) add(src gw.TextSource, s string) {
	if s != "" {
		p.text = append(p.text, gw.Text{Source: src, Text: s})
	}
}

// resolve gives the texts from start on that follow their message's role
// the role's source.
func (p *oracle) resolve(start int, src gw.TextSource) {
	for i := start; i < len(p.text); i++ {
		if p.text[i].Source == roleSource {
			p.text[i].Source = src
		}
	}
}

func (p *oracle) top() (*Body, error) {
	k, err := p.peek()
	if err != nil {
		return nil, err
	}
	if k != '{' {
		// Still report invalid JSON as such.
		if err := p.dec.SkipValue(); err != nil {
			return nil, err
		}
		return nil, fieldErrorf("request body must be a JSON object")
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, err
	}
	var (
		b                        Body
		hasModel, hasMessages    bool
		maxTokens, maxCompletion *int64
	)
	for {
		if ok, err := p.more(); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			break
		}
		n, err := p.name("the request body")
		if err != nil {
			return nil, err
		}
		switch n {
		case "model":
			k, err := p.peek()
			if err != nil {
				return nil, err
			}
			if k == 'n' {
				_, err = p.dec.ReadToken()
				hasModel = false
				if err != nil {
					return nil, err
				}
				continue
			}
			if k != '"' {
				if err := p.dec.SkipValue(); err != nil {
					return nil, err
				}
				return nil, fieldErrorf("model must be a string")
			}
			if b.Model, err = p.str("model", ""); err != nil {
				return nil, err
			}
			if len(b.Model) > MaxModelBytes {
				return nil, fieldErrorf("model is %d bytes long; model ids are at most %d bytes", len(b.Model), MaxModelBytes)
			}
			hasModel = true
		case "models":
			b.HasModels = true
			ok, err := p.open('[', "models must be an array of model ids")
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if err := p.elements("models", func(where string) error {
				m, err := p.str(where, "")
				if err != nil {
					return err
				}
				if m == "" || len(m) > MaxModelBytes {
					return fieldErrorf("%s must be a model id of 1 to %d bytes", where, MaxModelBytes)
				}
				if len(b.Models) >= maxModels {
					return fieldErrorf("models lists more than %d model ids", maxModels)
				}
				b.Models = append(b.Models, m)
				return nil
			}); err != nil {
				return nil, err
			}
		case "messages":
			k, err := p.peek()
			if err != nil {
				return nil, err
			}
			if k == 'n' {
				if _, err := p.dec.ReadToken(); err != nil {
					return nil, err
				}
				continue
			}
			if k != '[' {
				return nil, fieldErrorf("messages must be an array")
			}
			hasMessages = true
			if err := p.messages(); err != nil {
				return nil, err
			}
		case "system":
			if p.shape != gw.ShapeM {
				if err := p.dec.SkipValue(); err != nil {
					return nil, err
				}
				continue
			}
			if err := p.mContent(gw.TextSystem, "system"); err != nil {
				return nil, err
			}
		case "stream":
			k, err := p.peek()
			if err != nil {
				return nil, err
			}
			if k != 't' && k != 'f' && k != 'n' {
				return nil, fieldErrorf("stream must be a boolean")
			}
			tok, err := p.dec.ReadToken()
			if err != nil {
				return nil, err
			}
			b.Stream = k == 't' && tok.Bool()
		case "max_tokens", "max_completion_tokens":
			v, err := p.count(n)
			if err != nil {
				return nil, err
			}
			if n == "max_tokens" {
				maxTokens = v
			} else {
				maxCompletion = v
			}
		default:
			if err := p.apiMember(n); err != nil {
				return nil, err
			}
		}
	}
	if !hasModel {
		return nil, fieldErrorf("model is required, in the form <vendor>/<model>, e.g. openai/gpt-4.1")
	}
	if !hasMessages {
		return nil, fieldErrorf("messages is required")
	}
	switch {
	case p.shape == gw.ShapeC && maxCompletion != nil:
		b.MaxOutput = *maxCompletion
	case maxTokens != nil:
		b.MaxOutput = *maxTokens
	case p.shape == gw.ShapeM:
		return nil, fieldErrorf("max_tokens is required")
	}
	return &b, nil
}

// apiMember reads a top-level member the gateway does not use itself,
// checking the keys of the API's objects (see apiObjects).
func (p *oracle) apiMember(name string) error {
	switch {
	case name == "tools":
		ok, err := p.open('[', "tools must be an array")
		if err != nil || !ok {
			if _, isField := err.(*fieldError); isField {
				return p.dec.SkipValue() // the vendor's to refuse
			}
			return err
		}
		for i := 0; ; i++ {
			if more, err := p.more(); err != nil || !more {
				return err
			}
			if err := p.apiObject("tools["+strconv.Itoa(i)+"]", "function"); err != nil {
				return err
			}
		}
	case apiObjects[name]:
		return p.apiObject(name, "json_schema")
	}
	return p.dec.SkipValue()
}

// apiObject checks the keys of an object of the API (anything else is
// skipped), and one level further in its member named nested.
func (p *oracle) apiObject(where, nested string) error {
	k, err := p.peek()
	if err != nil {
		return err
	}
	if k != '{' {
		return p.dec.SkipValue()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for {
		if more, err := p.more(); err != nil || !more {
			return err
		}
		n, err := p.name(where)
		if err != nil {
			return err
		}
		switch {
		case n != "" && n == nested:
			err = p.apiObject(where+"."+n, "")
		case strings.HasPrefix(where, "tools[") && (n == "description" || n == "input_schema" || n == "parameters"):
			// A tool's description and its schema's: third-party text,
			// read by the guard as such.
			var v jsontext.Value
			if v, err = p.dec.ReadValue(); err == nil {
				if n == "description" {
					p.tools = appendDescription(p.tools, v)
				} else {
					p.tools = ToolSpecText(p.tools, v)
				}
			}
		default:
			err = p.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
}

// count reads a non-negative integer or null (nil).
func (p *oracle) count(field string) (*int64, error) {
	k, err := p.peek()
	if err != nil {
		return nil, err
	}
	if k == 'n' {
		_, err := p.dec.ReadToken()
		return nil, err
	}
	if k != '0' {
		return nil, fieldErrorf("%s must be a non-negative integer", field)
	}
	v, err := p.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return nil, fieldErrorf("%s must be a non-negative integer", field)
	}
	return &n, nil
}

// The messages of M and C bodies: roles, content blocks and parts, tool
// calls; each text is appended to the guard's texts with its source.

func (p *oracle) messages() error {
	if _, err := p.dec.ReadToken(); err != nil { // [
		return err
	}
	return p.elements("messages", func(where string) error {
		if err := p.object(where, "an object"); err != nil {
			return err
		}
		if p.shape == gw.ShapeM {
			return p.mMessage(where)
		}
		return p.cMessage(where)
	})
}

func (p *oracle) mMessage(where string) error {
	start := len(p.text)
	role := ""
	if err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "role":
			if role, err = p.str(where, ".role"); err != nil {
				return err
			}
		case "content":
			if err := p.mContent(roleSource, where+".content"); err != nil {
				return err
			}
		default:
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
		}
		return err
	}); err != nil {
		return err
	}
	src := gw.TextUser
	switch role {
	case "assistant":
		src = gw.TextAssistant
	case "system":
		// A per-turn system message (Claude Code sends them): scored as
		// the system prompt is, never.
		src = gw.TextSystem
	}
	p.resolve(start, src)
	return nil
}

// mContent reads content that is a string, an array of blocks or null.
func (p *oracle) mContent(src gw.TextSource, where string) error {
	return p.content(src, where, "content blocks", func(where string) error { return p.mBlock(src, where) })
}

// mBlock reads one content block. Members whose meaning depends on the
// type are read in place when the type came first (as every SDK sends
// it), else kept and read at the block's end.
func (p *oracle) mBlock(src gw.TextSource, where string) error {
	ok, err := p.open('{', where, " must be a content block object")
	if err != nil {
		return err
	}
	if !ok {
		return fieldErrorf("%s must be a content block object", where)
	}
	var (
		typ, text, title, context string
		typed                     bool
		later                     []pending
	)
	start := len(p.text)
	if err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "type":
			if typ, err = p.str(where, ".type"); err != nil {
				return err
			}
			typed = true
		case "text":
			if text, err = p.str(where, ".text"); err != nil {
				return err
			}
		case "title":
			if title, err = p.str(where, ".title"); err != nil {
				return err
			}
		case "context":
			if context, err = p.str(where, ".context"); err != nil {
				return err
			}
		case "content", "source", "input":
			if !typed {
				v, err := p.dec.ReadValue()
				if err != nil {
					return err
				}
				later = append(later, pending{n, bytes.Clone(v)})
				return nil
			}
			if err := p.blockMember(typ, n, where); err != nil {
				return err
			}
		default:
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
		}
		return err
	}); err != nil {
		return err
	}
	// Title and context come before the body in the guard's order.
	var head []gw.Text
	switch typ {
	case "thinking", "redacted_thinking", "image":
	case "tool_result", "search_result", "mcp_tool_result":
		head = appendText(head, gw.TextTool, title)
	case "document":
		head = appendText(head, gw.TextTool, title)
		head = appendText(head, gw.TextTool, context)
	case "tool_use", "server_tool_use", "mcp_tool_use":
	default: // "text" and any future block carrying text
		head = appendText(head, src, text)
	}
	if len(head) > 0 {
		p.text = append(p.text[:start], append(head, p.text[start:]...)...)
	}
	for _, l := range later {
		sub := &oracle{dec: jsontext.NewDecoder(bytes.NewBuffer(l.raw)), shape: p.shape, text: p.text}
		if err := sub.blockMember(typ, l.name, where); err != nil {
			return err
		}
		p.text = sub.text
	}
	return nil
}

// blockMember reads a block's content, source or input, knowing its
// type.
func (p *oracle) blockMember(typ, name, where string) error {
	switch {
	case name == "input" && (typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use"):
		v, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		if s := string(bytes.TrimSpace(v)); s != "null" {
			p.add(gw.TextAssistant, s)
		}
		return nil
	case name == "content" && (typ == "tool_result" || typ == "search_result" || typ == "mcp_tool_result"):
		// an MCP server's output is third-party text like a tool's
		return p.mContent(gw.TextTool, where+".content")
	case name == "source" && typ == "document":
		return p.docSource(where + ".source")
	}
	return p.dec.SkipValue()
}

// docSource reads a document's source: text data or nested content.
func (p *oracle) docSource(where string) error {
	k, err := p.peek()
	if err != nil {
		return err
	}
	if k != '{' {
		return p.dec.SkipValue()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	var typ, data, media string
	var content []byte
	start := len(p.text)
	typed := false
	if err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "type":
			if typ, err = p.str(where, ".type"); err != nil {
				return err
			}
			typed = true
		case "data":
			// Binary data (base64) is a string too; text is kept, and
			// a base64 text/plain document is decoded below.
			if data, err = p.str(where, ".data"); err != nil {
				return err
			}
		case "media_type":
			if media, err = p.str(where, ".media_type"); err != nil {
				return err
			}
		case "content":
			if typed && typ == "content" {
				if err := p.mContent(gw.TextTool, where+".content"); err != nil {
					return err
				}
				return nil
			}
			v, err := p.dec.ReadValue()
			if err != nil {
				return err
			}
			if !typed {
				content = bytes.Clone(v)
			}
		default:
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
		}
		return err
	}); err != nil {
		return err
	}
	if typ == "base64" && data != "" && strings.HasPrefix(media, "text/") {
		// The vendor reads a base64 text document as its text; so does
		// the guard (undecodable data is the vendor's to refuse).
		if dec, err := base64.StdEncoding.DecodeString(data); err == nil && utf8.Valid(dec) {
			typ, data = "text", string(dec)
		}
	}
	if typ == "text" && data != "" {
		p.text = append(p.text[:start], append([]gw.Text{{Source: gw.TextTool, Text: data}}, p.text[start:]...)...)
	}
	if typ == "content" && content != nil {
		sub := &oracle{dec: jsontext.NewDecoder(bytes.NewBuffer(content)), shape: p.shape, text: p.text}
		if err := sub.mContent(gw.TextTool, where+".content"); err != nil {
			return err
		}
		p.text = sub.text
	}
	return nil
}

func (p *oracle) cMessage(where string) error {
	start := len(p.text)
	role := ""
	if err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "role":
			if role, err = p.str(where, ".role"); err != nil {
				return err
			}
		case "content":
			if err := p.cContent(where + ".content"); err != nil {
				return err
			}
		case "refusal":
			s, err := p.str(where, ".refusal")
			if err != nil {
				return err
			}
			p.add(roleSource, s)
		case "tool_calls":
			if err := p.cToolCalls(where + ".tool_calls"); err != nil {
				return err
			}
		case "function_call":
			ok, err := p.open('{', where, ".function_call must be an object")
			if err != nil {
				return err
			}
			if ok {
				if err := p.cFunction(where + ".function_call"); err != nil {
					return err
				}
			}
		default:
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
		}
		return err
	}); err != nil {
		return err
	}
	src := gw.TextUser
	switch role {
	case "system", "developer":
		src = gw.TextSystem
	case "assistant":
		src = gw.TextAssistant
	case "tool", "function":
		src = gw.TextTool
	}
	p.resolve(start, src)
	return nil
}

func (p *oracle) cContent(where string) error {
	return p.content(roleSource, where, "content parts", p.cPart)
}

// cPart reads one content part: its text and refusal are text of the
// message's role.
func (p *oracle) cPart(where string) error {
	if err := p.object(where, "a content part object"); err != nil {
		return err
	}
	var text, refusal string
	err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "text":
			text, err = p.str(where, ".text")
		case "refusal":
			refusal, err = p.str(where, ".refusal")
		case "type":
			_, err = p.str(where, ".type")
		default:
			err = p.dec.SkipValue()
		}
		return err
	})
	p.add(roleSource, text)
	p.add(roleSource, refusal)
	return err
}

func (p *oracle) cToolCalls(where string) error {
	ok, err := p.open('[', where, " must be an array")
	if err != nil || !ok {
		return err
	}
	return p.elements(where, func(tw string) error {
		if err := p.object(tw, "an object"); err != nil {
			return err
		}
		return p.members(tw, func(n string) error {
			if n != "function" {
				return p.dec.SkipValue()
			}
			ok, err := p.open('{', tw, ".function must be an object")
			if err != nil || !ok {
				return err
			}
			return p.cFunction(tw + ".function")
		})
	})
}

// cFunction reads a function call object's members (its "{" read).
func (p *oracle) cFunction(where string) error {
	return p.members(where, func(n string) error {
		if n != "arguments" {
			return p.dec.SkipValue()
		}
		s, err := p.str(where, ".arguments")
		if err != nil {
			return err
		}
		p.add(gw.TextAssistant, s)
		return nil
	})
}
