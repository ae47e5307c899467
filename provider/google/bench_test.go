package google

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// benchRequest returns a tool-using conversation of about 8 KB.
func benchRequest() *gw.Request {
	para := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	r := &gw.Request{
		Model:     "gemini-3-flash",
		System:    []gw.Part{{Type: gw.PartText, Text: "You are a helpful assistant. " + para}},
		MaxTokens: new(int),
		Tools: []gw.Tool{
			{Name: "get_weather", Description: "Weather for a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}`)},
			{Name: "search", Description: "Web search", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","minimum":1}},"required":["q"]}`)},
		},
		Reasoning: &gw.Reasoning{Effort: "medium"},
	}
	*r.MaxTokens = 4096
	for i := 0; i < 6; i++ {
		id := ToolCallID(fmt.Sprintf("call_%016x", i), "c2lnbmF0dXJlLWJ5dGVzLWZvci10aGUtY2FsbA==")
		r.Messages = append(r.Messages,
			gw.Message{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: para}}},
			gw.Message{Role: gw.RoleAssistant, Content: []gw.Part{
				{Type: gw.PartThinking, Text: "Considering the question.", Signature: SignaturePrefix + "dGhvdWdodA=="},
				{Type: gw.PartText, Text: "Let me look that up."},
				{Type: gw.PartToolCall, ToolCallID: id, ToolName: "search", Arguments: json.RawMessage(`{"q":"fox facts","n":3}`)},
			}},
			gw.Message{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartToolResult, ToolCallID: id, Content: []gw.Part{{Type: gw.PartText, Text: para[:200]}}}}},
		)
	}
	return r
}

func BenchmarkEncodeRequest8KB(b *testing.B) {
	r := benchRequest()
	body, err := EncodeRequest(r)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.Dropped = r.Dropped[:0]
		if _, err := EncodeRequest(r); err != nil {
			b.Fatal(err)
		}
	}
}

const benchAnswer = `{"candidates":[{"content":{"role":"model","parts":[` +
	`{"text":"**Looking up**\nI will search for the weather and the time.","thought":true},` +
	`{"text":"Here is what I found about the weather in Paris today: sunny with light wind, 18 degrees. I will also check the time."},` +
	`{"functionCall":{"name":"get_weather","args":{"city":"Paris","unit":"c"}},"thoughtSignature":"c2lnbmF0dXJlLWJ5dGVzLWZvci10aGUtY2FsbA=="},` +
	`{"functionCall":{"name":"search","args":{"q":"time in Paris","n":1}}}]},"finishReason":"STOP","index":0}],` +
	`"usageMetadata":{"promptTokenCount":812,"cachedContentTokenCount":512,"candidatesTokenCount":64,"thoughtsTokenCount":210,"totalTokenCount":1086},` +
	`"modelVersion":"gemini-3-flash","responseId":"abcdefghijklmnop"}`

func BenchmarkDecodeResponse(b *testing.B) {
	b.SetBytes(int64(len(benchAnswer)))
	b.ReportAllocs()
	body := []byte(benchAnswer)
	for b.Loop() {
		if _, err := DecodeResponse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// recordStream yields n copies of one text record, then a finishing one.
type recordStream struct {
	rec, fin []byte
	n, off   int
}

func (s *recordStream) Read(p []byte) (int, error) {
	for {
		cur := s.rec
		if s.n == 0 {
			cur = s.fin
		}
		if s.n < 0 {
			return 0, io.EOF
		}
		if s.off < len(cur) {
			k := copy(p, cur[s.off:])
			s.off += k
			return k, nil
		}
		s.off = 0
		s.n--
	}
}

func (s *recordStream) Close() error { return nil }

// BenchmarkStreamRecord measures one text record through the stream
// decoder (one op = one record: read, parse, one Delta handed out).
func BenchmarkStreamRecord(b *testing.B) {
	rec := []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"some streamed words of text\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":120,\"totalTokenCount\":120},\"modelVersion\":\"gemini-3-flash\",\"responseId\":\"abcdefghijklmnop\"}\r\n\r\n")
	fin := []byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\".\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":120,\"candidatesTokenCount\":900,\"totalTokenCount\":1020}}\r\n\r\n")
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	d := NewStreamDecoder(&recordStream{rec: rec, fin: fin, n: b.N})
	defer d.Close()
	b.ResetTimer()
	for {
		ev, err := d.Recv()
		if err == io.EOF {
			break
		}
		if err != nil || ev.Type == gw.EventError {
			b.Fatalf("%v %v", err, ev.Err)
		}
	}
}
