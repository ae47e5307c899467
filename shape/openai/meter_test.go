package openai

import (
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// observeAll feeds a raw SSE stream through a Meter and returns the data
// of the events it told the caller to hide.
func observeAll(t *testing.T, m *Meter, stream string) (hidden []string) {
	t.Helper()
	r := sse.NewReader(strings.NewReader(stream))
	for r.Next() {
		ev := r.Event()
		if m.Observe(&ev) {
			hidden = append(hidden, string(ev.Data))
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return hidden
}

func TestMeter(t *testing.T) {
	tests := []struct {
		name      string
		hideUsage bool
		stream    string
		wantUsage gw.Usage
		wantDone  bool
		wantErr   gw.Code
		wantHide  int
	}{
		{
			name:      "openai usage chunk hidden when the gateway asked for it",
			hideUsage: true,
			stream: `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"usage"},"finish_reason":null}],"usage":null}

data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1816,"completion_tokens":3,"total_tokens":1819,"prompt_tokens_details":{"cached_tokens":1792}}}

data: [DONE]

`,
			wantUsage: gw.Usage{InputTokens: 24, CacheReadTokens: 1792, OutputTokens: 3, Reported: true},
			wantDone:  true,
			wantHide:  1,
		},
		{
			name:      "usage chunk relayed when the caller asked for it",
			hideUsage: false,
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}\n\ndata: [DONE]\n\n",
			wantUsage: gw.Usage{InputTokens: 5, OutputTokens: 9, Reported: true},
			wantDone:  true,
		},
		{
			name: "groq x_groq usage on the finish chunk",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"x_groq\":{\"id\":\"req_x\",\"usage\":{\"queue_time\":0.1,\"prompt_tokens\":30,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":10}}}}\n\n" +
				"data: [DONE]\n\n",
			wantUsage: gw.Usage{InputTokens: 20, CacheReadTokens: 10, OutputTokens: 4, Reported: true},
			wantDone:  true,
		},
		{
			name: "together usage on the finish chunk with spaces and CRLF",
			stream: "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"eos\"}], \"usage\": {\"prompt_tokens\": 12, \"completion_tokens\": 6}}\r\n\r\n" +
				"data: [DONE]\r\n\r\n",
			wantUsage: gw.Usage{InputTokens: 12, OutputTokens: 6, Reported: true},
			wantDone:  true,
		},
		{
			name: "openrouter cost and processing comments",
			stream: ": OPENROUTER PROCESSING\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"cost\":0.0000421}}\n\n" +
				"data: [DONE]\n\n",
			wantUsage: gw.Usage{InputTokens: 10, OutputTokens: 2, Reported: true, ReportedCost: 4210, HasReportedCost: true, ReportedCostUSD: "421/10000000"},
			wantDone:  true,
		},
		{
			name: "openrouter mid-stream error with finish_reason error",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"error\":{\"code\":502,\"message\":\"Provider disconnected\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\"}]}\n\n" +
				"data: [DONE]\n\n",
			wantDone: true,
			wantErr:  gw.CodeUpstream,
		},
		{
			name:    "openai error chunk reporting overload",
			stream:  "data: {\"error\":{\"message\":\"The server is overloaded\",\"type\":\"server_overloaded\",\"code\":null}}\n\n",
			wantErr: gw.CodeOverloaded,
		},
		{
			name:    "groq x_groq error",
			stream:  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}],\"x_groq\":{\"id\":\"r\",\"error\":\"stream stopped: capacity\"}}\n\n",
			wantErr: gw.CodeUpstream,
		},
		{
			name:   "cut stream is not done and has no usage",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"},\"finish_reason\":null}],\"usage\":null}\n\n",
		},
		{
			name: "a later usage object replaces an earlier one",
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":8}}\n\n",
			wantUsage: gw.Usage{InputTokens: 5, OutputTokens: 8, Reported: true},
			wantDone:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeter(tt.hideUsage)
			m.SetVendor("test")
			hidden := observeAll(t, m, tt.stream)
			if got := m.Usage(); got != tt.wantUsage {
				t.Errorf("Usage = %+v\nwant    %+v", got, tt.wantUsage)
			}
			if got := m.Done(); got != tt.wantDone {
				t.Errorf("Done = %v, want %v", got, tt.wantDone)
			}
			var gotCode gw.Code
			if e := m.Err(); e != nil {
				gotCode = e.Code
				if !strings.HasPrefix(e.Message, "test: ") {
					t.Errorf("Err message %q lacks the vendor prefix", e.Message)
				}
			}
			if gotCode != tt.wantErr {
				t.Errorf("Err code = %q, want %q", gotCode, tt.wantErr)
			}
			if len(hidden) != tt.wantHide {
				t.Errorf("hidden %d events %q, want %d", len(hidden), hidden, tt.wantHide)
			}
		})
	}
}

func TestHasNonNullKey(t *testing.T) {
	tests := []struct {
		data string
		key  string
		want bool
	}{
		{`{"usage":null}`, "usage", false},
		{`{"usage" : null,"x":1}`, "usage", false},
		{`{"usage":{"a":1}}`, "usage", true},
		{`{"content":"usage"}`, "usage", false},
		{`{"content":"\"usage\": 1"}`, "usage", false},
		{`{"finish_reason":null,"b":{"finish_reason":"stop"}}`, "finish_reason", true},
		{`{"x":"usage","usage":{}}`, "usage", true},
		{`{"usages":1}`, "usage", false},
	}
	for _, tt := range tests {
		if got := hasNonNullKey([]byte(tt.data), tt.key); got != tt.want {
			t.Errorf("hasNonNullKey(%s, %q) = %v, want %v", tt.data, tt.key, got, tt.want)
		}
	}
}

func TestErrorChunk(t *testing.T) {
	got := string(ErrorChunk("req_01ABC", &gw.Error{Code: gw.CodeOverloaded, Message: "anthropic: Overloaded"}))
	want := `{"error":{"type":"overloaded","message":"anthropic: Overloaded","request_id":"req_01ABC"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func BenchmarkMeterObserveContentChunk(b *testing.B) {
	ev := sse.Event{Data: []byte(`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-5","choices":[{"index":0,"delta":{"content":" the quick brown fox"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1y2z3"}`)}
	m := NewMeter(true)
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(&ev)
	}
}

func BenchmarkMeterObserveUsageChunk(b *testing.B) {
	ev := sse.Event{Data: []byte(`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-5","choices":[],"usage":{"prompt_tokens":1816,"completion_tokens":300,"total_tokens":2116,"prompt_tokens_details":{"cached_tokens":1792,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":128}}}`)}
	m := NewMeter(true)
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(&ev)
	}
}
