package optimize

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// benchBody is a Chat Completions body with a 6 KB system prompt and a
// 10-turn conversation.
func benchBody() []byte {
	msgs := []map[string]string{{"role": "system", "content": strings.Repeat("Answer about the catalogue. ", 220)}}
	for i := range 10 {
		msgs = append(msgs, map[string]string{"role": "user", "content": fmt.Sprintf("Question %d about the catalogue?", i)},
			map[string]string{"role": "assistant", "content": "An answer of a few words."})
	}
	b, _ := json.Marshal(map[string]any{"model": "openai/gpt-6-sol", "messages": msgs})
	return b
}

// BenchmarkModelPatch is the baseline: the pass-through's own work on
// every native request (rewriting "model").
func BenchmarkModelPatch(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := rawjson.Set(body, "model", []byte(`"gpt-6-sol"`)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply is the directive's insertion into the same body.
func BenchmarkApply(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Apply(gw.ShapeC, body); err != nil {
			b.Fatal(err)
		}
	}
}
