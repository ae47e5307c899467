package openai

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
)

func encodeFields(t *testing.T, r *gw.Request, vendor string) map[string]json.RawMessage {
	t.Helper()
	d, _ := DialectFor(vendor)
	body, err := EncodeRequest(r, d)
	if err != nil {
		t.Fatalf("EncodeRequest(%s): %v", vendor, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func userHi() []gw.Message {
	return []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "hi"}}}}
}

func TestEncodeRequestReasoning(t *testing.T) {
	tests := []struct {
		name   string
		vendor string
		in     gw.Reasoning
		want   map[string]string // field -> JSON; "" means absent
	}{
		{"effort verbatim", "openai", gw.Reasoning{Effort: "xhigh"}, map[string]string{"reasoning_effort": `"xhigh"`}},
		{"small budget is low", "groq", gw.Reasoning{BudgetTokens: 2048}, map[string]string{"reasoning_effort": `"low"`}},
		{"mid budget is medium", "mistral", gw.Reasoning{BudgetTokens: 8192}, map[string]string{"reasoning_effort": `"medium"`}},
		{"large budget is high", "fireworks", gw.Reasoning{BudgetTokens: 8193}, map[string]string{"reasoning_effort": `"high"`}},
		{"disabled is none", "openai", gw.Reasoning{Disabled: true}, map[string]string{"reasoning_effort": `"none"`}},
		{"adaptive without effort sends nothing", "openai", gw.Reasoning{Adaptive: true}, map[string]string{"reasoning_effort": ""}},
		{"deepseek disabled", "deepseek", gw.Reasoning{Disabled: true}, map[string]string{"thinking": `{"type":"disabled"}`, "reasoning_effort": ""}},
		{"deepseek medium is high", "deepseek", gw.Reasoning{Effort: "medium"}, map[string]string{"thinking": `{"type":"enabled"}`, "reasoning_effort": `"high"`}},
		{"deepseek minimal is low", "deepseek", gw.Reasoning{Effort: "minimal"}, map[string]string{"reasoning_effort": `"low"`}},
		{"deepseek budget", "deepseek", gw.Reasoning{BudgetTokens: 20000}, map[string]string{"thinking": `{"type":"enabled"}`, "reasoning_effort": `"high"`}},
		{"openrouter effort", "openrouter", gw.Reasoning{Effort: "low"}, map[string]string{"reasoning": `{"effort":"low"}`, "reasoning_effort": ""}},
		{"openrouter budget", "openrouter", gw.Reasoning{BudgetTokens: 1500}, map[string]string{"reasoning": `{"max_tokens":1500}`}},
		{"openrouter disabled", "openrouter", gw.Reasoning{Disabled: true}, map[string]string{"reasoning": `{"enabled":false}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := tt.in
			m := encodeFields(t, &gw.Request{Model: "m", Messages: userHi(), Reasoning: &rs}, tt.vendor)
			for f, want := range tt.want {
				if got := string(m[f]); got != want {
					t.Errorf("%s = %s, want %s", f, got, want)
				}
			}
		})
	}
}

func TestEncodeRequestDialectFields(t *testing.T) {
	seed, mt, topK := int64(3), 100, 5
	r := func() *gw.Request {
		return &gw.Request{Model: "m", Messages: userHi(), Seed: &seed, MaxTokens: &mt, TopK: &topK, User: "u", Stream: true}
	}
	tests := []struct {
		vendor  string
		present []string
		absent  []string
		dropped []string
	}{
		{"openai", []string{"seed", "max_completion_tokens", "stream_options", "safety_identifier"}, []string{"max_tokens", "top_k", "user"}, []string{"top_k"}},
		{"groq", []string{"max_completion_tokens", "user", "stream_options"}, []string{"max_tokens", "top_k"}, []string{"top_k"}},
		{"mistral", []string{"random_seed", "max_tokens"}, []string{"seed", "stream_options", "user", "top_k"}, []string{"top_k", "user"}},
		{"together", []string{"top_k", "max_tokens", "user", "stream_options"}, []string{"max_completion_tokens"}, nil},
		{"openrouter", []string{"top_k", "max_tokens", "user"}, []string{"stream_options"}, nil},
		{"deepseek", []string{"max_tokens", "stream_options"}, []string{"top_k"}, []string{"top_k"}},
	}
	for _, tt := range tests {
		t.Run(tt.vendor, func(t *testing.T) {
			req := r()
			m := encodeFields(t, req, tt.vendor)
			for _, f := range tt.present {
				if _, ok := m[f]; !ok {
					t.Errorf("%s missing", f)
				}
			}
			for _, f := range tt.absent {
				if _, ok := m[f]; ok {
					t.Errorf("%s present: %s", f, m[f])
				}
			}
			if strings.Join(req.Dropped, ",") != strings.Join(tt.dropped, ",") {
				t.Errorf("Dropped = %v, want %v", req.Dropped, tt.dropped)
			}
		})
	}
}

func TestEncodeRequestParallelToolCallsOnlyWithTools(t *testing.T) {
	f := false
	m := encodeFields(t, &gw.Request{Model: "m", Messages: userHi(), ParallelToolCalls: &f}, "openai")
	if _, ok := m["parallel_tool_calls"]; ok {
		t.Error("parallel_tool_calls sent without tools")
	}
	m = encodeFields(t, &gw.Request{Model: "m", Messages: userHi(), ParallelToolCalls: &f,
		Tools: []gw.Tool{{Name: "t"}}}, "openai")
	if string(m["parallel_tool_calls"]) != "false" {
		t.Errorf("parallel_tool_calls = %s, want false", m["parallel_tool_calls"])
	}
}

func TestEncodeRequestErrors(t *testing.T) {
	tests := []struct {
		name   string
		vendor string
		r      gw.Request
		want   string
	}{
		{"document url", "openai", gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartDocument, URL: "https://x/a.pdf"}}}}}, "messages[0].content[0]: document url"},
		{"image without media type", "openai", gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartImage, Data: "AAAA"}}}}}, "media type"},
		{"arguments not an object", "openai", gw.Request{Messages: []gw.Message{{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartToolCall, ToolCallID: "c", ToolName: "f", Arguments: json.RawMessage(`[1]`)}}}}}, "messages[0].content[0]"},
		{"unknown role", "openai", gw.Request{Messages: []gw.Message{{Role: "bot"}}}, "messages[0].role"},
		{"tool without name", "openai", gw.Request{Messages: userHi(), Tools: []gw.Tool{{}}}, "tools[0].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := DialectFor(tt.vendor)
			_, err := EncodeRequest(&tt.r, d)
			var ge *gw.Error
			if !errors.As(err, &ge) || ge.Code != gw.CodeInvalidRequest || !strings.Contains(ge.Message, tt.want) {
				t.Errorf("err = %v, want invalid_request naming %q", err, tt.want)
			}
		})
	}
}

func TestDecodeRequestBehaviours(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r *gw.Request)
	}{
		{"max_tokens used when max_completion_tokens absent", `{"model":"a/b","max_tokens":77,"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if r.MaxTokens == nil || *r.MaxTokens != 77 {
					t.Errorf("MaxTokens = %v", r.MaxTokens)
				}
			}},
		{"stop list", `{"model":"a/b","stop":["x","y"],"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if strings.Join(r.Stop, ",") != "x,y" {
					t.Errorf("Stop = %v", r.Stop)
				}
			}},
		{"reasoning none disables", `{"model":"a/b","reasoning_effort":"none","messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if r.Reasoning == nil || !r.Reasoning.Disabled {
					t.Errorf("Reasoning = %+v", r.Reasoning)
				}
			}},
		{"include_usage only when streaming", `{"model":"a/b","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if r.Stream || r.IncludeUsage {
					t.Errorf("Stream=%v IncludeUsage=%v", r.Stream, r.IncludeUsage)
				}
			}},
		{"user falls back when no safety_identifier", `{"model":"a/b","user":"u1","messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if r.User != "u1" {
					t.Errorf("User = %q", r.User)
				}
			}},
		{"system after first user message stays in place", `{"model":"a/b","messages":[{"role":"user","content":"x"},{"role":"developer","content":"later"}]}`,
			func(t *testing.T, r *gw.Request) {
				if len(r.System) != 0 || len(r.Messages) != 2 || r.Messages[1].Role != gw.RoleSystem {
					t.Errorf("System=%v Messages=%+v", r.System, r.Messages)
				}
			}},
		{"named tool choice", `{"model":"a/b","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}},"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if r.ToolChoice == nil || r.ToolChoice.Mode != gw.ToolChoiceTool || r.ToolChoice.Name != "f" {
					t.Errorf("ToolChoice = %+v", r.ToolChoice)
				}
				if string(r.Tools[0].Parameters) != `{"type":"object","properties":{}}` {
					t.Errorf("Parameters = %s", r.Tools[0].Parameters)
				}
			}},
		{"null optional fields are not dropped", `{"model":"a/b","metadata":null,"logit_bias":null,"messages":[{"role":"user","content":"x"}]}`,
			func(t *testing.T, r *gw.Request) {
				if len(r.Dropped) != 0 {
					t.Errorf("Dropped = %v", r.Dropped)
				}
			}},
		{"image jpg alias", `{"model":"a/b","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpg;base64,/9j/"}}]}]}`,
			func(t *testing.T, r *gw.Request) {
				if p := r.Messages[0].Content[0]; p.MediaType != "image/jpeg" || p.Data != "/9j/" {
					t.Errorf("part = %+v", p)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestDecodeRequestRefusals(t *testing.T) {
	tests := map[string]string{
		`{"model":"a/b","messages":[{"role":"user","content":"x"}],"top_logprobs":3}`:                                             "top_logprobs",
		`{"model":"a/b","messages":[{"role":"user","content":"x"}],"audio":{"voice":"x"}}`:                                        "audio",
		`{"model":"a/b","messages":[{"role":"user","content":"x"}],"modalities":["text","audio"]}`:                                "modalities",
		`{"model":"a/b","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`:                    "file_id",
		`{"model":"a/b","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x"}}]}]}`:             "image_url.url",
		`{"model":"a/b","messages":[{"role":"tool","content":"x"}]}`:                                                              "tool_call_id",
		`{"model":"a/b","tools":[{"type":"custom","custom":{"name":"x"}}],"messages":[{"role":"user","content":"x"}]}`:            "tools[0].type",
		`{"model":"a/b","tool_choice":{"type":"function","function":{"name":"nope"}},"messages":[{"role":"user","content":"x"}]}`: "nope",
		`{"model":"a/b","reasoning_effort":"extreme","messages":[{"role":"user","content":"x"}]}`:                                 "reasoning_effort",
		`{"messages":[{"role":"user","content":"x"}]}`:                                                                            "model",
		`{"model":"a/b","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`:                                               "max_tokens",
		`{"model":"a/b","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`:                     "response_format",
		`{"model":"a/b","messages":[{"role":"function","name":"f","content":"x"}]}`:                                               "function",
		`{"model":"a/b","messages":[{"role":"user","content":5}]}`:                                                                "messages[0].content",
	}
	for body, want := range tests {
		_, err := DecodeRequest([]byte(body))
		var ge *gw.Error
		if !errors.As(err, &ge) || ge.Code != gw.CodeInvalidRequest || !strings.Contains(ge.Message, want) {
			t.Errorf("DecodeRequest(%s) = %v, want invalid_request naming %q", body, err, want)
		}
	}
}

// errReader fails after its data.
type errReader struct{ data string }

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errors.New("connection reset")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

type closeCounter struct {
	io.Reader
	n int
}

func (c *closeCounter) Close() error { c.n++; return nil }

func TestStreamDecoderEdges(t *testing.T) {
	tests := []struct {
		name   string
		stream io.Reader
		want   string // last event line
	}{
		{"empty body", strings.NewReader(""), "error upstream_error: openai: stream ended before it finished"},
		{"only done", strings.NewReader("data: [DONE]\n\n"), "error upstream_error: openai: stream ended without content"},
		{"read error", &errReader{data: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"}, "error upstream_error: openai: stream read failed"},
		{"malformed chunk", strings.NewReader("data: {not json\n\n"), "error upstream_error: openai: malformed stream chunk"},
		{"done without finish reason", strings.NewReader("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"), "finish stop=end_turn"},
		{"fragment after its call closed", strings.NewReader(
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"text\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\n"),
			"error upstream_error: openai: tool call arguments arrived after the call ended"},
		{"second choice ignored", strings.NewReader("data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}},{\"index\":0,\"delta\":{\"content\":\"mine\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), "finish stop=end_turn"},
	}
	d, _ := DialectFor("openai")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, evs := decodeAll(t, tt.stream, d)
			lines := strings.Split(got, "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tt.want) {
				t.Errorf("last event %q, want prefix %q\n%s", last, tt.want, got)
			}
			for _, ev := range evs {
				if ev.Type == gw.EventDelta && ev.Text == "other" {
					t.Error("a second choice leaked into the stream")
				}
			}
		})
	}
}

func TestStreamDecoderClose(t *testing.T) {
	body := &closeCounter{Reader: strings.NewReader("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")}
	s := NewStreamDecoder(body, nil)
	if ev, err := s.Recv(); err != nil || ev.Type != gw.EventStart {
		t.Fatalf("Recv = %v, %v", ev, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if body.n != 1 {
		t.Errorf("body closed %d times, want 1", body.n)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Errorf("Recv after Close = %v, want io.EOF", err)
	}
}
