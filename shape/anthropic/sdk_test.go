package anthropic_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/sse"
)

// sdkResponses are canonical responses as a C vendor's answer would be
// decoded, to be re-encoded for an M client.
func sdkResponses() map[string]*gw.Response {
	return map[string]*gw.Response{
		"text": {
			Content:    []gw.Part{{Type: gw.PartText, Text: "Hello, wörld <b> & \"you\"\n"}},
			StopReason: gw.StopEndTurn,
			Usage:      gw.Usage{InputTokens: 3, CacheReadTokens: 1792, CacheWrite5mTokens: 100, CacheWrite1hTokens: 20, OutputTokens: 550, Reported: true},
		},
		"thinking text and parallel tools": {
			Content: []gw.Part{
				{Type: gw.PartThinking, Text: "Two tools.", Signature: ""},
				{Type: gw.PartText, Text: "Checking."},
				{Type: gw.PartToolCall, ToolCallID: "call_1", ToolName: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":[1,2],"opts":{"u":"c"}}`)},
				{Type: gw.PartToolCall, ToolCallID: "call_2", ToolName: "get_time", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: gw.StopToolUse,
			Usage:      gw.Usage{InputTokens: 40, OutputTokens: 90, ReasoningTokens: 12, Reported: true},
		},
		"signed thinking and stop sequence": {
			Content: []gw.Part{
				{Type: gw.PartThinking, Text: "", Signature: "EqQBsig=="},
				{Type: gw.PartRedactedThinking, RedactedData: "EmwKAhgB"},
				{Type: gw.PartText, Text: "1, 2, 3"},
			},
			StopReason:   gw.StopSequence,
			StopSequence: "END",
			Usage:        gw.Usage{InputTokens: 9, OutputTokens: 7, Reported: true},
		},
		"max tokens": {
			Content:    []gw.Part{{Type: gw.PartText, Text: "cut"}},
			StopReason: gw.StopMaxTokens,
			Usage:      gw.Usage{InputTokens: 9, OutputTokens: 7, Reported: true},
		},
	}
}

// streamOf turns a response into canonical stream events the way a
// C-vendor decoder would: Start with an input estimate, each block's
// text in small fragments, Finish with the final usage.
func streamOf(r *gw.Response) []gw.Event {
	est := gw.Usage{InputTokens: r.Usage.InputTokens + 5}
	evs := []gw.Event{{Type: gw.EventStart, Usage: &est}}
	for i, p := range r.Content {
		start := gw.Part{Type: p.Type, ToolCallID: p.ToolCallID, ToolName: p.ToolName, RedactedData: p.RedactedData}
		evs = append(evs, gw.Event{Type: gw.EventBlockStart, Index: i, Part: &start})
		text := p.Text
		if p.Type == gw.PartToolCall {
			text = string(p.Arguments)
		}
		for len(text) > 0 {
			n := min(len(text), 4)
			evs = append(evs, gw.Event{Type: gw.EventDelta, Index: i, Text: text[:n]})
			text = text[n:]
		}
		if p.Signature != "" {
			evs = append(evs, gw.Event{Type: gw.EventDelta, Index: i, Signature: p.Signature})
		}
		evs = append(evs, gw.Event{Type: gw.EventBlockStop, Index: i})
	}
	u := r.Usage
	return append(evs, gw.Event{Type: gw.EventFinish, StopReason: r.StopReason, StopSequence: r.StopSequence, Usage: &u})
}

// accumulate feeds an M stream through the SDK's own accumulation.
func accumulate(t *testing.T, stream []byte) sdk.Message {
	t.Helper()
	var msg sdk.Message
	r := sse.NewReader(bytes.NewReader(stream))
	stopped := false
	for r.Next() {
		ev := r.Event()
		var u sdk.MessageStreamEventUnion
		if err := json.Unmarshal(ev.Data, &u); err != nil {
			t.Fatalf("SDK cannot decode %s: %v", ev.Data, err)
		}
		if err := msg.Accumulate(u); err != nil {
			t.Fatalf("SDK accumulate %s: %v", ev.Data, err)
		}
		stopped = stopped || u.Type == "message_stop"
	}
	if !stopped {
		t.Fatal("no message_stop")
	}
	return msg
}

type sdkBlock struct {
	Type, Text, Thinking, Signature, ID, Name, Data string
	Input                                           any
}

type sdkView struct {
	ID, Model, StopReason, StopSequence string
	Content                             []sdkBlock
	In, Out, CacheRead, CacheWrite      int64
	Write5m, Write1h, Thinking          int64
}

func viewOf(t *testing.T, m sdk.Message) sdkView {
	t.Helper()
	v := sdkView{
		ID: m.ID, Model: string(m.Model), StopReason: string(m.StopReason), StopSequence: m.StopSequence,
		In: m.Usage.InputTokens, Out: m.Usage.OutputTokens, CacheRead: m.Usage.CacheReadInputTokens,
		CacheWrite: m.Usage.CacheCreationInputTokens, Write5m: m.Usage.CacheCreation.Ephemeral5mInputTokens,
		Write1h: m.Usage.CacheCreation.Ephemeral1hInputTokens, Thinking: m.Usage.OutputTokensDetails.ThinkingTokens,
	}
	for _, b := range m.Content {
		sb := sdkBlock{Type: b.Type, Text: b.Text, Thinking: b.Thinking, Signature: b.Signature, ID: b.ID, Name: b.Name, Data: b.Data}
		if b.Type == "tool_use" {
			if err := json.Unmarshal(b.Input, &sb.Input); err != nil {
				t.Fatalf("tool input %q: %v", b.Input, err)
			}
		}
		v.Content = append(v.Content, sb)
	}
	return v
}

// TestStreamEncoderMatchesSDKAccumulation: the Anthropic SDK, fed our
// stream, accumulates exactly the message EncodeResponse writes for the
// same canonical response.
func TestStreamEncoderMatchesSDKAccumulation(t *testing.T) {
	meta := anthropic.ResponseMeta{ID: "req_01JSDKTEST000000000000000", Model: "gpt-5.5"}
	for name, r := range sdkResponses() {
		t.Run(name, func(t *testing.T) {
			body, err := anthropic.EncodeResponse(r, meta)
			if err != nil {
				t.Fatal(err)
			}
			var want sdk.Message
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			enc := anthropic.NewStreamEncoder(&out, meta)
			for _, ev := range streamOf(r) {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			got := accumulate(t, out.Bytes())
			gv, wv := viewOf(t, got), viewOf(t, want)
			// The SDK takes the cache TTL split from message_start only,
			// where a C vendor's stream cannot know it yet (its counts
			// arrive at the end); the total is compared.
			gv.Write5m, gv.Write1h, wv.Write5m, wv.Write1h = 0, 0, 0, 0
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("accumulated stream:\n%+v\nEncodeResponse:\n%+v", gv, wv)
			}
			if wv.ID != meta.ID || wv.Model != meta.Model {
				t.Errorf("id/model = %q/%q, want %q/%q", wv.ID, wv.Model, meta.ID, meta.Model)
			}
			if len(wv.Content) != len(r.Content) {
				t.Errorf("%d blocks, want %d", len(wv.Content), len(r.Content))
			}
			if wv.In != r.Usage.InputTokens || wv.Out != r.Usage.OutputTokens || wv.CacheRead != r.Usage.CacheReadTokens || wv.CacheWrite != r.Usage.CacheWriteTokens() {
				t.Errorf("usage %+v does not match %+v", wv, r.Usage)
			}
		})
	}
}

// TestStreamDecoderAgreesWithDecodeResponse: an Anthropic stream,
// decoded, re-encoded and accumulated by the SDK, gives the message that
// the equivalent non-streaming body gives.
func TestStreamDecoderAgreesWithDecodeResponse(t *testing.T) {
	meta := anthropic.ResponseMeta{ID: "req_01JSDKTEST000000000000000", Model: "claude-opus-4-8"}
	for name, r := range sdkResponses() {
		t.Run(name, func(t *testing.T) {
			var upstream bytes.Buffer
			enc := anthropic.NewStreamEncoder(&upstream, meta)
			for _, ev := range streamOf(r) {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			s := anthropic.NewStreamDecoder(io.NopCloser(bytes.NewReader(upstream.Bytes())))
			var out bytes.Buffer
			enc2 := anthropic.NewStreamEncoder(&out, meta)
			for {
				ev, err := s.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == gw.EventError {
					t.Fatalf("stream error: %v", ev.Err)
				}
				if ev.Type == gw.EventFinish && (ev.Usage == nil || *ev.Usage != r.Usage) {
					t.Errorf("finish usage %+v, want %+v", ev.Usage, r.Usage)
				}
				if err := enc2.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			body, err := anthropic.EncodeResponse(r, meta)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := anthropic.DecodeResponse(body)
			if err != nil {
				t.Fatal(err)
			}
			body2, err := anthropic.EncodeResponse(dec, meta)
			if err != nil {
				t.Fatal(err)
			}
			var want sdk.Message
			if err := json.Unmarshal(body2, &want); err != nil {
				t.Fatal(err)
			}
			gv, wv := viewOf(t, accumulate(t, out.Bytes())), viewOf(t, want)
			// message_start carried the estimate; message_delta the truth.
			// The SDK takes the cache TTL split from message_start only.
			gv.Write5m, gv.Write1h, wv.Write5m, wv.Write1h = 0, 0, 0, 0
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("stream:\n%+v\nbody:\n%+v", gv, wv)
			}
		})
	}
}
