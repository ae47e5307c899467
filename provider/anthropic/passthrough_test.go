package anthropic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/internal/agentbody"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// The pass-through body, made from one scan and one copy, is byte for
// byte what setting the model and then adding the cache markers gives:
// on agent-sized bodies, and on bodies with and without markers, with
// the model missing, repeated, or naming the marker itself.
func TestPassThroughBodyMatchesSetThenMark(t *testing.T) {
	long := strings.Repeat("word ", 2000)
	pieces := []string{
		`"model":"claude-old"`, `"model" : "x\"cache_control\""`, `"model":"\"cache_control\""`,
		`"system":"` + long + `"`, `"system":[{"type":"text","text":"` + long + `"}]`, `"system":""`,
		`"tools":[{"name":"t","input_schema":{}},{"name":"u","description":"` + long + `"}]`,
		`"messages":[{"role":"user","content":"hi"}]`,
		`"messages":[{"role":"user","content":"` + long + `"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"more"}]}]`,
		`"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]`,
		`"max_tokens":100`, `"stream":true`, `"metadata":{"cache_control":1}`,
	}
	r := rand.New(rand.NewPCG(40, 4))
	check := func(body []byte, model string) {
		t.Helper()
		mq, _ := json.Marshal(model)
		set, err := rawjson.Set(body, "model", mq)
		got, gerr := passThroughBody(body, mq, model)
		if (err != nil) != (gerr != nil) {
			t.Fatalf("%.200s: error %v, want %v", body, gerr, err)
		}
		if err != nil {
			return
		}
		if want := addCacheMarkers(set, model); !bytes.Equal(got, want) {
			t.Fatalf("%.300s (model %q):\n got %.300s\nwant %.300s", body, model, got, want)
		}
	}
	models := []string{"claude-sonnet-5", "claude-opus-4-7", "cache_control", "x\"cache_control\""}
	for range 3000 {
		var b bytes.Buffer
		b.WriteString("{")
		for i := range r.IntN(6) {
			if i > 0 {
				b.WriteString([]string{",", ", "}[r.IntN(2)])
			}
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteString([]string{"}", " }"}[r.IntN(2)])
		check(b.Bytes(), models[r.IntN(len(models))])
	}
	check([]byte(`not json`), "m")
	c := agentbody.New("M", "claude-sonnet-5", 110<<10, "pass", 3)
	for k := range c.Turns() {
		check(c.Body(k), "claude-sonnet-5")
	}
}
