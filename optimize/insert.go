package optimize

import (
	"encoding/json"
	"fmt"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// textJSON is Text as a JSON string.
var textJSON, _ = json.Marshal(Text)

// Segment returns the bytes Apply inserts for a vendor shape: the
// directive as one system block (M), system message (C, role "system") or
// systemInstruction part (G).
func Segment(shape gw.Shape) []byte {
	switch shape {
	case gw.ShapeM:
		return segM()
	case gw.ShapeC:
		return segC("system")
	case gw.ShapeG:
		return segG()
	}
	return nil
}

func segM() []byte { return concat(`{"type":"text","text":`, textJSON, `}`) }
func segG() []byte { return concat(`{"text":`, textJSON, `}`) }
func segC(role string) []byte {
	return concat(`{"role":"`+role+`","content":`, textJSON, `}`)
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
	var out []byte
	var err error
	switch shape {
	case gw.ShapeM:
		out, err = applyM(body)
	case gw.ShapeC:
		out, err = applyC(body)
	case gw.ShapeG:
		out, err = applyG(body)
	case gw.ShapeR:
		out, err = applyR(body)
	default:
		return nil, fmt.Errorf("optimize: unknown shape %q", shape)
	}
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: err.Error(), Err: err}
	}
	return out, nil
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

// appendTo inserts seg as the last element of the array arr, which starts
// at offset off of the document.
func appendTo(arr []byte, off int, seg []byte) (rawjson.Edit, error) {
	els, err := rawjson.Elements(arr)
	if err != nil {
		return rawjson.Edit{}, err
	}
	if len(els) == 0 {
		return rawjson.Edit{Start: off, End: off + len(arr), Text: concat("[", seg, "]")}, nil
	}
	at := off + els[len(els)-1].End
	return rawjson.Edit{Start: at, End: at, Text: concat(",", seg, "")}, nil
}

func applyM(body []byte) ([]byte, error) {
	ms, err := rawjson.Members(body)
	if err != nil {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	seg := segM()
	m, ok := last(ms, "system")
	if !ok {
		return rawjson.Set(body, "system", concat("[", seg, "]"))
	}
	v := body[m.ValStart:m.ValEnd]
	switch v[0] {
	case 'n': // null: no system
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: concat("[", seg, "]")}), nil
	case '"':
		if string(v) == `""` {
			// An empty text block is refused by the vendor; an empty
			// system is no system.
			return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: concat("[", seg, "]")}), nil
		}
		// The caller's string, byte for byte, as the first block.
		t := concat(`[{"type":"text","text":`, v, `},`)
		t = append(t, seg...)
		t = append(t, ']')
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: t}), nil
	case '[':
		e, err := appendTo(v, m.ValStart, seg)
		if err != nil {
			return nil, fmt.Errorf("system: malformed array")
		}
		return rawjson.Splice(body, e), nil
	}
	return nil, fmt.Errorf("system must be a string or an array of text blocks")
}

func applyC(body []byte) ([]byte, error) {
	ms, err := rawjson.Members(body)
	if err != nil {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	m, ok := last(ms, "messages")
	if !ok {
		return nil, fmt.Errorf("messages is required")
	}
	arr := body[m.ValStart:m.ValEnd]
	els, err := rawjson.Elements(arr)
	if err != nil {
		return nil, fmt.Errorf("messages must be an array")
	}
	lead, role := 0, "system"
	for _, e := range els {
		r := roleOf(arr[e.Start:e.End])
		if r != "system" && r != "developer" {
			break
		}
		lead, role = lead+1, r
	}
	seg := segC(role)
	switch {
	case len(els) == 0:
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: concat("[", seg, "]")}), nil
	case lead == 0:
		at := m.ValStart + els[0].Start
		return rawjson.Splice(body, rawjson.Edit{Start: at, End: at, Text: concat("", seg, ",")}), nil
	}
	at := m.ValStart + els[lead-1].End
	return rawjson.Splice(body, rawjson.Edit{Start: at, End: at, Text: concat(",", seg, "")}), nil
}

func applyG(body []byte) ([]byte, error) {
	ms, err := rawjson.Members(body)
	if err != nil {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	seg := segG()
	m, ok := last(ms, "systemInstruction")
	if !ok || body[m.ValStart] == 'n' {
		v := concat(`{"parts":[`, seg, `]}`)
		if ok {
			return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: v}), nil
		}
		return rawjson.Set(body, "systemInstruction", v)
	}
	si := body[m.ValStart:m.ValEnd]
	sms, err := rawjson.Members(si)
	if err != nil {
		return nil, fmt.Errorf("systemInstruction must be an object")
	}
	p, ok := last(sms, "parts")
	if !ok {
		v, err := rawjson.Set(si, "parts", concat("[", seg, "]"))
		if err != nil {
			return nil, err
		}
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: v}), nil
	}
	e, err := appendTo(si[p.ValStart:p.ValEnd], m.ValStart+p.ValStart, seg)
	if err != nil {
		return nil, fmt.Errorf("systemInstruction.parts must be an array")
	}
	return rawjson.Splice(body, e), nil
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
func applyR(body []byte) ([]byte, error) {
	ms, err := rawjson.Members(body)
	if err != nil {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	m, ok := last(ms, "instructions")
	if !ok {
		return rawjson.Set(body, "instructions", textJSON)
	}
	v := body[m.ValStart:m.ValEnd]
	switch v[0] {
	case 'n':
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: textJSON}), nil
	case '"':
		var caller string
		if err := json.Unmarshal(v, &caller); err != nil {
			return nil, fmt.Errorf("instructions must be a string")
		}
		if caller == "" {
			return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: textJSON}), nil
		}
		joined, err := json.Marshal(caller + "\n\n" + Text)
		if err != nil {
			return nil, err
		}
		return rawjson.Splice(body, rawjson.Edit{Start: m.ValStart, End: m.ValEnd, Text: joined}), nil
	}
	return nil, fmt.Errorf("instructions must be a string")
}
