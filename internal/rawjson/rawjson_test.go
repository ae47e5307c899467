package rawjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name, in, key, val, want string
	}{
		{"replace", `{"model":"openai/gpt-4.1","messages":[]}`, "model", `"gpt-4.1"`, `{"model":"gpt-4.1","messages":[]}`},
		{"keeps spacing", "{ \"a\" : 1 ,\n \"model\" :\t\"x/y\" }", "model", `"y"`, "{ \"a\" : 1 ,\n \"model\" :\t\"y\" }"},
		{"nested model untouched", `{"metadata":{"model":"keep"},"model":"a/b"}`, "model", `"b"`, `{"metadata":{"model":"keep"},"model":"b"}`},
		{"duplicates all replaced", `{"model":"a/b","model":"c/d"}`, "model", `"z"`, `{"model":"z","model":"z"}`},
		{"append", `{"stream":true}`, "stream_options", `{"include_usage":true}`, `{"stream":true,"stream_options":{"include_usage":true}}`},
		{"append empty", `{ }`, "a", `1`, `{ "a":1}`},
		{"escaped key", `{"mo\u0064el":"a/b"}`, "model", `"b"`, `{"mo\u0064el":"b"}`},
		{"strings with braces", `{"x":"}{\"","model":"a/b"}`, "model", `"b"`, `{"x":"}{\"","model":"b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Set([]byte(tt.in), tt.key, []byte(tt.val))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestMembersErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"a"}`, `{"a":}`, `{"a":1`, `{"a":"x}`, `{"a":1 "b":2}`} {
		if _, err := Members([]byte(in)); err == nil {
			t.Errorf("Members(%q): no error", in)
		}
	}
}

func FuzzSet(f *testing.F) {
	for _, s := range []string{`{"model":"a/b"}`, `{"a":[1,{"b":"}"}],"model":null}`, `{}`, ` {"x" : "\"" } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var orig map[string]any
		if json.Unmarshal(in, &orig) != nil {
			return
		}
		out, err := Set(in, "model", []byte(`"m"`))
		if err != nil {
			t.Fatalf("Set on valid object %q: %v", in, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("Set produced invalid JSON %q from %q: %v", out, in, err)
		}
		orig["model"] = "m"
		if !reflect.DeepEqual(got, orig) {
			t.Fatalf("Set changed more than model: %v vs %v", got, orig)
		}
	})
}

func TestElementsAndSplice(t *testing.T) {
	b := []byte(` [ {"a":[1,2]} , "x,]" ,3 ] `)
	got, err := Elements(b)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, s := range got {
		vals = append(vals, string(b[s.Start:s.End]))
	}
	want := []string{`{"a":[1,2]}`, `"x,]"`, `3`}
	if !reflect.DeepEqual(vals, want) {
		t.Fatalf("Elements = %q, want %q", vals, want)
	}
	out := Splice(b, Edit{Start: got[0].Start, End: got[0].Start, Text: []byte(`0,`)}, Edit{Start: got[2].Start, End: got[2].End, Text: []byte(`4`)})
	if string(out) != ` [ 0,{"a":[1,2]} , "x,]" ,4 ] ` {
		t.Errorf("Splice = %s", out)
	}
	for _, in := range []string{``, `{}`, `[1`, `[1 2]`, `[,1]`} {
		if _, err := Elements([]byte(in)); err == nil {
			t.Errorf("Elements(%q): no error", in)
		}
	}
	if e, err := Elements([]byte(`[]`)); err != nil || len(e) != 0 {
		t.Errorf("Elements([]) = %v, %v", e, err)
	}
}
