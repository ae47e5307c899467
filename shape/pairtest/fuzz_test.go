package pairtest

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/shape/openai"
)

// FuzzRequestPairs: any caller body of either shape, mapped to every
// vendor of the other, never panics, fails only with invalid_request, and
// otherwise gives valid JSON.
func FuzzRequestPairs(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name == fileClient {
				f.Add(file.Data)
			}
		}
	}
	vendors := []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(out []byte, err error) {
			t.Helper()
			if err != nil {
				var e *gw.Error
				if !errors.As(err, &e) || e.Code != gw.CodeInvalidRequest {
					t.Fatalf("error %v, want invalid_request", err)
				}
				return
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
		}
		// M caller, every C vendor.
		for _, v := range vendors {
			r, err := anthropic.DecodeRequest(body)
			if err != nil {
				check(nil, err)
				break
			}
			d, _ := openai.DialectFor(v)
			check(openai.EncodeRequest(r, d))
		}
		// C caller, Anthropic.
		r, err := openai.DecodeRequest(body)
		if err != nil {
			check(nil, err)
			return
		}
		check(anthropic.EncodeRequest(r, anthropicOptions))
	})
}
