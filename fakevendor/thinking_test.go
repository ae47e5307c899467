package fakevendor

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeepSeekThinkingByDefault: DeepSeek's thinking mode is on unless the
// request turns it off, and then every answer carries reasoning_content
// (non-stream message, stream deltas), with no directive asking for it;
// turned off, no answer has it.
func TestDeepSeekThinkingByDefault(t *testing.T) {
	s := startServer(t)
	model := "deepseek-flash"
	want := ReasoningText(model)
	for _, stream := range []bool{false, true} {
		_, b, _ := send(t, s, "deepseek", model, "hello", reqOpts{stream: stream, thinking: true})
		var got string
		if stream {
			got = parseStream(t, "deepseek", b).reasoning
		} else {
			var m struct {
				Choices []struct {
					Message struct {
						ReasoningContent *string `json:"reasoning_content"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &m); err != nil || len(m.Choices) != 1 || m.Choices[0].Message.ReasoningContent == nil {
				t.Fatalf("stream=%v: no reasoning_content in %s (%v)", stream, b, err)
			}
			got = *m.Choices[0].Message.ReasoningContent
		}
		if got != want {
			t.Errorf("stream=%v: reasoning = %q, want %q", stream, got, want)
		}
		_, b, _ = send(t, s, "deepseek", model, "hello", reqOpts{stream: stream})
		if strings.Contains(string(b), `"reasoning_content":"`) {
			t.Errorf("stream=%v: thinking disabled, yet reasoning_content: %s", stream, b)
		}
	}
}
