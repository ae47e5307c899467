package chat

import (
	"io"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/provider/google"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratecard"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
)

// streamUsage runs a vendor stream through a decoder and keeps its usage
// the way mappedStream does.
func streamUsage(t *testing.T, es gw.EventStream) gw.Usage {
	t.Helper()
	defer es.Close()
	var u gw.Usage
	for {
		ev, err := es.Recv()
		if err == io.EOF {
			return u
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == gw.EventError {
			t.Fatalf("stream error: %v", ev.Err)
		}
		if ev.Type == gw.EventStart || ev.Type == gw.EventFinish {
			mergeEventUsage(&u, ev)
		}
	}
}

// Issue 19.5: a later usage report lowers a bucket to 0 on mapped streams.
func TestMappedStreamUsageLatestWins(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	b := billing.New(card, billing.Options{})
	tests := []struct {
		name          string
		es            gw.EventStream
		vendor, model string
		want          gw.Usage
		charge        gw.Money
	}{
		{
			// The first record's usageMetadata has no
			// cachedContentTokenCount; the last says all 6,003 prompt
			// tokens were cached. gemini-3.1-pro: 6,003 x 20 + 2,000 x
			// 1,200 = 2,520,060 micro-cents; x1.09 = 2,746,865.4 ->
			// 2,746,865 (2.75 cents). Keeping the first record's 6,003
			// uncached added 6,003 x 200: 4,055,519 (4.06 cents).
			name: "gemini cached count arrives late",
			es: google.NewStreamDecoder(io.NopCloser(strings.NewReader(
				"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]}}],\"usageMetadata\":{\"promptTokenCount\":6003,\"totalTokenCount\":6003}}\r\n\r\n" +
					"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\" there\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":6003,\"cachedContentTokenCount\":6003,\"candidatesTokenCount\":2000,\"totalTokenCount\":8003}}\r\n\r\n"))),
			vendor: "google", model: "gemini-3.1-pro",
			want:   gw.Usage{CacheReadTokens: 6_003, OutputTokens: 2_000, Reported: true},
			charge: 2_746_865,
		},
		{
			// message_start reports 5,003 cache writes; message_delta
			// reports 0. claude-sonnet-5-5: 3 x 200 + 412 x 1,000 =
			// 412,600; x1.09 = 449,734. Keeping the 5,003 writes added
			// 5,003 x 250 = 1,250,750 (1,813,051).
			name: "anthropic cache writes lowered to 0",
			es: anthropicshape.NewStreamDecoder(io.NopCloser(strings.NewReader(
				"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-5-5\",\"content\":[],\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":5003,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n" +
					"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
					"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
					"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
					"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":3,\"cache_creation_input_tokens\":0,\"output_tokens\":412}}\n\n" +
					"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))),
			vendor: "anthropic", model: "claude-sonnet-5-5",
			want:   gw.Usage{InputTokens: 3, OutputTokens: 412, Reported: true},
			charge: 449_734,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := streamUsage(t, tc.es)
			if u != tc.want {
				t.Fatalf("usage %+v, want %+v", u, tc.want)
			}
			q, err := b.Price(tc.vendor, tc.model, u)
			if err != nil {
				t.Fatal(err)
			}
			if q.Charge != tc.charge {
				t.Errorf("charge %d, want %d", q.Charge, tc.charge)
			}
		})
	}
}

// Issue 19.3: without vendor usage, the same answer is billed the same
// output on every route, stream or not: the text relayed, counted alike.
func TestRelayedTextSameStreamOrNot(t *testing.T) {
	// The text "Héllo \"w\" 😀\n" is H(1) é(2) llo(3) space(1) "w"(3)
	// space(1) 😀(4) newline(1) = 16 bytes; the reasoning "think" 5; the
	// arguments {"a":1} 7: 28 in all.
	tests := []struct {
		name   string
		whole  string
		chunks []string
	}{
		{
			name:  "C",
			whole: `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"H\u00e9llo \"w\" \ud83d\ude00\n","reasoning_content":"think","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}],"usage":null}`,
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"Héllo"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":" \"w\" 😀\n"}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
		},
		{
			name:  "M",
			whole: `{"id":"m","type":"message","content":[{"type":"thinking","thinking":"think","signature":"sig"},{"type":"text","text":"Héllo \"w\" \ud83d\ude00\n"},{"type":"tool_use","id":"t","name":"f","input":{"a":1}}],"usage":null}`,
			chunks: []string{
				`{"type":"message_start","message":{"id":"m","content":[]}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"H\u00e9llo \"w\" "}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"😀\n"}}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole := relayedTextBytes([]byte(tc.whole))
			var streamed int64
			for _, c := range tc.chunks {
				streamed += relayedTextBytes([]byte(c))
			}
			// 16 bytes of text, 5 of reasoning, 7 of arguments.
			if whole != 28 {
				t.Errorf("non-stream text bytes %d, want 28", whole)
			}
			// The M stream's empty "input":{} adds its 2 bytes.
			if d := streamed - whole; d != 0 && !(tc.name == "M" && d == 2) {
				t.Errorf("stream text bytes %d, non-stream %d", streamed, whole)
			}
		})
	}
}

func TestPromptEstimateIgnoresDelivery(t *testing.T) {
	a := &proxy.Inbound{Body: []byte(`{"model":"openai/x","messages":[{"role":"user","content":"hello there"}]}`)}
	b := &proxy.Inbound{Body: []byte(`{"model":"openai/x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello there"}]}`)}
	if ea, eb := promptEstimate(a), promptEstimate(b); ea != eb || ea != (int64(len(a.Body))+3)/4 {
		t.Errorf("prompt estimates %d and %d, want both %d", ea, eb, (len(a.Body)+3)/4)
	}
}

// A body let go of (letGoBody) is estimated as it was before it went.
func TestPromptEstimateOutlivesTheBody(t *testing.T) {
	in := &proxy.Inbound{Body: []byte(`{"model":"openai/x","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("hello ", 5000) + `"}]}`)}
	want := promptEstimate(in)
	in.BodyTokens = promptEstimate(in)
	in.Body = nil
	if got := promptEstimate(in); got != want || want == 0 {
		t.Errorf("estimate after the body went %d, before %d", got, want)
	}
	if u := estimateUsage(in, 7); u.InputTokens != want || u.OutputTokens != 7 {
		t.Errorf("estimated usage %+v, want %d in and 7 out", u, want)
	}
}
