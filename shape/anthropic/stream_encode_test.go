package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
)

// countingWriter records each Write call separately.
type countingWriter struct{ writes [][]byte }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

func eventTypes(t *testing.T, writes [][]byte) []string {
	t.Helper()
	var types []string
	for _, w := range writes {
		s := string(w)
		if !strings.HasPrefix(s, "event: ") || !strings.HasSuffix(s, "\n\n") || strings.Count(s, "\n\n") != 1 {
			t.Fatalf("write is not exactly one event: %q", s)
		}
		types = append(types, s[len("event: "):strings.IndexByte(s, '\n')])
	}
	return types
}

func TestStreamEncoderRepairsAndEnds(t *testing.T) {
	text := &gw.Part{Type: gw.PartText}
	tool := &gw.Part{Type: gw.PartToolCall, ToolCallID: "call_1", ToolName: "f"}
	tests := []struct {
		name string
		evs  []gw.Event
		want string
	}{
		{
			name: "missing Start writes message_start first",
			evs:  []gw.Event{{Type: gw.EventBlockStart, Part: text}, {Type: gw.EventDelta, Text: "a"}, {Type: gw.EventBlockStop}, {Type: gw.EventFinish, StopReason: gw.StopEndTurn}},
			want: "message_start content_block_start content_block_delta content_block_stop message_delta message_stop",
		},
		{
			name: "open block is stopped before the next one and before message_delta",
			evs: []gw.Event{{Type: gw.EventStart}, {Type: gw.EventBlockStart, Part: text}, {Type: gw.EventBlockStart, Index: 1, Part: tool},
				{Type: gw.EventDelta, Index: 1, Text: `{}`}, {Type: gw.EventFinish, StopReason: gw.StopToolUse}},
			want: "message_start content_block_start content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop",
		},
		{
			name: "empty deltas write nothing",
			evs:  []gw.Event{{Type: gw.EventStart}, {Type: gw.EventBlockStart, Part: text}, {Type: gw.EventDelta}, {Type: gw.EventBlockStop}},
			want: "message_start content_block_start content_block_stop",
		},
		{
			name: "error before anything is just the error event",
			evs:  []gw.Event{{Type: gw.EventError, Err: &gw.Error{Code: gw.CodeOverloaded, Message: "busy"}}, {Type: gw.EventFinish}},
			want: "error",
		},
		{
			name: "finish with StopError becomes an error event",
			evs:  []gw.Event{{Type: gw.EventStart}, {Type: gw.EventFinish, StopReason: gw.StopError}},
			want: "message_start error",
		},
		{
			name: "events after finish are ignored",
			evs:  []gw.Event{{Type: gw.EventStart}, {Type: gw.EventFinish}, {Type: gw.EventBlockStart, Part: text}, {Type: gw.EventError}},
			want: "message_start message_delta message_stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w countingWriter
			enc := NewStreamEncoder(&w, testMeta)
			for _, ev := range tt.evs {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Join(eventTypes(t, w.writes), " "); got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestStreamEncoderToolArgumentsAreInputJSONDeltas(t *testing.T) {
	var out bytes.Buffer
	enc := NewStreamEncoder(&out, testMeta)
	for _, ev := range []gw.Event{
		{Type: gw.EventStart},
		{Type: gw.EventBlockStart, Part: &gw.Part{Type: gw.PartToolCall, ToolCallID: "call_1", ToolName: "f"}},
		{Type: gw.EventDelta, Text: `{"a":`}, {Type: gw.EventDelta, Text: `1}`},
		{Type: gw.EventBlockStop},
		{Type: gw.EventFinish, StopReason: gw.StopToolUse},
	} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	s := out.String()
	if strings.Contains(s, "text_delta") {
		t.Errorf("tool arguments sent as text_delta:\n%s", s)
	}
	if strings.Count(s, `"type":"input_json_delta"`) != 2 || !strings.Contains(s, `"input":{}`) {
		t.Errorf("want two input_json_delta and a tool_use start with input {}:\n%s", s)
	}
}

func TestStreamEncoderMessageStartCarriesEstimate(t *testing.T) {
	var out bytes.Buffer
	enc := NewStreamEncoder(&out, testMeta)
	if err := enc.Encode(gw.Event{Type: gw.EventStart, Usage: &gw.Usage{InputTokens: 1234}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"input_tokens":1234`) {
		t.Errorf("message_start lacks the input estimate: %s", out.String())
	}
}

func TestStreamEncoderRejectsUnrepresentablePart(t *testing.T) {
	enc := NewStreamEncoder(&bytes.Buffer{}, testMeta)
	err := enc.Encode(gw.Event{Type: gw.EventBlockStart, Part: &gw.Part{Type: gw.PartImage}})
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeUpstream {
		t.Fatalf("got %v, want upstream_error", err)
	}
}

func TestErrorEvent(t *testing.T) {
	tests := []struct {
		code gw.Code
		want string
	}{
		{gw.CodeOverloaded, "overloaded_error"},
		{gw.CodeUpstream, "api_error"},
		{gw.CodeUpstreamTimeout, "api_error"},
	}
	for _, tt := range tests {
		b := ErrorEvent("req_1", &gw.Error{Code: tt.code, Message: "x \"y\"\nz"})
		s := string(b)
		if !strings.HasPrefix(s, "event: error\ndata: ") || !strings.HasSuffix(s, "\n\n") || strings.Count(s, "\n") != 3 {
			t.Fatalf("not one SSE event: %q", s)
		}
		var v struct {
			Type  string
			Error struct {
				Type, Message string
				RequestID     string `json:"request_id"`
			}
		}
		if err := json.Unmarshal([]byte(s[len("event: error\ndata: "):len(s)-2]), &v); err != nil {
			t.Fatal(err)
		}
		if v.Type != "error" || v.Error.Type != tt.want || v.Error.Message != "x \"y\"\nz" || v.Error.RequestID != "req_1" {
			t.Errorf("%s: got %+v", tt.code, v)
		}
	}
}

func TestEncodeResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		r    gw.Response
	}{
		{"stop reason error", gw.Response{StopReason: gw.StopError}},
		{"tool arguments not an object", gw.Response{Content: []gw.Part{{Type: gw.PartToolCall, ToolCallID: "c", ToolName: "f", Arguments: json.RawMessage(`{"a":`)}}}},
		{"image part", gw.Response{Content: []gw.Part{{Type: gw.PartImage, URL: "https://x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeResponse(&tt.r, testMeta)
			if gw.ErrorCode(err) != gw.CodeUpstream {
				t.Fatalf("got %v, want upstream_error", err)
			}
		})
	}
}

func TestStreamDecoderBigEvent(t *testing.T) {
	big := strings.Repeat("x", 40<<10)
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + big + "\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	evs := decodeAll(t, nopCloser(strings.NewReader(stream)))
	checkContract(t, evs)
	if len(evs) != 5 || evs[2].Text != big || evs[4].Type != gw.EventFinish || evs[4].Usage.OutputTokens != 9 {
		t.Fatalf("got %d events", len(evs))
	}
}
