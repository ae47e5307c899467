package reqbody

import (
	"strconv"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/agentbody"
)

// BenchmarkParseAgent reads agent-shaped bodies (go test -run '^$' -bench
// ParseAgent ./internal/reqbody/).
func BenchmarkParseAgent(b *testing.B) {
	for name, shape := range map[string]gw.Shape{"C": gw.ShapeC, "M": gw.ShapeM} {
		for _, kb := range []int{20, 110, 250} {
			body := agentbody.New(name, "openai/gpt-6-sol", kb<<10, "s0000000", 1).Body(0)
			b.Run(name+"/"+strconv.Itoa(kb)+"KB", func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if p, err := Parse(shape, body); err != nil || len(p.Text) == 0 {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
