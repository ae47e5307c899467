package rawjson

import (
	"math/rand/v2"
	"testing"
)

// skipStringBytewise is the byte-at-a-time reading of a string: the
// oracle of skipString's quote-to-quote jumps.
func skipStringBytewise(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, errSyntax
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errSyntax
}

func checkSkipString(t *testing.T, b []byte) {
	t.Helper()
	for i := range b {
		if b[i] != '"' {
			continue
		}
		e1, err1 := skipString(b, i)
		e2, err2 := skipStringBytewise(b, i)
		if e1 != e2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("skipString(%q, %d) = %d, %v; byte by byte %d, %v", b, i, e1, err1, e2, err2)
		}
	}
}

// TestSkipStringMatchesBytewise: on strings of quotes, backslashes and
// letters of every length around the short-string cut-over, skipString
// ends where the byte-by-byte reading ends.
func TestSkipStringMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'a', '"', '\\', '\\', 'x', 'n'}
	for range 20000 {
		b := make([]byte, 1+r.IntN(60))
		b[0] = '"'
		for i := 1; i < len(b); i++ {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		checkSkipString(t, b)
	}
	for _, s := range []string{`"\\"`, `"\"`, `"abcdefghijklmnopq\\\"rs\\"`, `"abcdefghijklmnop\`, `"abcdefghijklmnopqrstu\\\\\\\"x"`} {
		checkSkipString(t, []byte(s))
	}
}

func FuzzSkipString(f *testing.F) {
	f.Add([]byte(`"abcdefghijklmnopqrstuvwxyz\"\\"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSkipString(t, append([]byte{'"'}, b...))
	})
}
