package shape_test

import (
	"bytes"
	"encoding/json"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/shape/gemini"
	"github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/shape/responses"
	"github.com/gwlabs/gateway/sse"
)

var all = []shape.Shape{anthropic.Shape{}, openai.Shape{}, responses.Shape{}, gemini.Shape{}}

func TestRegistryLooksUpByNameAndPath(t *testing.T) {
	r := shape.NewRegistry(all...)
	for _, s := range all {
		if got := r.Get(s.Name()); got != s {
			t.Errorf("Get(%q) = %v", s.Name(), got)
		}
		if p := s.Path(); p != "" && r.ByPath(p) != s {
			t.Errorf("ByPath(%q) = %v, want %v", p, r.ByPath(p), s)
		}
	}
	if r.ByPath("/v1/embeddings") != nil || r.Get("nope") != nil {
		t.Error("an unknown path or name found a shape")
	}
	if r.ByPath("/v1/messages").Name() != gw.ShapeM || r.ByPath("/v1/chat/completions").Name() != gw.ShapeC || r.ByPath("/v1/responses").Name() != gw.ShapeR {
		t.Error("a chat path maps to the wrong shape")
	}
}

func TestRegistryRefusesATwiceRegisteredShape(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering M twice did not panic")
		}
	}()
	shape.NewRegistry(anthropic.Shape{}, anthropic.Shape{})
}

func TestEveryShapeErrorBodyCarriesTheRequestID(t *testing.T) {
	e := &gw.Error{Code: gw.CodeRateLimited, Message: "slow down <now>"}
	for _, s := range all {
		b := s.ErrorBody("req_1", e)
		if !json.Valid(b) {
			t.Errorf("%s: error body is not JSON: %s", s.Name(), b)
		}
		if !bytes.Contains(b, []byte("req_1")) || !bytes.Contains(b, []byte(`slow down \u003cnow\u003e`)) && !bytes.Contains(b, []byte("slow down <now>")) {
			t.Errorf("%s: error body lacks the request id or message: %s", s.Name(), b)
		}
		se := s.StreamError("req_1", e)
		rd := sse.NewReader(bytes.NewReader(se))
		if !rd.Next() || !bytes.Contains(rd.Event().Data, []byte("req_1")) {
			t.Errorf("%s: stream error is not an event carrying the request id: %q", s.Name(), se)
		}
	}
}

func TestStreamTails(t *testing.T) {
	want := map[gw.Shape][2]string{ // whole, after an error
		gw.ShapeM: {"message_stop", ""},
		gw.ShapeC: {"[DONE]", "[DONE]"},
		gw.ShapeR: {"", ""},
		gw.ShapeG: {"", ""},
	}
	for _, s := range all {
		for i, afterErr := range []bool{false, true} {
			got := s.StreamTail(afterErr)
			if w := want[s.Name()][i]; w == "" && got != nil || w != "" && !bytes.Contains(got, []byte(w)) {
				t.Errorf("%s: StreamTail(%v) = %q, want %q", s.Name(), afterErr, got, w)
			}
		}
	}
}

func TestMetersShareOneObserve(t *testing.T) {
	// A usage-only C chunk is hidden when the gateway asked for it; no
	// other shape hides an event.
	c := openai.Shape{}.NewMeter("openai", true)
	if !c.Observe(&sse.Event{Data: []byte(`{"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)}) {
		t.Error("C meter did not hide the usage chunk the gateway asked for")
	}
	if u := c.Usage(); u.OutputTokens != 2 {
		t.Errorf("C meter usage = %+v", u)
	}
	m := anthropic.Shape{}.NewMeter("anthropic", true)
	if m.Observe(&sse.Event{Type: "message_start", Data: []byte(`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":7,"output_tokens":1}}}`)}) {
		t.Error("M meter hid an event")
	}
	if m.ID() != "msg_1" || m.Usage().InputTokens != 7 {
		t.Errorf("M meter: id %q usage %+v", m.ID(), m.Usage())
	}
}

func TestEachShapeKeepsItsOwnConversationState(t *testing.T) {
	want := map[gw.Shape]shape.State{
		gw.ShapeM: {Threads: true},
		gw.ShapeC: {ReasoningInBody: true},
		gw.ShapeR: {KeptResponses: true},
		gw.ShapeG: {},
	}
	for _, s := range all {
		var got shape.State
		if st, ok := s.(shape.Stateful); ok {
			got = st.State()
		}
		if got != want[s.Name()] {
			t.Errorf("%s: State() = %+v, want %+v", s.Name(), got, want[s.Name()])
		}
	}
}
