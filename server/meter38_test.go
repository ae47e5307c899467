package server

import (
	"strings"
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

func TestEchoInstructions(t *testing.T) {
	body := []byte(`{"id":"r","instructions":"Mine.\n\nAnswer concisely.","output":[]}`)
	if got := string(echoInstructions(body, []byte(`"Mine."`), false)); got != `{"id":"r","instructions":"Mine.","output":[]}` {
		t.Errorf("body: %s", got)
	}
	ev := []byte(`{"type":"response.created","response":{"id":"r","instructions":"Answer concisely."},"sequence_number":0}`)
	if got := string(echoInstructions(ev, callerInstructions([]byte(`{"input":"x"}`)), true)); !strings.Contains(got, `"instructions":null`) || strings.Contains(got, "concisely") {
		t.Errorf("event: %s", got)
	}
	plain := []byte(`{"type":"response.output_text.delta","delta":"x"}`)
	if got := echoInstructions(plain, []byte(`null`), true); &got[0] != &plain[0] {
		t.Error("an event without instructions was rewritten")
	}
}
