package billable

import (
	"fmt"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/agentbody"
)

// BenchmarkFind is Find on a Responses body declaring a dozen function
// tools and one hosted tool, as Codex sends on every turn.
func BenchmarkFind(b *testing.B) {
	var tools []string
	for i := range 12 {
		tools = append(tools, fmt.Sprintf(`{"type":"function","name":"f%d","parameters":{"type":"object"}}`, i))
	}
	tools = append(tools, `{"type":"web_search"}`)
	body := []byte(`{"model":"gpt-5","input":"hi","tools":[` + strings.Join(tools, ",") + `]}`)
	b.ReportAllocs()
	for b.Loop() {
		if len(Find(gw.ShapeR, body)) != 1 {
			b.Fatal("want one use")
		}
	}
}

// BenchmarkExternalInput searches an agent-shaped body that points at
// nothing (the whole body read).
func BenchmarkExternalInput(b *testing.B) {
	body := agentbody.New("C", "openai/gpt-6-sol", 110<<10, "s0000000", 1).Body(0)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if ExternalInput(body) {
			b.Fatal("found external input")
		}
	}
}
