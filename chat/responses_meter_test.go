package chat

import (
	"testing"
)

// A Responses stream's text is counted once: its deltas, not the *.done
// events and final response object that repeat it; the final response
// counts when it holds more (no deltas sent).
func TestResponsesTextCountedOnce(t *testing.T) {
	var rt responsesText
	rt.observe("response.output_text.delta", []byte(`{"type":"response.output_text.delta","delta":"Hel"}`))
	rt.observe("", []byte(`{"type":"response.output_text.delta","delta":"lo \u00e9"}`))
	rt.observe("response.output_text.done", []byte(`{"type":"response.output_text.done","text":"Hello é"}`))
	rt.observe("response.output_item.done", []byte(`{"type":"response.output_item.done","item":{"content":[{"type":"output_text","text":"Hello é"}]}}`))
	rt.observe("response.completed", []byte(`{"type":"response.completed","response":{"instructions":"long instructions","output":[{"content":[{"type":"output_text","text":"Hello é"}]}]}}`))
	if got := rt.bytes(); got != int64(len("Hello é")) {
		t.Errorf("counted %d bytes, want %d (each text once)", got, len("Hello é"))
	}
	var whole responsesText
	whole.observe("response.completed", []byte(`{"type":"response.completed","response":{"output":[{"content":[{"type":"output_text","text":"abcdef"}]}]}}`))
	if whole.bytes() != 6 {
		t.Errorf("no deltas: counted %d, want the final text's 6", whole.bytes())
	}
}
