package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
)

// benchRequest is an ~8 KB M request: system, a tool, and a multi-turn
// tool conversation.
func benchRequest() []byte {
	var msgs []string
	para := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	for i := 0; len(strings.Join(msgs, ",")) < 7000; i++ {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q}]}`, para),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"sig%d"},{"type":"text","text":"Calling."},{"type":"tool_use","id":"toolu_%d","name":"lookup","input":{"q":"fox %d"}}]}`, i, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"found %d"}]}`, i, i),
		)
	}
	msgs = append(msgs, `{"role":"user","content":"Summarise."}`)
	return []byte(`{"model":"openai/gpt-5.5","max_tokens":4096,"system":[{"type":"text","text":"You are helpful.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"lookup","description":"Look up","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}],` +
		`"messages":[` + strings.Join(msgs, ",") + `],"stream":true}`)
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := benchRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	body := benchRequest()
	r, err := DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r.Dropped = r.Dropped[:0]
		if _, err := EncodeRequest(r, EncodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

const benchResponse = `{"id":"msg_02","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"thinking","thinking":"Need weather and time, so two tools in parallel.","signature":"EqQBCkYIBxgCKkDsig"},{"type":"text","text":"Let me check the weather and the time for you."},{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris","days":[1,2]}},{"type":"tool_use","id":"toolu_01B","name":"get_time","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":1000,"output_tokens":80}}`

func BenchmarkDecodeResponse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeResponse([]byte(benchResponse)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	r, err := DecodeResponse([]byte(benchResponse))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeResponse(r, testMeta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamDecoderChunk measures one text_delta event (of 1000 in
// a stream) from bytes to canonical event.
func BenchmarkStreamDecoderChunk(b *testing.B) {
	const n = 1000
	var s bytes.Buffer
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-opus-4-8\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range n {
		s.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello there, world \"}}\n\n")
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	body := s.Bytes()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		d := NewStreamDecoder(io.NopCloser(bytes.NewReader(body)))
		for {
			if _, err := d.Recv(); err != nil {
				break
			}
		}
	}
}

// BenchmarkStreamEncoderChunk measures one text Delta to its M event.
func BenchmarkStreamEncoderChunk(b *testing.B) {
	enc := NewStreamEncoder(io.Discard, testMeta)
	_ = enc.Encode(gw.Event{Type: gw.EventStart})
	_ = enc.Encode(gw.Event{Type: gw.EventBlockStart, Part: &gw.Part{Type: gw.PartText}})
	ev := gw.Event{Type: gw.EventDelta, Text: "Hello there, \"world\" "}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchRequestSize(t *testing.T) {
	n := len(benchRequest())
	if n < 7000 || n > 10000 {
		t.Fatalf("bench request is %d bytes, want ~8 KB", n)
	}
	var v map[string]any
	if err := json.Unmarshal(benchRequest(), &v); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkUsageFromBody is metering a relayed non-streaming answer of
// about 2 KB: its usage read, the rest validated, not decoded.
func BenchmarkUsageFromBody(b *testing.B) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"` +
		strings.Repeat("A fairly ordinary sentence of an answer. ", 48) +
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":0,"cache_read_input_tokens":64,"output_tokens":480}}`)
	b.ReportAllocs()
	for b.Loop() {
		if u, err := UsageFromBody(body); err != nil || u.OutputTokens != 480 {
			b.Fatal(u, err)
		}
	}
}
