package rawjson

import (
	"strconv"
	"testing"

	"github.com/gwlabs/gateway/internal/agentbody"
)

// BenchmarkMembers is one scan of an agent-shaped body's top level (go
// test -run '^$' -bench Members ./internal/rawjson/).
func BenchmarkMembers(b *testing.B) {
	for _, kb := range []int{20, 110, 250} {
		body := agentbody.New("M", "anthropic/claude-sonnet-5-5", kb<<10, "s0000000", 1).Body(0)
		b.Run(strconv.Itoa(kb)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if ms, err := Members(body); err != nil || len(ms) != 6 {
					b.Fatal(len(ms), err)
				}
			}
		})
	}
}
