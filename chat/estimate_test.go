package chat

import (
	"testing"
)

func TestRelayedTextBytesEdges(t *testing.T) {
	tests := []struct {
		doc  string
		want int64
	}{
		// Key-like text inside a value is text, not a key: the value is
		// say "text":"x" ok = 17 bytes.
		{`{"content":"say \"text\":\"x\" ok"}`, 17},
		// Only text members count; ids, names and signatures do not.
		{`{"id":"abc","name":"f","signature":"zzz","text":"ab"}`, 2},
		// Nested and in arrays; null and numbers are no text.
		{`{"choices":[{"delta":{"content":"ab"}},{"delta":{"content":null}}],"n":3}`, 2},
		// An Anthropic tool_use input object counts as its JSON text.
		{`{"type":"tool_use","input":{"a":[1,"}"]}}`, 13},
		// Truncated or malformed input never panics.
		{`{"content":"abc`, 0},
		{`{"text":"\u00e9\ud83d\ude00\u12"}`, 2 + 4 + 1 + 2},
		{``, 0},
	}
	for _, tc := range tests {
		if got := relayedTextBytes([]byte(tc.doc)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.doc, got, tc.want)
		}
	}
}

func BenchmarkRelayedTextBytes(b *testing.B) {
	c := []byte(`{"id":"chatcmpl-abc123","object":"chat.completion.chunk","created":1732000000,"model":"gpt-6-sol","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" world, this is"},"logprobs":null,"finish_reason":null}],"obfuscation":"xYz12"}`)
	b.ReportAllocs()
	for b.Loop() {
		relayedTextBytes(c)
	}
}
