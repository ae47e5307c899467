package optimize

import (
	"encoding/json"
	"fmt"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// textJSON is Text as a JSON string.
var textJSON, _ = json.Marshal(Text)

// dir is the directive inserted: Text, or Text with a request's canary.
type dir struct {
	text string
	json []byte
}

var plain = dir{Text, textJSON}

// Segment returns the bytes Apply inserts for a vendor shape: the
// directive as one system block (M), system message (C, role "system") or
// systemInstruction part (G).
func Segment(shape gw.Shape) []byte {
	switch shape {
	case gw.ShapeM:
		return segM(plain)
	case gw.ShapeC:
		return segC("system", plain)
	case gw.ShapeG:
		return segG(plain)
	}
	return nil
}

func segM(d dir) []byte { return concat(`{"type":"text","text":`, d.json, `}`) }
func segG(d dir) []byte { return concat(`{"text":`, d.json, `}`) }
func segC(role string, d dir) []byte {
	return concat(`{"role":"`+role+`","content":`, d.json, `}`)
}

func concat(a string, b []byte, c string) []byte {
	out := make([]byte, 0, len(a)+len(b)+len(c))
	out = append(out, a...)
	out = append(out, b...)
	return append(out, c...)
}

// Apply returns body, a request in the vendor's shape, with the directive
// inserted after the caller's system content; every other byte is kept.
// A body whose system content has an impossible type is invalid_request.
func Apply(shape gw.Shape, body []byte) ([]byte, error) {
	if _, ok := appliers[shape]; !ok {
		return nil, fmt.Errorf("optimize: unknown shape %q", shape)
	}
	obj, err := rawjson.NewObject(body)
	if err != nil {
		err = fmt.Errorf("request body is not a JSON object")
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: err.Error(), Err: err}
	}
	e := obj.Edit()
	if err := ApplyEdit(shape, e); err != nil {
		return nil, err
	}
	out := e.Bytes()
	if len(out) > 0 && &out[0] == &body[0] {
		out = append([]byte(nil), out...) // Apply always gave a copy
	}
	return out, nil
}

// ApplyEdit is Apply on an edit of the body: it reads the members it
// needs from e and adds its edits to it.
func ApplyEdit(shape gw.Shape, e *rawjson.Editor) error { return applyEdit(shape, e, plain) }

// ApplyEditMarked is ApplyEdit with marker after the directive's text
// (the guard's canary, new for each request).
func ApplyEditMarked(shape gw.Shape, e *rawjson.Editor, marker string) error {
	t := Text + marker
	j, _ := json.Marshal(t)
	return applyEdit(shape, e, dir{t, j})
}

func applyEdit(shape gw.Shape, e *rawjson.Editor, d dir) error {
	apply, ok := appliers[shape]
	if !ok {
		return fmt.Errorf("optimize: unknown shape %q", shape)
	}
	if err := apply(e, d); err != nil {
		return &gw.Error{Code: gw.CodeInvalidRequest, Message: err.Error(), Err: err}
	}
	return nil
}

var appliers = map[gw.Shape]func(*rawjson.Editor, dir) error{
	gw.ShapeM: applyM,
	gw.ShapeC: applyC,
	gw.ShapeG: applyG,
	gw.ShapeR: applyR,
}

// last returns the last top-level member named key (the one a JSON
// decoder keeps).
func last(ms []rawjson.Member, key string) (rawjson.Member, bool) {
	var m rawjson.Member
	found := false
	for _, x := range ms {
		if x.Key == key {
			m, found = x, true
		}
	}
	return m, found
}

// appendTo inserts seg as the last element of the array arr (offsets
// into arr).
func appendTo(arr []byte, seg []byte) (rawjson.Edit, error) {
	els, err := rawjson.Elements(arr)
	if err != nil {
		return rawjson.Edit{}, err
	}
	if len(els) == 0 {
		return rawjson.Edit{Start: 0, End: len(arr), Text: concat("[", seg, "]")}, nil
	}
	at := els[len(els)-1].End
	return rawjson.Edit{Start: at, End: at, Text: concat(",", seg, "")}, nil
}

// whole replaces the whole of a value of n bytes with t.
func whole(n int, t []byte) rawjson.Edit { return rawjson.Edit{Start: 0, End: n, Text: t} }

func applyM(e *rawjson.Editor, d dir) error {
	seg := segM(d)
	v := e.Value("system")
	if v == nil {
		e.Set("system", concat("[", seg, "]"))
		return nil
	}
	switch v[0] {
	case 'n': // null: no system
		e.EditValue("system", whole(len(v), concat("[", seg, "]")))
		return nil
	case '"':
		if string(v) == `""` {
			// An empty text block is refused by the vendor; an empty
			// system is no system.
			e.EditValue("system", whole(len(v), concat("[", seg, "]")))
			return nil
		}
		// The caller's string, byte for byte, as the first block.
		t := concat(`[{"type":"text","text":`, v, `},`)
		t = append(t, seg...)
		t = append(t, ']')
		e.EditValue("system", whole(len(v), t))
		return nil
	case '[':
		ed, err := appendTo(v, seg)
		if err != nil {
			return fmt.Errorf("system: malformed array")
		}
		e.EditValue("system", ed)
		return nil
	}
	return fmt.Errorf("system must be a string or an array of text blocks")
}

func applyC(e *rawjson.Editor, d dir) error {
	arr := e.Value("messages")
	if arr == nil {
		return fmt.Errorf("messages is required")
	}
	// Known without a scan when the parse found them and nothing edited
	// the messages before.
	els, err := e.Elements(arr)
	if err != nil {
		return fmt.Errorf("messages must be an array")
	}
	lead, role := 0, "system"
	for _, el := range els {
		r := roleOf(arr[el.Start:el.End])
		if r != "system" && r != "developer" {
			break
		}
		lead, role = lead+1, r
	}
	seg := segC(role, d)
	switch {
	case len(els) == 0:
		e.EditValue("messages", whole(len(arr), concat("[", seg, "]")))
	case lead == 0:
		at := els[0].Start
		e.EditValue("messages", rawjson.Edit{Start: at, End: at, Text: concat("", seg, ",")})
	default:
		at := els[lead-1].End
		e.EditValue("messages", rawjson.Edit{Start: at, End: at, Text: concat(",", seg, "")})
	}
	return nil
}

func applyG(e *rawjson.Editor, d dir) error {
	seg := segG(d)
	si := e.Value("systemInstruction")
	if si == nil || si[0] == 'n' {
		v := concat(`{"parts":[`, seg, `]}`)
		if si != nil {
			e.EditValue("systemInstruction", whole(len(si), v))
		} else {
			e.Set("systemInstruction", v)
		}
		return nil
	}
	sms, err := rawjson.Members(si)
	if err != nil {
		return fmt.Errorf("systemInstruction must be an object")
	}
	p, ok := last(sms, "parts")
	if !ok {
		v, err := rawjson.Set(si, "parts", concat("[", seg, "]"))
		if err != nil {
			return err
		}
		e.EditValue("systemInstruction", whole(len(si), v))
		return nil
	}
	ed, err := appendTo(si[p.ValStart:p.ValEnd], seg)
	if err != nil {
		return fmt.Errorf("systemInstruction.parts must be an array")
	}
	ed.Start += p.ValStart
	ed.End += p.ValStart
	e.EditValue("systemInstruction", ed)
	return nil
}

// roleOf returns a message's role, decoding only that member (a leading
// system message may be many kilobytes).
func roleOf(msg []byte) string {
	ms, err := rawjson.Members(msg)
	if err != nil {
		return ""
	}
	m, ok := last(ms, "role")
	if !ok {
		return ""
	}
	var r string
	_ = json.Unmarshal(msg[m.ValStart:m.ValEnd], &r)
	return r
}

// applyR adds the directive to a Responses body's instructions: set when
// the caller gave none, else after the caller's own text (a blank line
// between). Instructions, unlike input items, are not carried over to the
// next turn by previous_response_id, so the directive is never repeated
// in a kept conversation.
func applyR(e *rawjson.Editor, d dir) error {
	v := e.Value("instructions")
	if v == nil {
		e.Set("instructions", d.json)
		return nil
	}
	switch v[0] {
	case 'n':
		e.EditValue("instructions", whole(len(v), d.json))
		return nil
	case '"':
		var caller string
		if err := json.Unmarshal(v, &caller); err != nil {
			return fmt.Errorf("instructions must be a string")
		}
		if caller == "" {
			e.EditValue("instructions", whole(len(v), d.json))
			return nil
		}
		joined, err := json.Marshal(caller + "\n\n" + d.text)
		if err != nil {
			return err
		}
		e.EditValue("instructions", whole(len(v), joined))
		return nil
	}
	return fmt.Errorf("instructions must be a string")
}
