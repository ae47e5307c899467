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
