package rawjson

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// SetAll gives, byte for byte, what Set gives for each member in turn,
// and Value what Get gives: on objects with duplicate keys, escaped
// keys, whitespace and nesting, setting members they hold and lack.
func TestSetAllMatchesSetInTurn(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 3))
	keys := []string{"model", "stream_options", "prompt_cache_key", "messages", "a<b", "m\u00f6del"}
	rawKeys := []string{`"model"`, `"stream_options"`, `"prompt_cache_key"`, `"messages"`, `"a<b"`, `"m\u00f6del"`, `"mod\u0065l"`, `"other"`}
	values := []string{`1`, `"x"`, `{"include_usage":true}`, `[{"role":"user","content":"hi \"there\""}]`, `null`, `{}`}
	for range 20000 {
		var b bytes.Buffer
		b.WriteString([]string{"{", " {", "{\n  "}[r.IntN(3)])
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteString([]string{",", ", ", " ,\n"}[r.IntN(3)])
			}
			b.WriteString(rawKeys[r.IntN(len(rawKeys))])
			b.WriteString([]string{":", ": ", " : "}[r.IntN(3)])
			b.WriteString(values[r.IntN(len(values))])
		}
		b.WriteString([]string{"}", " }", "\n}\n"}[r.IntN(3)])
		body := b.Bytes()
		ms, err := Members(body)
		if err != nil {
			t.Fatalf("Members(%s): %v", body, err)
		}
		var sets []KV
		want := body
		for range r.IntN(4) {
			kv := KV{Key: keys[r.IntN(len(keys))], Value: []byte(values[r.IntN(len(values))])}
			sets = append(sets, kv)
			if want, err = Set(want, kv.Key, kv.Value); err != nil {
				t.Fatalf("Set: %v", err)
			}
		}
		if got := SetAll(body, ms, sets...); !bytes.Equal(got, want) {
			t.Fatalf("SetAll(%s, %q):\n got %s\nwant %s", body, sets, got, want)
		}
		for _, k := range keys {
			if got, want := Value(body, ms, k), Get(body, k); !bytes.Equal(got, want) {
				t.Fatalf("Value(%s, %q) = %s, want %s", body, k, got, want)
			}
		}
	}
}
