package rawjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"unsafe"
)

// Object is a JSON object's bytes and its top-level members, scanned
// once: the stages of a request look members up in it instead of each
// scanning the body again, and an Editor made from it writes their edits
// in one pass.
type Object struct {
	b  []byte
	ms []Member
	el known
}

// known is the element spans of one array value, a slice of the object's
// bytes, found before (KnowElements): Editor.Elements gives them without
// a scan while that value is not edited.
type known struct {
	v   []byte
	els []Span
}

// NewObject scans the top level of the JSON object b (Members).
func NewObject(b []byte) (*Object, error) {
	ms, err := Members(b)
	if err != nil {
		return nil, err
	}
	return &Object{b: b, ms: ms}, nil
}

// ObjectFrom is the Object of b whose top-level members ms (as Members
// gives them) are already known: nothing is scanned.
func ObjectFrom(b []byte, ms []Member) *Object { return &Object{b: b, ms: ms} }

// KnowElements records els, the elements of the array value of the last
// member named key as Elements gives them (offsets into that value),
// found before: Editor.Elements then gives them for that value, while no
// edit changes it, without a scan. Nil els, or no such member: nothing is
// recorded.
func (o *Object) KnowElements(key string, els []Span) {
	if v := o.Get(key); v != nil && els != nil {
		o.el = known{v: v, els: els}
	}
}

// Bytes returns the object's bytes.
func (o *Object) Bytes() []byte { return o.b }

// Members returns the top-level members, in order (not to be changed).
func (o *Object) Members() []Member { return o.ms }

// Get returns the raw value of the last member named key (the one
// encoding/json would keep), or nil: Get(o.Bytes(), key) without a scan.
func (o *Object) Get(key string) []byte { return Value(o.b, o.ms, key) }

// Last returns the last member named key.
func (o *Object) Last(key string) (Member, bool) {
	for i := len(o.ms) - 1; i >= 0; i-- {
		if o.ms[i].Key == key {
			return o.ms[i], true
		}
	}
	return Member{}, false
}

// Edit returns an Editor of the object; the object is left as it is.
func (o *Object) Edit() *Editor {
	e := &Editor{n: len(o.b), ms: slices.Clone(o.ms), el: o.el}
	if len(o.b) > 0 {
		e.pieces = append(e.pieces, o.b)
	}
	// The closing brace follows the last value (or the opening brace)
	// after whitespace: Members found it there.
	at := skipWS(o.b, 0) + 1
	if len(o.ms) > 0 {
		at = o.ms[len(o.ms)-1].ValEnd
	}
	e.close = skipWS(o.b, at)
	return e
}

// Editor edits an Object as Set, Delete and Splice would, one after the
// other, but copies nothing until Bytes: the edited document is kept as
// pieces (the object's own bytes and the new ones) and its members are
// moved with each edit instead of found by another scan. Values given to
// it (Set, EditValue) must each be one JSON value without whitespace
// around it, as every value Set is given in the gateway is: the members
// it keeps are then those Members would find in Bytes.
type Editor struct {
	pieces [][]byte
	n      int      // the document's length
	ms     []Member // its members, offsets into the document
	close  int      // the offset of the object's closing brace
	el     known    // the object's known elements (KnowElements)
}

// Elements is Elements(v) for v a value of the edited document (Value):
// the spans the object was told (KnowElements) when v is that value,
// unedited (the same bytes of the object, not a copy), else a scan of v.
// The spans are not to be changed.
func (e *Editor) Elements(v []byte) ([]Span, error) {
	if k := e.el; len(v) > 0 && len(v) == len(k.v) && unsafe.SliceData(v) == unsafe.SliceData(k.v) {
		return k.els, nil
	}
	return Elements(v)
}

// Len is the length of the edited document.
func (e *Editor) Len() int { return e.n }

// Members returns the edited document's members (not to be changed).
func (e *Editor) Members() []Member { return e.ms }

// Value returns the raw value of the last member named key in the edited
// document, or nil. It is a slice of the object's bytes (or of a value
// set) unless edits split it.
func (e *Editor) Value(key string) []byte {
	for i := len(e.ms) - 1; i >= 0; i-- {
		if e.ms[i].Key == key {
			return e.slice(e.ms[i].ValStart, e.ms[i].ValEnd)
		}
	}
	return nil
}

// Set gives every member named key the raw JSON value v, or appends the
// member when there is none: Set(key, v) of the edited document.
func (e *Editor) Set(key string, v []byte) {
	found := false
	for i := range e.ms {
		if e.ms[i].Key != key {
			continue
		}
		found = true
		m := e.ms[i]
		e.replace(m.ValStart, m.ValEnd, v)
	}
	if found {
		return
	}
	// Before the last closing brace, as Set appends.
	end := e.lastIndexByte('}')
	kq, _ := json.Marshal(key)
	t := make([]byte, 0, len(kq)+len(v)+2)
	if len(e.ms) > 0 {
		t = append(t, ',')
	}
	ks := end + len(t)
	t = append(t, kq...)
	t = append(t, ':')
	vs := end + len(t)
	t = append(t, v...)
	track := end == e.close
	e.replace(end, end, t)
	if track {
		// A brace past the object's own (bytes Members does not read)
		// takes the member outside the object, where Members never sees
		// it.
		k, _ := decodeKey(kq)
		e.ms = append(e.ms, Member{Key: k, KeyStart: ks, ValStart: vs, ValEnd: vs + len(v)})
	}
}

// Delete removes the first member named key, with the separator Delete
// removes: Delete(key) of the edited document.
func (e *Editor) Delete(key string) {
	for i, m := range e.ms {
		if m.Key != key {
			continue
		}
		switch {
		case i > 0:
			e.replace(e.ms[i-1].ValEnd, m.ValEnd, nil)
		case len(e.ms) > 1:
			e.replace(m.KeyStart, e.ms[1].KeyStart, nil)
		default:
			e.replace(m.KeyStart, m.ValEnd, nil)
		}
		e.ms = slices.Delete(e.ms, i, i+1)
		return
	}
}

// EditValue applies edits to the value of the last member named key:
// their offsets are into that value (Value(key)), sorted and not
// overlapping, as Splice takes them, and what they make of it is one JSON
// value. It reports whether there is such a member.
func (e *Editor) EditValue(key string, edits ...Edit) bool {
	i := len(e.ms) - 1
	for i >= 0 && e.ms[i].Key != key {
		i--
	}
	if i < 0 {
		return false
	}
	vs, ve, n := e.ms[i].ValStart, e.ms[i].ValEnd, e.n
	// From the last, so that each offset still holds.
	for j := len(edits) - 1; j >= 0; j-- {
		ed := edits[j]
		e.replace(vs+ed.Start, vs+ed.End, ed.Text)
	}
	// Text inserted at the value's start or end is in it.
	e.ms[i].ValStart = vs
	e.ms[i].ValEnd = ve + e.n - n
	return true
}

// Contains reports whether the edited document holds sub.
func (e *Editor) Contains(sub []byte) bool {
	for _, p := range e.pieces {
		if bytes.Contains(p, sub) {
			return true
		}
	}
	if len(sub) < 2 || len(e.pieces) < 2 {
		return false
	}
	// A match across pieces lies within len(sub)-1 bytes of a seam.
	k := len(sub) - 1
	at := 0
	for _, p := range e.pieces[:len(e.pieces)-1] {
		at += len(p)
		if bytes.Contains(e.slice(max(at-k, 0), min(at+k, e.n)), sub) {
			return true
		}
	}
	return false
}

// Bytes writes the edited document: one copy of the object's bytes with
// the edits in place, or the bytes themselves when nothing was edited.
func (e *Editor) Bytes() []byte {
	switch len(e.pieces) {
	case 0:
		return nil
	case 1:
		return e.pieces[0]
	}
	out := make([]byte, 0, e.n)
	for _, p := range e.pieces {
		out = append(out, p...)
	}
	return out
}

// Object is Bytes with its members, found without a scan.
func (e *Editor) Object() *Object {
	return &Object{b: e.Bytes(), ms: slices.Clone(e.ms)}
}

// replace replaces the document's bytes [s, end) with t and moves the
// members (and the closing brace) at or past end by the change in length.
func (e *Editor) replace(s, end int, t []byte) {
	if s == end && len(t) == 0 {
		return
	}
	i := e.cut(s)
	j := e.cut(end)
	var mid [][]byte
	if len(t) > 0 {
		mid = [][]byte{t}
	}
	e.pieces = slices.Replace(e.pieces, i, j, mid...)
	d := len(t) - (end - s)
	e.n += d
	if d == 0 {
		return
	}
	for k := range e.ms {
		m := &e.ms[k]
		if m.KeyStart >= end {
			m.KeyStart += d
		}
		if m.ValStart >= end {
			m.ValStart += d
		}
		if m.ValEnd >= end && m.ValEnd > s { // text inserted at a value's end is past it
			m.ValEnd += d
		}
	}
	if e.close >= end {
		e.close += d
	}
}

// cut splits the pieces at offset at and returns the index of the first
// piece at or past it.
func (e *Editor) cut(at int) int {
	pos := 0
	for i, p := range e.pieces {
		if pos == at {
			return i
		}
		if at < pos+len(p) {
			k := at - pos
			e.pieces = slices.Insert(e.pieces, i+1, p[k:])
			e.pieces[i] = p[:k:k]
			return i + 1
		}
		pos += len(p)
	}
	return len(e.pieces)
}

// slice returns the document's bytes [s, end): a slice of one piece when
// they lie in one, else a copy.
func (e *Editor) slice(s, end int) []byte {
	pos := 0
	var out []byte
	for _, p := range e.pieces {
		ps, pe := pos, pos+len(p)
		pos = pe
		if pe <= s {
			continue
		}
		if ps >= end {
			break
		}
		part := p[max(s-ps, 0):min(end-ps, len(p))]
		if out == nil && ps <= s && end <= pe {
			return part
		}
		if out == nil {
			out = make([]byte, 0, end-s)
		}
		out = append(out, part...)
	}
	return out
}

// lastIndexByte is the offset of the document's last c, or -1.
func (e *Editor) lastIndexByte(c byte) int {
	pos := e.n
	for i := len(e.pieces) - 1; i >= 0; i-- {
		p := e.pieces[i]
		pos -= len(p)
		if j := bytes.LastIndexByte(p, c); j >= 0 {
			return pos + j
		}
	}
	return -1
}
