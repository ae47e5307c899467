package outlimit

import (
	"testing"

	gw "github.com/gwlabs/gateway"
)

// FuzzRead: any body, of either shape or Gemini's, reads without a panic
// into limits that can size a hold (no negative cap, at least one
// answer), or into an error.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`{"max_tokens":100,"n":2}`,
		`{"max_tokens":1,"max_completion_tokens":100000}`,
		`{"max_tokens":1,"MAX_TOKENS":100000}`,
		`{"generationConfig":{"maxOutputTokens":50,"candidateCount":4}}`,
		`{"n":-1,"max_tokens":1e30}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, shape := range []gw.Shape{gw.ShapeM, gw.ShapeC, gw.ShapeG} {
			l, err := Read(shape, body)
			if err != nil {
				continue
			}
			if l.MaxOutput < 0 || l.Choices < 1 {
				t.Fatalf("%s %q: limits %+v", shape, body, l)
			}
		}
	})
}
