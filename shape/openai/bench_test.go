package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
)

// benchClientRequest builds a C client request of about 8 KB: a system
// prompt, a multi-turn tool conversation and three tools.
func benchClientRequest(tb testing.TB) []byte {
	tb.Helper()
	sentence := "The gateway maps requests between shapes without losing meaning. "
	type m = map[string]any
	msgs := []any{m{"role": "system", "content": strings.Repeat(sentence, 20)}}
	for i := range 9 {
		msgs = append(msgs,
			m{"role": "user", "content": fmt.Sprintf("Question %d: %s", i, strings.Repeat(sentence, 3))},
			m{"role": "assistant", "content": "Looking it up.", "tool_calls": []any{
				m{"id": fmt.Sprintf("call_%d", i), "type": "function", "function": m{"name": "search", "arguments": `{"query":"gateway shapes","limit":5}`}},
			}},
			m{"role": "tool", "tool_call_id": fmt.Sprintf("call_%d", i), "content": strings.Repeat("result ", 20)},
		)
	}
	msgs = append(msgs, m{"role": "user", "content": "Summarise."})
	tool := func(name string) any {
		return m{"type": "function", "function": m{"name": name, "description": "Search the corpus.",
			"parameters": m{"type": "object", "properties": m{"query": m{"type": "string"}, "limit": m{"type": "integer"}}, "required": []string{"query"}}}}
	}
	body, err := json.Marshal(m{
		"model": "anthropic/claude-sonnet-5", "messages": msgs, "max_completion_tokens": 2048,
		"temperature": 0.3, "stream": true, "stream_options": m{"include_usage": true},
		"tools": []any{tool("search"), tool("fetch"), tool("summarise")}, "tool_choice": "auto",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := benchClientRequest(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	body := benchClientRequest(b)
	r, err := DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	d, _ := DialectFor("deepseek")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeRequest(r, d); err != nil {
			b.Fatal(err)
		}
	}
}

const benchResponse = `{"id":"chatcmpl-Bx1","object":"chat.completion","created":1767225000,"model":"gpt-5.5","choices":[{"index":0,"message":{"role":"assistant","content":"Let me check both cities for you; one moment while I call the weather tool.","refusal":null,"tool_calls":[{"id":"call_P1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"unit\": \"celsius\"}"}},{"id":"call_R2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\",\"unit\":\"celsius\"}"}}],"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1816,"completion_tokens":52,"total_tokens":1868,"prompt_tokens_details":{"cached_tokens":1792,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}},"service_tier":"default","system_fingerprint":null}`

func BenchmarkDecodeResponse(b *testing.B) {
	d, _ := DialectFor("openai")
	body := []byte(benchResponse)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeResponse(body, d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	d, _ := DialectFor("openai")
	r, err := DecodeResponse([]byte(benchResponse), d)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeResponse(r, goldenMeta); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStream is a vendor stream of n content chunks plus a finish and a
// usage chunk.
func benchStream(n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1767225000,"model":"gpt-5.5","choices":[{"index":0,"delta":{"content":" token%d"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1y2"}`+"\n\n", i)
	}
	buf.WriteString(`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1767225000,"model":"gpt-5.5","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	buf.WriteString(`data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1767225000,"model":"gpt-5.5","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":200,"total_tokens":300}}` + "\n\ndata: [DONE]\n\n")
	return buf.Bytes()
}

// BenchmarkStreamDecodeChunk reports the cost of decoding one vendor
// content chunk into canonical events (ns/op and allocs/op per chunk).
func BenchmarkStreamDecodeChunk(b *testing.B) {
	const n = 200
	stream := benchStream(n)
	d, _ := DialectFor("openai")
	b.ReportAllocs()
	b.SetBytes(int64(len(stream) / n))
	rd := bytes.NewReader(stream)
	for i := 0; i < b.N; i += n {
		rd.Reset(stream)
		s := NewStreamDecoder(io.NopCloser(rd), d)
		for {
			_, err := s.Recv()
			if err == io.EOF {
				break
			}
		}
	}
}

// BenchmarkStreamEncodeChunk reports the cost of writing one text delta
// as a client chunk.
func BenchmarkStreamEncodeChunk(b *testing.B) {
	enc := NewStreamEncoder(io.Discard, goldenMeta, true)
	_ = enc.Encode(gw.Event{Type: gw.EventStart})
	_ = enc.Encode(gw.Event{Type: gw.EventBlockStart, Index: 0, Part: &gw.Part{Type: gw.PartText}})
	ev := gw.Event{Type: gw.EventDelta, Index: 0, Text: " the quick brown fox"}
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}
