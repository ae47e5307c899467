package jsonenc

import (
	"encoding/json"
	"testing"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" back \\ nl \n tab \t", "\x00\x1f", "<&>", "\u2028\u2029", "bad \xff utf8", "é漢🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: invalid JSON: %v", s, out, err)
		}
		// encoding/json decodes what it would have encoded: compare with
		// its round trip, which also replaces invalid UTF-8.
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Fatalf("AppendString(%q) decodes to %q, encoding/json to %q", s, back, wantBack)
		}
	})
}
