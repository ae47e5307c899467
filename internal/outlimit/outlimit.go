// Package outlimit reads and sets the output limit of a vendor request
// body exactly as the vendor reads it, for sizing the hold on the
// caller's balance: how many answers the vendor generates (n,
// candidateCount) and the most tokens each may have (the largest of every
// output-limit field the vendor honours).
//
// Keys are matched case-sensitively, as the vendors do. A limit field
// that appears twice, or beside a case variant of its name (MAX_TOKENS
// beside max_tokens), is ambiguous: vendors and JSON libraries disagree
// on which one wins, so Read refuses it rather than guess low.
package outlimit

import (
	"fmt"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Limits are the output bounds of one request body.
type Limits struct {
	// MaxOutput is the largest output-limit field's value per answer, 0
	// when the body has none.
	MaxOutput int64
	// Choices is the number of answers asked for, at least 1.
	Choices int64
	// Field is the name of the field MaxOutput came from.
	Field string
}

// fields lists, per vendor shape, the output-limit fields and the
// answer-count field the vendors of that shape honour. For the C shape
// it is the union over OpenAI and the OpenAI-compatible vendors (some
// read max_tokens, some max_completion_tokens, some both): the hold
// takes the largest.
var fields = withNames(map[gw.Shape]*spec{
	gw.ShapeC: {limits: []string{"max_tokens", "max_completion_tokens"}, count: "n"},
	gw.ShapeM: {limits: []string{"max_tokens"}},
	gw.ShapeR: {limits: []string{"max_output_tokens"}},
	gw.ShapeG: {limits: []string{"maxOutputTokens", "max_output_tokens"}, count: "candidateCount", nested: "generationConfig"},
})

type spec struct {
	limits []string
	count  string
	nested string // the object holding them, "" for top level
	// names are the count and the limits (Gemini's candidate_count
	// too), "" for none; slot[i] is the first of names that folds as
	// names[i] does: names that fold alike set the same limit.
	names []string
	slot  []int
}

// withNames fills each spec's names and slots.
func withNames(m map[gw.Shape]*spec) map[gw.Shape]*spec {
	for shape, f := range m {
		f.names = append([]string{f.count}, f.limits...)
		if shape == gw.ShapeG {
			f.names = append(f.names, "candidate_count")
		}
		for i, n := range f.names {
			f.slot = append(f.slot, i)
			for j := range i {
				if fold(f.names[j]) == fold(n) {
					f.slot[i] = j
					break
				}
			}
		}
	}
	return m
}

// Read returns the limits of body, a request in the vendor shape shape.
// A body that is not a JSON object, a limit that is not a non-negative
// integer, and an ambiguous field are *gw.Error invalid_request.
func Read(shape gw.Shape, body []byte) (Limits, error) {
	if _, ok := fields[shape]; !ok {
		return Limits{Choices: 1}, nil
	}
	ms, err := members(body)
	if err != nil {
		return Limits{Choices: 1}, err
	}
	return ReadObject(shape, rawjson.ObjectFrom(body, ms))
}

// ReadObject is Read for a body whose members are known: only a nested
// limits object (Gemini's generationConfig) is scanned.
func ReadObject(shape gw.Shape, body *rawjson.Object) (Limits, error) {
	l := Limits{Choices: 1}
	f, ok := fields[shape]
	if !ok {
		return l, nil
	}
	obj, ms := body.Bytes(), body.Members()
	if f.nested != "" {
		obj = body.Get(f.nested)
		if obj == nil || string(obj) == "null" {
			return l, nil
		}
		var err error
		if ms, err = members(obj); err != nil {
			return l, err
		}
	}
	var seen [8]string // by slot: the exact key seen
	var set [8]bool
	for _, m := range ms {
		var name string
		slot := -1
		for i, n := range f.names {
			if n != "" && foldEqual(m.Key, n) {
				name, slot = n, f.slot[i]
				if n == m.Key {
					break
				}
			}
		}
		if name == "" {
			continue
		}
		if set[slot] {
			return l, gw.Errorf(gw.CodeInvalidRequest, "%q and %q both set the same limit; send it once", seen[slot], m.Key)
		}
		seen[slot], set[slot] = m.Key, true
		if m.Key != name {
			return l, gw.Errorf(gw.CodeInvalidRequest, "%q is not a field; the output limit is %q", m.Key, name)
		}
		raw := obj[m.ValStart:m.ValEnd]
		if string(raw) == "null" {
			continue
		}
		v, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || v < 0 {
			return l, gw.Errorf(gw.CodeInvalidRequest, "%s must be a non-negative integer", m.Key)
		}
		if name == f.count || name == "candidate_count" {
			l.Choices = max(v, 1)
			continue
		}
		if v > l.MaxOutput {
			l.MaxOutput, l.Field = v, m.Key
		}
	}
	return l, nil
}

// fold is a key as a lenient parser may read it: case and underscores
// ignored (Gemini's JSON reads both maxOutputTokens and
// max_output_tokens).
func fold(k string) string { return strings.ReplaceAll(strings.ToLower(k), "_", "") }

// foldEqual is fold(k) == fold(name) for an ASCII name, without
// allocating when k is ASCII too.
func foldEqual(k, name string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return fold(k) == fold(name)
		}
	}
	i, j := 0, 0
	for {
		for i < len(k) && k[i] == '_' {
			i++
		}
		for j < len(name) && name[j] == '_' {
			j++
		}
		if i == len(k) || j == len(name) {
			return i == len(k) && j == len(name)
		}
		if lowerASCII(k[i]) != lowerASCII(name[j]) {
			return false
		}
		i, j = i+1, j+1
	}
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func members(b []byte) ([]rawjson.Member, error) {
	ms, err := rawjson.Members(b)
	if err != nil {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "request body must be a JSON object")
	}
	return ms, nil
}

// Set returns body with its output limit set to n in the field the
// vendor reads: max_completion_tokens for OpenAI (its reasoning models
// refuse max_tokens), max_tokens for the other C vendors and Anthropic.
// It is for top-level shapes only (C and M); a Gemini body is limited
// through the canonical request before it is encoded.
func Set(shape gw.Shape, vendor string, body []byte, n int64) ([]byte, error) {
	switch shape {
	case gw.ShapeM, gw.ShapeR, gw.ShapeC:
	default:
		return nil, fmt.Errorf("outlimit: cannot set a limit on a %s body", shape)
	}
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return nil, err
	}
	e := obj.Edit()
	if err := SetEdit(shape, vendor, e, n); err != nil {
		return nil, err
	}
	return e.Bytes(), nil
}

// SetEdit is Set on an edit of the body.
func SetEdit(shape gw.Shape, vendor string, e *rawjson.Editor, n int64) error {
	v := []byte(strconv.FormatInt(n, 10))
	switch shape {
	case gw.ShapeM:
		e.Set("max_tokens", v)
		return nil
	case gw.ShapeR:
		e.Set("max_output_tokens", v)
		return nil
	case gw.ShapeC:
		field := "max_tokens"
		if vendor == "openai" {
			field = "max_completion_tokens"
		}
		e.Set(field, v)
		// The other limit field, if present, would be larger.
		for _, other := range fields[gw.ShapeC].limits {
			if other != field && e.Value(other) != nil {
				e.Set(other, v)
			}
		}
		return nil
	}
	return fmt.Errorf("outlimit: cannot set a limit on a %s body", shape)
}
