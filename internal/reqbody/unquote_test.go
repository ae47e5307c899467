package reqbody

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// checkUnquote: unquote gives what the decoder's own token gives for a
// JSON string the decoder accepts.
func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '"' {
		return // not a string the parser would ever unquote
	}
	v, err := jsontext.NewDecoder(bytes.NewReader(raw)).ReadValue()
	if err != nil {
		t.Fatalf("ReadValue(%q): %v", raw, err)
	}
	got, err := unquote(v)
	if err != nil || got != tok.String() {
		t.Fatalf("unquote(%q) = %q, %v; the token: %q", raw, got, err, tok.String())
	}
}

// TestUnquoteMatchesDecoder: strings of every escape (short ones, \u
// ones, surrogate pairs and lone surrogates, the escaped solidus) and of
// multi-byte text decode as jsontext decodes them.
func TestUnquoteMatchesDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "code ", `\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\u00e9`, `\u003c`, `\ud83d\ude00`, `\ud800`, `\udc00x`, "é", "😀", "\u2028", `\\u`, `\\n`}
	for range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('"')
		checkUnquote(t, []byte(b.String()))
	}
	for _, s := range []string{"plain", "tab\there", "quote \" and \\ and <&>", "\x01\x1f", "line\nline\r\n", "😀 é \u2028"} {
		raw, _ := json.Marshal(s)
		checkUnquote(t, raw)
	}
}

func FuzzUnquote(f *testing.F) {
	f.Add([]byte(`"a\n\"b\\c\/d\u00e9\ud83d\ude00"`))
	f.Fuzz(func(t *testing.T, b []byte) { checkUnquote(t, b) })
}
