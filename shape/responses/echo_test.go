package responses

import (
	"strings"
	"testing"
)

func TestEchoInstructions(t *testing.T) {
	body := []byte(`{"id":"r","instructions":"Mine.\n\nAnswer concisely.","output":[]}`)
	if got := string(EchoInstructions(body, []byte(`"Mine."`), false)); got != `{"id":"r","instructions":"Mine.","output":[]}` {
		t.Errorf("body: %s", got)
	}
	ev := []byte(`{"type":"response.created","response":{"id":"r","instructions":"Answer concisely."},"sequence_number":0}`)
	if got := string(EchoInstructions(ev, CallerInstructions([]byte(`{"input":"x"}`)), true)); !strings.Contains(got, `"instructions":null`) || strings.Contains(got, "concisely") {
		t.Errorf("event: %s", got)
	}
	plain := []byte(`{"type":"response.output_text.delta","delta":"x"}`)
	if got := EchoInstructions(plain, []byte(`null`), true); &got[0] != &plain[0] {
		t.Error("an event without instructions was rewritten")
	}
}
