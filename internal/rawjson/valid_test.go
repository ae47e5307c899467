package rawjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var validCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{,}`, `[1,]`, `[,1]`, `[1 2]`,
	`"x"`, `"x`, `"\"`, `"\u00e9"`, `"\u00G9"`, `"\u00e"`, `"\x"`, `"\/"`, "\"\x01\"", "\"\x7f\xff\xfe\"",
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `-1.5e10`, `1.5e`, `2.`, `--1`, `+1`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nulll`, `True`,
	`{"a":[1,{"b":null}],"c":"d"}`, `{"a":[1,{"b":null}],"c":"d"`, `{"a":[1,{"b":null]}}`, `[{]`, `[}`, `{]`,
	"{\"a\":1}\n", "\t[1,\r\n2]", `{} {}`, `1 2`, `{"a":1}}`, `[[[]]]`, `[[[]]`,
	`{"k\"ey":1}`, `{1:2}`, `{"a":1 "b":2}`, `[1,2,3,4,5,6,7,8,9,10]`,
}

func TestValid(t *testing.T) {
	for _, in := range validCases {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
	// The nesting limit, empty innermost containers counted too.
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, in := range []string{strings.Repeat("[", n) + strings.Repeat("]", n), strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)} {
			if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
				t.Errorf("depth %d (%.10s...): Valid = %v, encoding/json says %v", n, in, got, want)
			}
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-6-sol","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("A fairly ordinary sentence of an answer. ", 48) +
		`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":480,"total_tokens":600,"prompt_tokens_details":{"cached_tokens":64}}}`)
	b.Run("rawjson", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}

func TestDecodeMembers(t *testing.T) {
	type inner struct {
		A *int `json:"a"`
		B int  `json:"b"`
	}
	type whole struct {
		Usage *inner          `json:"usage"`
		Tier  string          `json:"service_tier"`
		Raw   json.RawMessage `json:"raw"`
	}
	for _, in := range []string{
		`{"usage":{"a":1,"b":2},"service_tier":"flex","other":[1,{"x":"y"}]}`,
		`{"USAGE":{"a":1},"usage":{"b":3}}`, // merged into one object, in order
		`{"usage":{"a":1},"usage":null}`,
		`{"Service_Tier":"x","service_tier":"y","raw":{"k":[1,2]}}`,
		`{"usage":{"a":"no"}}`, `{"usage":5}`, `{}`, `null`, `[1]`, `{"usage":{}`, `{"usage":{"a":1}} x`,
	} {
		var want, got whole
		werr := json.Unmarshal([]byte(in), &want)
		ok, gerr := DecodeMembers([]byte(in), Field{"usage", &got.Usage}, Field{"service_tier", &got.Tier}, Field{"raw", &got.Raw})
		if !ok {
			gerr = json.Unmarshal([]byte(in), &got)
		}
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, encoding/json %v", in, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, encoding/json %+v", in, got, want)
		}
	}
}
