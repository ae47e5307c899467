package reqbody

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// The messages of M and C bodies: roles, content blocks and parts, tool
// calls; each text is appended to the guard's texts with its source.

// messages reads the messages array and, given the scanner (sc), returns
// its elements' spans, offsets into the array's value (nil for an empty
// array, as rawjson.Elements gives).
func (p *parser) messages(sc *scanner) ([]rawjson.Span, error) {
	var els []rawjson.Span
	vs := 0
	if sc != nil {
		vs = sc.pos // peeked: the '['
	}
	if _, err := p.dec.readToken(); err != nil { // [
		return nil, err
	}
	err := p.elements("messages", func(where string) error {
		start := 0
		if sc != nil {
			start = sc.pos // peeked by more: the element's first byte
		}
		if err := p.object(where, "an object"); err != nil {
			return err
		}
		var err error
		if p.shape == gw.ShapeM {
			err = p.mMessage(where)
		} else {
			err = p.cMessage(where)
		}
		if sc != nil && err == nil {
			if els == nil {
				els = make([]rawjson.Span, 0, 16)
			}
			els = append(els, rawjson.Span{Start: start - vs, End: sc.pos - vs})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return els, nil
}

func (p *parser) mMessage(where string) error {
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
			if err := p.mContent(roleSource, p.join(where, ".content", -1)); err != nil {
				return err
			}
		default:
			if err := p.dec.skipValue(); err != nil {
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
func (p *parser) mContent(src gw.TextSource, where string) error {
	return p.content(src, where, "content blocks", func(where string) error { return p.mBlock(src, where) })
}

// pending is a block member read before the block's type was known.
type pending struct {
	name string
	raw  []byte
}

// mBlock reads one content block. Members whose meaning depends on the
// type are read in place when the type came first (as every SDK sends
// it), else kept and read at the block's end.
func (p *parser) mBlock(src gw.TextSource, where string) error {
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
				v, err := p.dec.readValue()
				if err != nil {
					return err
				}
				later = append(later, pending{n, v})
				return nil
			}
			if err := p.blockMember(typ, n, where); err != nil {
				return err
			}
		default:
			if err := p.dec.skipValue(); err != nil {
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
		sub := &parser{dec: newScanner(l.raw), shape: p.shape, text: p.text}
		if err := sub.blockMember(typ, l.name, where); err != nil {
			return err
		}
		p.text = sub.text
	}
	return nil
}

func appendText(t []gw.Text, src gw.TextSource, s string) []gw.Text {
	if s == "" {
		return t
	}
	return append(t, gw.Text{Source: src, Text: s})
}

// blockMember reads a block's content, source or input, knowing its
// type.
func (p *parser) blockMember(typ, name, where string) error {
	switch {
	case name == "input" && (typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use"):
		v, err := p.dec.readValue()
		if err != nil {
			return err
		}
		if s := string(bytes.TrimSpace(v)); s != "null" {
			p.add(gw.TextAssistant, s)
		}
		return nil
	case name == "content" && (typ == "tool_result" || typ == "search_result" || typ == "mcp_tool_result"):
		// an MCP server's output is third-party text like a tool's
		return p.mContent(gw.TextTool, p.join(where, ".content", -1))
	case name == "source" && typ == "document":
		return p.docSource(p.join(where, ".source", -1))
	}
	return p.dec.skipValue()
}

// docSource reads a document's source: text data or nested content.
func (p *parser) docSource(where string) error {
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
				if err := p.mContent(gw.TextTool, p.join(where, ".content", -1)); err != nil {
					return err
				}
				return nil
			}
			v, err := p.dec.readValue()
			if err != nil {
				return err
			}
			if !typed {
				content = v
			}
		default:
			if err := p.dec.skipValue(); err != nil {
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
		sub := &parser{dec: newScanner(content), shape: p.shape, text: p.text}
		if err := sub.mContent(gw.TextTool, sub.join(where, ".content", -1)); err != nil {
			return err
		}
		p.text = sub.text
	}
	return nil
}

func (p *parser) cMessage(where string) error {
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
			if err := p.cContent(p.join(where, ".content", -1)); err != nil {
				return err
			}
		case "refusal":
			s, err := p.str(where, ".refusal")
			if err != nil {
				return err
			}
			p.add(roleSource, s)
		case "tool_calls":
			if err := p.cToolCalls(p.join(where, ".tool_calls", -1)); err != nil {
				return err
			}
		case "function_call":
			ok, err := p.open('{', where, ".function_call must be an object")
			if err != nil {
				return err
			}
			if ok {
				if err := p.cFunction(p.join(where, ".function_call", -1)); err != nil {
					return err
				}
			}
		default:
			if err := p.dec.skipValue(); err != nil {
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

func (p *parser) cContent(where string) error {
	return p.content(roleSource, where, "content parts", p.cPart)
}

// cPart reads one content part: its text and refusal are text of the
// message's role.
func (p *parser) cPart(where string) error {
	if err := p.object(where, "a content part object"); err != nil {
		return err
	}
	var text, refusal string
	var files []gw.Text
	err := p.members(where, func(n string) error {
		var err error
		switch n {
		case "text":
			text, err = p.str(where, ".text")
		case "refusal":
			refusal, err = p.str(where, ".refusal")
		case "type":
			_, err = p.str(where, ".type")
		case "file":
			// a file's name and, when it is text, its content: read
			// by the model like a document
			var v []byte
			if v, err = p.dec.readValue(); err == nil {
				var f struct {
					Filename string `json:"filename"`
					FileData string `json:"file_data"`
				}
				if json.Unmarshal(v, &f) == nil {
					files = FileText(files, f.Filename, "", f.FileData)
				}
			}
		default:
			err = p.dec.skipValue()
		}
		return err
	})
	p.add(roleSource, text)
	p.add(roleSource, refusal)
	p.text = append(p.text, files...)
	return err
}

func (p *parser) cToolCalls(where string) error {
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
				return p.dec.skipValue()
			}
			ok, err := p.open('{', tw, ".function must be an object")
			if err != nil || !ok {
				return err
			}
			return p.cFunction(p.join(tw, ".function", -1))
		})
	})
}

// cFunction reads a function call object's members (its "{" read).
func (p *parser) cFunction(where string) error {
	return p.members(where, func(n string) error {
		if n != "arguments" {
			return p.dec.skipValue()
		}
		s, err := p.str(where, ".arguments")
		if err != nil {
			return err
		}
		p.add(gw.TextAssistant, s)
		return nil
	})
}
