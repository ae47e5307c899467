package leak

import (
	"strings"
	"testing"
)

// agentPrompt is an agent-sized system prompt (about 24 KB).
var agentPrompt = strings.Repeat(system+" Use the tools when a question needs data from the core system; explain each step briefly. ", 80)

// ordinary is an answer that quotes nothing.
var ordinary = strings.Repeat("Transfers between your own accounts are free and arrive at once; to other banks they take one business day. ", 20)

func BenchmarkNewSmall(b *testing.B) {
	for b.Loop() {
		New(Protected{Texts: []string{system}})
	}
}

func BenchmarkNewAgent(b *testing.B) {
	for b.Loop() {
		New(Protected{Texts: []string{agentPrompt}})
	}
}

func BenchmarkCacheHitAgent(b *testing.B) {
	c := NewCache(64)
	p := Protected{Texts: []string{agentPrompt}}
	c.Set(p)
	for b.Loop() {
		c.Set(p)
	}
}

// BenchmarkMatchOrdinary: an answer of about 2 KB that quotes nothing,
// streamed in pieces of 16 bytes.
func BenchmarkMatchOrdinary(b *testing.B) {
	s := New(Protected{Texts: []string{agentPrompt}})
	data := []byte(ordinary)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m := s.NewMatcher()
		for i := 0; i < len(data); i += 16 {
			m.Write(data[i:min(i+16, len(data))])
		}
		m.Close()
	}
}
