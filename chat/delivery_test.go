package chat

import (
	"testing"

	"github.com/gwlabs/gateway/proxy"
)

// Issue 46 D7 (before -> after): removing "stream" left the space of a
// `", "` separator behind, so a stream request was estimated one byte
// (often one token) above the same request without it. Now every
// spacing estimates alike.
func TestPromptEstimateIgnoresStreamSpacing(t *testing.T) {
	for _, c := range []struct{ plain, stream string }{
		{`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`, `{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}`},
		{`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`, `{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}`},
		{`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`, `{"stream": true, "model": "m", "messages": [{"role": "user", "content": "hi"}]}`},
		{`{"model":"m","messages":[]}`, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`},
		{"{\n  \"model\": \"m\",\n  \"messages\": []\n}", "{\n  \"model\": \"m\",\n  \"stream\": true,\n  \"messages\": []\n}"},
	} {
		// One byte more than a multiple of four, so a byte left over
		// shows as a token.
		for pad := range 4 {
			p, s := c.plain+spaces(pad), c.stream+spaces(pad)
			a, b := promptEstimate(&proxy.Inbound{Body: []byte(p)}), promptEstimate(&proxy.Inbound{Body: []byte(s)})
			if a != b {
				t.Errorf("%s: %d tokens, %s: %d; want the same", p, a, s, b)
			}
		}
	}
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
