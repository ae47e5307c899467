package billable

import (
	"fmt"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
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
