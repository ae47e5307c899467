package anthropic

import (
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

func TestDecodeUsage(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want gw.Usage
	}{
		{
			name: "legacy cache_creation_input_tokens counts as 5m writes",
			raw:  `{"input_tokens":3,"cache_creation_input_tokens":12304,"output_tokens":550}`,
			want: gw.Usage{InputTokens: 3, CacheWrite5mTokens: 12304, OutputTokens: 550, Reported: true},
		},
		{
			name: "cache_creation object splits 5m and 1h",
			raw:  `{"input_tokens":10,"cache_creation_input_tokens":300,"cache_read_input_tokens":40,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":7}`,
			want: gw.Usage{InputTokens: 10, CacheReadTokens: 40, CacheWrite5mTokens: 100, CacheWrite1hTokens: 200, OutputTokens: 7, Reported: true},
		},
		{
			name: "cache_creation object alone",
			raw:  `{"input_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":50},"output_tokens":2}`,
			want: gw.Usage{InputTokens: 1, CacheWrite1hTokens: 50, OutputTokens: 2, Reported: true},
		},
		{
			name: "legacy total above object sum keeps the remainder as 5m",
			raw:  `{"cache_creation_input_tokens":90,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":30}}`,
			want: gw.Usage{CacheWrite5mTokens: 60, CacheWrite1hTokens: 30, Reported: true},
		},
		{
			name: "no cache fields at all",
			raw:  `{"input_tokens":5,"output_tokens":6}`,
			want: gw.Usage{InputTokens: 5, OutputTokens: 6, Reported: true},
		},
		{
			name: "thinking tokens are reasoning",
			raw:  `{"input_tokens":5,"output_tokens":60,"output_tokens_details":{"thinking_tokens":40}}`,
			want: gw.Usage{InputTokens: 5, OutputTokens: 60, ReasoningTokens: 40, Reported: true},
		},
		{
			// Issue 29 item 5: a negative count is malformed (billed from
			// the gateway's own count), not a 0.
			name: "negative counts are malformed",
			raw:  `{"input_tokens":-5,"output_tokens":6}`,
			want: gw.Usage{Malformed: true},
		},
		{name: "null is unreported", raw: `null`, want: gw.Usage{}},
		{name: "empty is unreported", raw: ``, want: gw.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeUsage([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Issue 29 item 5: malformed counts (a float, a string, an exponent,
// beyond int64, negative, no count at all) mark the usage malformed, the
// same on every route; only a usage that is not a JSON object is an
// error.
func TestDecodeUsageMalformed(t *testing.T) {
	for _, raw := range []string{`{"input_tokens":"x"}`, `{"input_tokens":1.5,"output_tokens":2}`, `{"input_tokens":1e3,"output_tokens":2}`,
		`{"input_tokens":9223372036854775808,"output_tokens":2}`, `{"input_tokens":3,"output_tokens":-1}`, `{}`} {
		u, err := DecodeUsage([]byte(raw))
		if err != nil || !u.Malformed || u.Reported {
			t.Errorf("%s: %+v, %v; want malformed, not reported", raw, u, err)
		}
	}
	if _, err := DecodeUsage([]byte(`[1]`)); gw.ErrorCode(err) != gw.CodeUpstream {
		t.Errorf("an array: %v, want upstream_error", err)
	}
}

func TestUsageFromBody(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"cache_read_input_tokens":1792,"cache_creation_input_tokens":12304,"output_tokens":550}}`
	got, err := UsageFromBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := gw.Usage{InputTokens: 3, CacheReadTokens: 1792, CacheWrite5mTokens: 12304, OutputTokens: 550, Reported: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	got, err = UsageFromBody([]byte(`{"id":"msg_1"}`))
	if err != nil || got.Reported {
		t.Errorf("no usage: got %+v, %v; want unreported", got, err)
	}
	if _, err := UsageFromBody([]byte(`{`)); gw.ErrorCode(err) != gw.CodeUpstream {
		t.Errorf("malformed: got %v, want upstream_error", err)
	}
}

// meterStream runs a raw M stream through a Meter via the SSE reader.
func meterStream(t *testing.T, stream string) *Meter {
	t.Helper()
	m := NewMeter()
	r := sse.NewReader(strings.NewReader(stream))
	for r.Next() {
		ev := r.Event()
		m.Observe(&ev)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMeter(t *testing.T) {
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":12304,\"cache_read_input_tokens\":100,\"cache_creation\":{\"ephemeral_5m_input_tokens\":12000,\"ephemeral_1h_input_tokens\":304},\"output_tokens\":1}}}\n\n"
	const body = "event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"usage\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	tests := []struct {
		name     string
		stream   string
		want     gw.Usage
		wantDone bool
		wantErr  gw.Code
	}{
		{
			name: "message_delta output replaces message_start output and keeps cache counts",
			stream: start + body +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":550}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			want:     gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 12000, CacheWrite1hTokens: 304, OutputTokens: 550, Reported: true},
			wantDone: true,
		},
		{
			name: "cumulative message_delta input and cache counts replace, never add, keeping the 1h split",
			stream: start + body +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":12304,\"cache_read_input_tokens\":100,\"output_tokens\":550}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			want:     gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 12000, CacheWrite1hTokens: 304, OutputTokens: 550, Reported: true},
			wantDone: true,
		},
		{
			name:   "stream cut before message_stop is not done",
			stream: start + body,
			want:   gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 12000, CacheWrite1hTokens: 304, OutputTokens: 1, Reported: true},
		},
		{
			name: "overloaded error event",
			stream: start + body +
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			want:    gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 12000, CacheWrite1hTokens: 304, OutputTokens: 1, Reported: true},
			wantErr: gw.CodeOverloaded,
		},
		{
			name: "other error event is upstream_error",
			stream: start +
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n",
			want:    gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 12000, CacheWrite1hTokens: 304, OutputTokens: 1, Reported: true},
			wantErr: gw.CodeUpstream,
		},
		{
			name: "data-only events fall back on the payload type",
			stream: "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
				"data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":4}}\n\n" +
				"data: {\"type\":\"message_stop\"}\n\n",
			want:     gw.Usage{InputTokens: 9, OutputTokens: 4, Reported: true},
			wantDone: true,
		},
		{
			name:   "no usage at all is unreported",
			stream: "event: ping\ndata: {\"type\":\"ping\"}\n\n: keep-alive\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := meterStream(t, tt.stream)
			if got := m.Usage(); got != tt.want {
				t.Errorf("usage: got %+v, want %+v", got, tt.want)
			}
			if m.Done() != tt.wantDone {
				t.Errorf("done: got %v, want %v", m.Done(), tt.wantDone)
			}
			var gotErr gw.Code
			if m.Err() != nil {
				gotErr = m.Err().Code
			}
			if gotErr != tt.wantErr {
				t.Errorf("err: got %v, want %v", m.Err(), tt.wantErr)
			}
		})
	}
}

func TestMeterObserveSkipsContentDeltas(t *testing.T) {
	m := NewMeter()
	// A malformed content delta must be ignored, not decoded.
	m.Observe(&sse.Event{Type: "content_block_delta", Data: []byte(`{not json`)})
	if m.Err() != nil || m.Usage().Reported {
		t.Fatalf("content delta changed meter: %+v %v", m.Usage(), m.Err())
	}
}

func BenchmarkMeterObserve(b *testing.B) {
	delta := sse.Event{Type: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello world"}}`)}
	md := sse.Event{Type: "message_delta", Data: []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":550}}`)}
	b.Run("content_delta", func(b *testing.B) {
		b.ReportAllocs()
		m := NewMeter()
		for b.Loop() {
			m.Observe(&delta)
		}
	})
	b.Run("message_delta", func(b *testing.B) {
		b.ReportAllocs()
		m := NewMeter()
		for b.Loop() {
			m.Observe(&md)
		}
	})
}

// Issue 29 item 6: what Anthropic bills beyond tokens is read from its
// answer: server_tool_use counts, the tier and speed that served it, and
// a code-execution container; in a stream, message_start's tier and
// speed stand when message_delta leaves them out, and the final counts
// are message_delta's.
func TestHostedUsage(t *testing.T) {
	u, err := UsageFromBody([]byte(`{"container":{"id":"container_1"},"usage":{"input_tokens":10,"output_tokens":5,"server_tool_use":{"web_search_requests":3,"web_fetch_requests":1},"service_tier":"priority","speed":"fast"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (gw.Hosted{ServiceTier: "priority", Fast: true, WebSearches: 3, WebFetches: 1, CodeContainers: 1}); u.Hosted != want {
		t.Errorf("body: %+v, want %+v", u.Hosted, want)
	}
	u, _ = UsageFromBody([]byte(`{"container":null,"usage":{"input_tokens":10,"output_tokens":5,"service_tier":"standard"}}`))
	if u.Hosted != (gw.Hosted{}) {
		t.Errorf("plain answer: %+v", u.Hosted)
	}
	m := NewMeter()
	m.Observe(&sse.Event{Type: "message_start", Data: []byte(`{"type":"message_start","message":{"id":"m","usage":{"input_tokens":10,"output_tokens":1,"server_tool_use":{"web_search_requests":0},"service_tier":"standard","speed":"fast"}}}`)})
	m.Observe(&sse.Event{Type: "message_delta", Data: []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn","container":{"id":"container_2"}},"usage":{"input_tokens":10,"output_tokens":7,"server_tool_use":{"web_search_requests":2}}}`)})
	if want := (gw.Hosted{Fast: true, WebSearches: 2, CodeContainers: 1}); m.Usage().Hosted != want {
		t.Errorf("stream: %+v, want %+v", m.Usage().Hosted, want)
	}
	// A malformed count marks the usage malformed (billed from the
	// gateway's own count), as for tokens.
	if u, _ := UsageFromBody([]byte(`{"usage":{"input_tokens":10,"output_tokens":5,"server_tool_use":{"web_search_requests":1.5}}}`)); !u.Malformed {
		t.Errorf("float search count: %+v", u)
	}
}
