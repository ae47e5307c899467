package responses_test

import (
	"bytes"
	"encoding/json"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/golden"
	"github.com/gwlabs/gateway/shape/responses"
	"github.com/gwlabs/gateway/sse"
)

// FuzzRequest feeds any body through the decoder, the mapping and the
// three vendor encoders: an error is a 400 (invalid_request), never a
// panic; what maps encodes, and a parsed body's text is all the guard
// reads.
func FuzzRequest(f *testing.F) {
	for _, c := range golden.Load(f, "request", false) {
		f.Add(c.Input(f, "request.json"))
	}
	f.Add([]byte(`{"model":"m","input":[{"type":"reasoning","encrypted_content":"sealed:[{\"type\":\"thinking\"}]"}]}`))
	f.Add([]byte(`{"model":"m","input":"x","tools":[{"type":"namespace","name":"a","tools":[{"type":"namespace","name":"b"}]}]}`))
	cs := codecs(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := responses.Parse(body)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("parse: %v", err)
			}
			return
		}
		if r.Model == "" || r.Text == nil {
			t.Fatalf("parsed without a model or text: %+v", r)
		}
		c, err := canonical(r)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("canonical: %v", err)
			}
			return
		}
		for name, codec := range cs {
			cp := *c
			if out, err := codec.EncodeRequest(&cp); err == nil && !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", name, out)
			}
		}
	})
}

// FuzzOpen: a blob of any text opens or is refused, never panics.
func FuzzOpen(f *testing.F) {
	s, _ := responses.NewSealer(bytes.Repeat([]byte{1}, 32))
	good, _ := s.Seal("a", []gw.Part{{Type: gw.PartThinking, Text: "t", Signature: "s"}})
	f.Add(good)
	f.Add(responses.SealPrefix)
	f.Add("gAAAA")
	f.Fuzz(func(t *testing.T, blob string) {
		parts, ours, err := s.Open("a", blob)
		if err == nil && ours {
			for _, p := range parts {
				if p.Type != gw.PartThinking && p.Type != gw.PartRedactedThinking {
					t.Fatalf("opened a %s part", p.Type)
				}
			}
		}
	})
}

// FuzzMeter: any relayed event is observed without a panic, and usage
// never goes negative.
func FuzzMeter(f *testing.F) {
	f.Add("response.completed", []byte(`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":9},"output_tokens":1}}}`))
	f.Add("error", []byte(`{"type":"error","message":"x"}`))
	f.Add("response.created", []byte(`{"type":"response.created","response":null}`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		m := responses.NewMeter("openai")
		ev := sse.Event{Type: typ, Data: data}
		m.Observe(&ev)
		u := m.Usage()
		if u.InputTokens < 0 || u.CacheReadTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens > u.OutputTokens {
			t.Fatalf("usage %+v", u)
		}
	})
}
