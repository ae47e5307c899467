package server

import (
	"io"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/provider/google"
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
