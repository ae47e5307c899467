package responses_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/responses"
	"github.com/gwlabs/gateway/sse"
)

// benchRequest is an ~8 KB Responses request as a coding agent sends
// it: instructions, a function tool, and turns of messages, calls and
// their outputs.
func benchRequest() []byte {
	var items []string
	para := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	for i := 0; len(strings.Join(items, ",")) < 7000; i++ {
		items = append(items,
			fmt.Sprintf(`{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]}`, para),
			fmt.Sprintf(`{"type":"function_call","call_id":"call_%d","name":"lookup","arguments":"{\"q\":\"fox %d\"}"}`, i, i),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"call_%d","output":"found %d"}`, i, i),
		)
	}
	return []byte(`{"model":"openai/gpt-6-sol","instructions":"You are a coding agent.","stream":true,"max_output_tokens":4096,` +
		`"tools":[{"type":"function","name":"lookup","description":"Look up","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}],` +
		`"input":[` + strings.Join(items, ",") + `]}`)
}

// BenchmarkParse is the strict parse of a Responses request, per request.
func BenchmarkParse(b *testing.B) {
	body := benchRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := responses.Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamTextChunk is the cost per text chunk of a mapped stream
// encoded as Responses events.
func BenchmarkStreamTextChunk(b *testing.B) {
	r, err := responses.Parse([]byte(`{"model":"m","input":"x"}`))
	if err != nil {
		b.Fatal(err)
	}
	enc := responses.NewStreamEncoder(io.Discard, responses.Meta{ID: "resp_bench", Model: "m", CreatedAt: 1700000000, Req: r})
	for _, ev := range []gw.Event{
		{Type: gw.EventStart, Usage: &gw.Usage{InputTokens: 5, Reported: true}},
		{Type: gw.EventBlockStart, Index: 0, Part: &gw.Part{Type: gw.PartText}},
	} {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
	ev := gw.Event{Type: gw.EventDelta, Index: 0, Text: "a chunk of streamed text, "}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeterChunk is the metering of a relayed Responses stream, per
// text delta event.
func BenchmarkMeterChunk(b *testing.B) {
	m := responses.NewMeter("openai")
	d := `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"a chunk of streamed text, "}`
	ev := sse.Event{Type: "response.output_text.delta", Data: []byte(d)}
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(&ev)
	}
}

// BenchmarkUsageFromBody is metering a relayed non-streaming answer of
// about 2 KB: its usage read, the rest validated, not decoded.
func BenchmarkUsageFromBody(b *testing.B) {
	body := []byte(`{"id":"resp_1","object":"response","status":"completed","model":"gpt-x","output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"` +
		strings.Repeat("A fairly ordinary sentence of an answer. ", 48) +
		`"}]}],"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":64},"output_tokens":480,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":600}}`)
	b.ReportAllocs()
	for b.Loop() {
		if u, err := responses.UsageFromBody(body); err != nil || u.OutputTokens != 480 {
			b.Fatal(u, err)
		}
	}
}
