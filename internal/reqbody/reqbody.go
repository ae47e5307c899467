// Package reqbody reads a chat request body once, the way the vendors
// read it, for everything the gateway decides before the vendor call:
// validation, routing (model, stream, output cap) and the guard's input
// (every piece of text with its source).
//
// Vendors decode JSON keys case-sensitively; Go's encoding/json matches
// them case-insensitively (also folding "ſ" to "s" and the Kelvin sign to
// "k") and lets the last of duplicate keys win. A body that the gateway
// and the vendor could read differently is refused with 400 before any
// decode: a duplicate key anywhere, invalid UTF-8, and, in the objects the
// gateway reads (the top level, messages, content blocks and parts, tool
// calls, document sources), any key with an upper-case or non-ASCII
// letter (the APIs' keys are all lower-case, and the vendors reject
// unknown keys there). After this check every later decoder (the shape
// mappers, billing's hold sizing) reads the same fields as the vendor.
//
// Whatever validation accepts, the guard reads: content that is neither
// a string, an array nor null, a block that is not an object, a text that
// is not a string, is refused here rather than skipped.
package reqbody

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Body is what the gateway reads of a chat request.
type Body struct {
	Model  string
	Stream bool
	// MaxOutput is the caller's output cap (max_tokens, or on shape C
	// max_completion_tokens when given), 0 when it gave none.
	MaxOutput int64
	// Text is every piece of text the request carries, in order, with
	// its source. Shape M: the system prompt and per-turn system
	// messages (role "system" inside messages) as system text; each
	// message's string content or blocks: text, tool_result content,
	// document blocks with a text source or nested content (plus their
	// title and context), search results, and tool_use input (as
	// assistant text). Thinking blocks, images and binary documents carry
	// no text the guard scores. Shape C: system and developer messages as
	// system text; user, assistant, tool and function messages with
	// string or part-array content (text and refusal parts), refusals and
	// tool-call arguments.
	Text []gw.Text
	// Models is the caller's fallback list ("models" beside "model",
	// OpenRouter's convention): model ids tried in order after Model
	// fails; nil when absent. HasModels says the member was present
	// (even null or empty), so that the server strips it before the
	// vendor sees it.
	Models    []string
	HasModels bool
	// Top is the body's top-level members in order, with the offsets of
	// their keys and values, as rawjson.Members gives them: read in the
	// same pass, for the later stages to skip their own scan.
	Top []rawjson.Member
	// Messages is the elements of the messages array, as rawjson.Elements
	// gives them on its value: offsets into that value (which an edit of
	// another member does not move), read in the same pass. Nil when
	// there are none (an empty array, messages null) or they are not
	// known (a body the scanner did not read).
	Messages []rawjson.Span
}

// MaxModelBytes bounds the model field: it is stored with every request's
// record and logged, so a longer one is refused before anything is
// written (the longest listed model ids are under 100 bytes).
const MaxModelBytes = 256

// maxModels bounds the models list (the server allows fewer; this bound
// only stops the parse from collecting an unbounded list).
const maxModels = 64

// maxEcho bounds a caller's string quoted back in an error message.
const maxEcho = 64

// echo quotes s for an error message, cut to maxEcho bytes.
func echo(s string) string {
	if len(s) > maxEcho {
		return strconv.Quote(s[:maxEcho]) + "..."
	}
	return strconv.Quote(s)
}

// roleSource marks text whose source is its message's role, known only
// once the whole message is read (keys come in any order).
const roleSource gw.TextSource = -1

type parser struct {
	dec   tokens
	shape gw.Shape
	text  []gw.Text
	tools []gw.Text // tool descriptions, put before the conversation's text
	where []byte    // the paths made by join
}

// join is the path where with suffix and, for index >= 0, "[index]"
// appended, for error messages, made without allocating: the paths
// share p.where, a stack whose top is the innermost path (where
// extends the path it was made from; a path string is not used once a
// path beside it was made). A where that is not from p.where (a literal
// at the top level, or a sub-parser's first) starts the stack again.
func (p *parser) join(where, suffix string, index int) string {
	if len(where) > 0 && len(where) <= len(p.where) && unsafe.StringData(where) == unsafe.SliceData(p.where) {
		p.where = p.where[:len(where)]
	} else {
		p.where = append(p.where[:0], where...)
	}
	p.where = append(p.where, suffix...)
	if index >= 0 {
		p.where = append(p.where, '[')
		p.where = strconv.AppendInt(p.where, int64(index), 10)
		p.where = append(p.where, ']')
	}
	return unsafe.String(unsafe.SliceData(p.where), len(p.where))
}

// Parse validates body and reads it. Errors are *gw.Error with code
// invalid_request and a message that names the field. The texts may
// share body's bytes (Model and Models do not): body must not be changed
// while they are in use.
func Parse(shape gw.Shape, body []byte) (*Body, error) {
	if len(body) == 0 {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "request body is empty; send a JSON object")
	}
	if shape != gw.ShapeM && shape != gw.ShapeC {
		return nil, fmt.Errorf("reqbody: unsupported shape %q", shape)
	}
	b, err := parse(newScanner(body), shape)
	if err == errSyntax {
		// Invalid: read again by the decoder, for its error message (and
		// its decision, which is the scanner's).
		b, err = parse(decoder{jsontext.NewDecoder(bytes.NewBuffer(body))}, shape)
		if err == nil { // not met: the scanner and the decoder agree
			b.Top, err = rawjson.Members(body)
		}
	}
	if err != nil {
		return nil, wrap(err)
	}
	return b, nil
}

func parse(dec tokens, shape gw.Shape) (*Body, error) {
	p := &parser{dec: dec, shape: shape}
	b, err := p.top()
	if err == nil {
		err = p.dec.end()
	}
	if err != nil {
		return nil, err
	}
	b.Text = p.text
	if len(p.tools) > 0 {
		// The tools are read first, as vendors present them, wherever the
		// body lists them: the conversation's last text stays last.
		b.Text = append(p.tools, p.text...)
	}
	return b, nil
}

// fieldError is a well-formed body with a field of the wrong kind.
type fieldError struct{ msg string }

func (e *fieldError) Error() string { return e.msg }

func fieldErrorf(format string, args ...any) error {
	return &fieldError{fmt.Sprintf(format, args...)}
}

func wrap(err error) error {
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
func (p *parser) peek() (byte, error) {
	return p.dec.peekKind()
}

// open reads the start of an object or array of the given kind ('{' or
// '['); null gives ok false. Any other kind is a field error saying what
// (its parts joined: built only then).
func (p *parser) open(kind byte, what ...string) (ok bool, err error) {
	k, err := p.peek()
	if err != nil {
		return false, err
	}
	switch k {
	case 'n':
		_, err := p.dec.readToken()
		return false, err
	case kind:
		_, err := p.dec.readToken()
		return err == nil, err
	}
	return false, fieldErrorf("%s", strings.Join(what, ""))
}

// more reports whether the object or array being read has another item,
// reading its end if not.
func (p *parser) more() (bool, error) {
	k, err := p.peek()
	if err != nil {
		return false, err
	}
	if k == '}' || k == ']' {
		_, err := p.dec.readToken()
		return false, err
	}
	return true, nil
}

// elements reads the rest of an array whose '[' was read, calling f with
// each element's path (where[i]).
func (p *parser) elements(where string, f func(where string) error) error {
	for i := 0; ; i++ {
		if ok, err := p.more(); err != nil || !ok {
			return err
		}
		if err := f(p.join(where, "", i)); err != nil {
			return err
		}
	}
}

// members reads the rest of an object whose '{' was read, calling f with
// each member's name; f reads (or skips) the value.
func (p *parser) members(where string, f func(name string) error) error {
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
func (p *parser) object(where, what string) error {
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
func (p *parser) content(src gw.TextSource, where, items string, each func(where string) error) error {
	k, err := p.peek()
	if err != nil {
		return err
	}
	switch k {
	case 'n':
		_, err := p.dec.readToken()
		return err
	case '"':
		s, err := p.str(where, "")
		p.add(src, s)
		return err
	case '[':
	default:
		return fieldErrorf("%s must be a string or an array of %s", where, items)
	}
	if _, err := p.dec.readToken(); err != nil {
		return err
	}
	return p.elements(where, each)
}

// known are the member names the parser acts on; name returns them
// without allocating.
var known = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"model", "models", "messages", "system", "stream", "max_tokens", "max_completion_tokens",
		"role", "content", "type", "text", "title", "context", "source", "input", "data", "media_type",
		"refusal", "tool_calls", "function_call", "function", "arguments",
		"tools", "tool_choice", "thinking", "stream_options", "response_format", "output_config", "reasoning", "json_schema",
		"description", "input_schema", "parameters", "file", "schema", "format"} {
		m[n] = n
	}
	return m
}()

// name reads an object member name and checks it: where the gateway reads
// the object, keys are the APIs' lower-case ones or something the vendor
// refuses anyway. It returns a name the parser acts on, or "" for any
// other (to be skipped).
func (p *parser) name(where string) (string, error) {
	v, err := p.dec.readValue()
	if err != nil {
		return "", err
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(unquoteValid(v))
	}
	for _, c := range raw {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			n := string(raw)
			return "", fieldErrorf("%s has the key %s: keys are case-sensitive and lower-case (vendors read %s and %s as different keys)", where, echo(n), echo(n), echo(lowerASCII(n)))
		}
	}
	return known[string(raw)], nil
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// str reads a string or null ("" for null); where and field (".role",
// or "") name it in the error, built only then.
func (p *parser) str(where, field string) (string, error) {
	k, err := p.peek()
	if err != nil {
		return "", err
	}
	if k != '"' && k != 'n' {
		return "", fieldErrorf("%s%s must be a string", where, field)
	}
	if k == 'n' {
		_, err := p.dec.readToken()
		return "", err
	}
	return p.dec.readText()
}

// bytesString is b as a string without a copy; b must not be written
// again.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (p *parser) add(src gw.TextSource, s string) {
	if s != "" {
		p.text = append(p.text, gw.Text{Source: src, Text: s})
	}
}

// resolve gives the texts from start on that follow their message's role
// the role's source.
func (p *parser) resolve(start int, src gw.TextSource) {
	for i := start; i < len(p.text); i++ {
		if p.text[i].Source == roleSource {
			p.text[i].Source = src
		}
	}
}

func (p *parser) top() (*Body, error) {
	k, err := p.peek()
	if err != nil {
		return nil, err
	}
	if k != '{' {
		// Still report invalid JSON as such.
		if err := p.dec.skipValue(); err != nil {
			return nil, err
		}
		return nil, fieldErrorf("request body must be a JSON object")
	}
	if _, err := p.dec.readToken(); err != nil {
		return nil, err
	}
	var (
		b                        Body
		hasModel, hasMessages    bool
		maxTokens, maxCompletion *int64
	)
	// The top-level members' spans, read by the scanner as it goes: a
	// member is recorded once its value is read (a member's code may
	// continue the loop).
	sc, _ := p.dec.(*scanner)
	var m rawjson.Member
	nameEnd := -1
	if sc != nil {
		b.Top = make([]rawjson.Member, 0, 8)
	}
	for {
		if nameEnd >= 0 {
			m.ValStart = sc.ws(sc.ws(nameEnd) + 1) // past the colon
			m.ValEnd = sc.pos
			b.Top = append(b.Top, m)
		}
		if ok, err := p.more(); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			break
		}
		if sc != nil {
			m.KeyStart = sc.pos
		}
		n, err := p.name("the request body")
		if err != nil {
			return nil, err
		}
		if sc != nil {
			nameEnd = sc.pos
			if m.Key = n; n == "" {
				m.Key = strings.Clone(unquoteValid(sc.b[m.KeyStart:nameEnd]))
			}
		}
		switch n {
		case "model":
			k, err := p.peek()
			if err != nil {
				return nil, err
			}
			if k == 'n' {
				_, err = p.dec.readToken()
				hasModel = false
				if err != nil {
					return nil, err
				}
				continue
			}
			if k != '"' {
				if err := p.dec.skipValue(); err != nil {
					return nil, err
				}
				return nil, fieldErrorf("model must be a string")
			}
			if b.Model, err = p.str("model", ""); err != nil {
				return nil, err
			}
			// Kept past the request (its record, logs): a copy, not a
			// view that would hold the whole body.
			b.Model = strings.Clone(b.Model)
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
				b.Models = append(b.Models, strings.Clone(m)) // kept past the body, as Model
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
				if _, err := p.dec.readToken(); err != nil {
					return nil, err
				}
				continue
			}
			if k != '[' {
				return nil, fieldErrorf("messages must be an array")
			}
			hasMessages = true
			if b.Messages, err = p.messages(sc); err != nil {
				return nil, err
			}
		case "system":
			if p.shape != gw.ShapeM {
				if err := p.dec.skipValue(); err != nil {
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
			_, err = p.dec.readToken()
			if err != nil {
				return nil, err
			}
			b.Stream = k == 't'
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

// apiObjects are the top-level members, besides messages and system,
// whose objects hold the API's own (lower-case) keys, which the shape
// mappers and billing decode: their keys are checked like the top
// level's, one level down (and in tools[].function and
// response_format.json_schema). Free-form objects below them (schemas,
// tool inputs, metadata) are the caller's data and are not checked.
var apiObjects = map[string]bool{"tool_choice": true, "thinking": true, "stream_options": true, "response_format": true, "output_config": true, "reasoning": true}

// apiMember reads a top-level member the gateway does not use itself,
// checking the keys of the API's objects (see apiObjects).
func (p *parser) apiMember(name string) error {
	switch {
	case name == "tools":
		ok, err := p.open('[', "tools must be an array")
		if err != nil || !ok {
			if _, isField := err.(*fieldError); isField {
				return p.dec.skipValue() // the vendor's to refuse
			}
			return err
		}
		for i := 0; ; i++ {
			if more, err := p.more(); err != nil || !more {
				return err
			}
			if err := p.apiObject(p.join("tools", "", i), "function"); err != nil {
				return err
			}
		}
	case apiObjects[name]:
		return p.apiObject(name, "json_schema")
	}
	return p.dec.skipValue()
}

// apiObject checks the keys of an object of the API (anything else is
// skipped), and one level further in its member named nested.
func (p *parser) apiObject(where, nested string) error {
	k, err := p.peek()
	if err != nil {
		return err
	}
	if k != '{' {
		return p.dec.skipValue()
	}
	if _, err := p.dec.readToken(); err != nil {
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
			err = p.apiObject(p.join(where, "."+n, -1), "")
		case strings.HasPrefix(where, "tools[") && (n == "description" || n == "input_schema" || n == "parameters"):
			// A tool's description and its schema's: third-party text,
			// read by the guard as such.
			var v []byte
			if v, err = p.dec.readValue(); err == nil {
				if n == "description" {
					p.tools = appendDesc(p.tools, v)
				} else {
					p.tools = toolSpec(p.tools, v)
				}
			}
		case where == "response_format.json_schema" && (n == "schema" || n == "description") || where == "output_config" && n == "format":
			// A structured output's schema: its descriptions, titles
			// and enums are read by the model like a tool's.
			var v []byte
			if v, err = p.dec.readValue(); err == nil {
				p.tools = toolSpec(p.tools, v)
				if n == "description" {
					p.tools = appendDesc(p.tools, v)
				}
			}
		default:
			err = p.dec.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// count reads a non-negative integer or null (nil).
func (p *parser) count(field string) (*int64, error) {
	k, err := p.peek()
	if err != nil {
		return nil, err
	}
	if k == 'n' {
		_, err := p.dec.readToken()
		return nil, err
	}
	if k != '0' {
		return nil, fieldErrorf("%s must be a non-negative integer", field)
	}
	v, err := p.dec.readValue()
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return nil, fieldErrorf("%s must be a non-negative integer", field)
	}
	return &n, nil
}
