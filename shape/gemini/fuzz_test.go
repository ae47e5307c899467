package gemini_test

import (
	"bytes"
	"encoding/json"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/gemini"
	"github.com/gwlabs/gateway/sse"
)

// FuzzParse: any body is a canonical request or an invalid_request
// error, never a panic; an accepted body encodes back to JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"x"}}}]}]}`,
		`{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}],"generationConfig":{"maxOutputTokens":5,"thinkingConfig":{"thinkingBudget":-1},"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","nullable":true,"items":{"type":"STRING"}}}}`,
		`{"contents":[],"contents":[]}`,
		`{"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"ARRAY","items":{"anyOf":[{"type":"INTEGER"}]}}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}},"contents":[{"parts":[{"text":"x"}]}]}`,
		`[]`, `null`, `{"contents":[{"parts":[{}]}]}`, "{\"contents\":[{\"parts\":[{\"text\":\"\xff\"}]}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := gemini.Parse(body)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("error code %s: %v", gw.ErrorCode(err), err)
			}
			return
		}
		if p.Canonical == nil || p.Text == nil {
			t.Fatal("accepted without a canonical request or text")
		}
		for _, m := range p.Canonical.Messages {
			for _, part := range m.Content {
				if part.Type == gw.PartToolCall && !json.Valid(part.Arguments) {
					t.Fatalf("tool call arguments %q", part.Arguments)
				}
			}
		}
		for _, tool := range p.Canonical.Tools {
			if !json.Valid(tool.Parameters) {
				t.Fatalf("tool parameters %q", tool.Parameters)
			}
		}
	})
}

// FuzzMeter: any stream is metered without a panic; usage counts are
// never negative, and a report with a finishReason marks the stream done.
func FuzzMeter(f *testing.F) {
	for _, s := range []string{
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":2,\"totalTokenCount\":7}}\n\n",
		"data: {\"error\":{\"code\":503,\"message\":\"busy\",\"status\":\"UNAVAILABLE\"}}\n\n",
		"data: {\"usageMetadata\":{\"promptTokenCount\":-1}}\n\n",
		"data: {\"usageMetadata\":{\"promptTokenCount\":3,\"cachedContentTokenCount\":9}}\n\n",
		"data: [1,2]\n\ndata: {\n\n", ": comment\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		m := gemini.NewMeter()
		rd := sse.NewReader(bytes.NewReader(stream))
		for rd.Next() {
			ev := rd.Event()
			m.Observe(&ev)
		}
		u := m.Usage()
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.ReasoningTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
		_, _ = gemini.UsageFromBody(stream)
	})
}

// FuzzStreamEncoder: any sequence of canonical events encodes to records
// that are each valid JSON, in SSE and in the JSON array, never a panic.
func FuzzStreamEncoder(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, "hello")
	f.Add([]byte{2, 3, 3, 4, 6}, `{"a":`)
	f.Fuzz(func(t *testing.T, kinds []byte, text string) {
		var sseOut, arrOut bytes.Buffer
		encs := []*gemini.StreamEncoder{
			gemini.NewStreamEncoder(&sseOut, gemini.Meta{ModelVersion: "m", IncludeThoughts: true}, true, "req_1"),
			gemini.NewStreamEncoder(&arrOut, gemini.Meta{ModelVersion: "m"}, false, "req_1"),
		}
		types := []gw.PartType{gw.PartText, gw.PartThinking, gw.PartToolCall}
		for i, k := range kinds {
			ev := gw.Event{Type: gw.EventType(k%6) + 1, Index: int(k/6) % 3, Text: text}
			if ev.Type == gw.EventBlockStart {
				ev.Part = &gw.Part{Type: types[ev.Index], ToolName: "f", ToolCallID: "c"}
			}
			if ev.Type == gw.EventFinish {
				ev.Usage = &gw.Usage{InputTokens: int64(i), OutputTokens: int64(len(text)), Reported: true}
			}
			for _, e := range encs {
				if err := e.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		rd := sse.NewReader(&sseOut)
		for rd.Next() {
			if !json.Valid(rd.Event().Data) {
				t.Fatalf("record %q", rd.Event().Data)
			}
		}
		if b := arrOut.Bytes(); len(b) > 0 && bytes.HasSuffix(b, []byte("]")) {
			var recs []json.RawMessage
			if err := json.Unmarshal(b, &recs); err != nil {
				t.Fatalf("array %q: %v", b, err)
			}
		}
	})
}
