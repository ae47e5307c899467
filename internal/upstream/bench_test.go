package upstream

import (
	"testing"
	"time"
)

// The resilience layer's cost per vendor call (go test -run '^$' -bench
// . -benchmem ./internal/upstream/): the breaker's admission and report,
// and a key pool's pick and release, both under their locks as every
// call takes them.

func BenchmarkBreaker(b *testing.B) {
	br := newBreaker(5, 30*time.Second)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		ok, probe, _ := br.allow(now)
		if !ok {
			b.Fatal("breaker open")
		}
		br.done(now, probe, outcomeOK)
	}
}

func BenchmarkPoolPick(b *testing.B) {
	for _, spread := range []string{SpreadWeighted, SpreadLeastInFlight} {
		b.Run(spread, func(b *testing.B) {
			p := newPool([]Key{{Name: "1", Secret: "a", Weight: 1}, {Name: "2", Secret: "b", Weight: 2}, {Name: "3", Secret: "c", Weight: 1}, {Name: "4", Secret: "d", Weight: 1}},
				spread, 5, 30*time.Second)
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				l, err := p.pick(now, "openai", nil)
				if err != nil {
					b.Fatal(err)
				}
				p.release(now, l, outcomeOK)
			}
		})
	}
}
