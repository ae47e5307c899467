package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/route"
)

// openai-go's Responses client, unchanged, on all nine prefixes: openai/
// is the native route to the fake's own Responses API, the others are
// mapped. Non-streaming, streaming (every event in order), a tool loop
// kept by the gateway or the vendor (previous_response_id), and the
// stateless loop Codex runs (store false, reasoning carried by the caller
// as encrypted_content).

func TestSDKResponses(t *testing.T) {
	e := newEnv(t)
	c := e.rClient()
	ctx := context.Background()
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:       "get_weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	}}
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			want := fakevendor.DefaultText(v, nativeModels[v])

			r, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello. [fake:reasoning]")},
			})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if r.Status != "completed" || r.OutputText() != want {
				t.Fatalf("create: status %q text %q, want %q", r.Status, r.OutputText(), want)
			}
			// Reasoning tokens where the vendor counts them apart (Anthropic,
			// Fireworks and Mistral count them in the output only).
			wantReasoning := int64(fakevendor.Tokens(len(fakevendor.ReasoningText(nativeModels[v]))))
			switch v {
			case "anthropic", "fireworks", "mistral":
				wantReasoning = 0
			}
			if u := r.Usage; u.InputTokens <= 0 || u.TotalTokens != u.InputTokens+u.OutputTokens || u.OutputTokensDetails.ReasoningTokens != wantReasoning {
				t.Errorf("create usage %s, want reasoning_tokens %d", u.RawJSON(), wantReasoning)
			}

			stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
				Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello. [fake:reasoning]")},
			})
			var deltas strings.Builder
			var final *responses.Response
			n := int64(0)
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber != n {
					t.Fatalf("event %d (%s) has sequence_number %d", n, ev.Type, ev.SequenceNumber)
				}
				n++
				switch ev.Type {
				case "response.output_text.delta":
					deltas.WriteString(ev.Delta)
				case "response.completed":
					resp := ev.Response
					final = &resp
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if final == nil || deltas.String() != want || final.OutputText() != want || final.Usage.OutputTokens != r.Usage.OutputTokens {
				t.Fatalf("stream: deltas %q, completed %+v", deltas.String(), final)
			}

			// The tool loop kept server-side.
			first, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather? [fake:tool]")},
				Tools: []responses.ToolUnionParam{tool},
			})
			if err != nil {
				t.Fatalf("tool call: %v", err)
			}
			call := functionCallOf(first)
			if call == nil || call.Name != "get_weather" || call.Arguments != `{"city":"x"}` {
				t.Fatalf("tool call: %s", first.RawJSON())
			}
			second, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model:              model,
				PreviousResponseID: openai.String(first.ID),
				Input:              responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{functionOutput(call.CallID, "sunny")}},
				Tools:              []responses.ToolUnionParam{tool},
			})
			if err != nil {
				t.Fatalf("previous_response_id turn: %v", err)
			}
			if second.OutputText() != "Tool said: sunny" || second.PreviousResponseID != first.ID {
				t.Fatalf("previous_response_id turn: %s", second.RawJSON())
			}

			// The stateless loop: store false, encrypted reasoning replayed.
			input := []map[string]any{{"role": "user", "content": "Weather? [fake:reasoning] [fake:tool]"}}
			// The replayed items are sent as the API returned them.
			body := func(items []map[string]any) option.RequestOption {
				raw, _ := json.Marshal(map[string]any{
					"model": model, "store": false, "include": []string{"reasoning.encrypted_content"},
					"reasoning": map[string]any{"summary": "auto"}, "input": items,
					"tools": []any{map[string]any{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}},
				})
				return option.WithRequestBody("application/json", raw)
			}
			a, err := c.Responses.New(ctx, responses.ResponseNewParams{}, body(input))
			if err != nil {
				t.Fatalf("store:false: %v", err)
			}
			var replay []map[string]any
			sawEncrypted := false
			for _, it := range a.Output {
				var m map[string]any
				if err := json.Unmarshal([]byte(it.RawJSON()), &m); err != nil {
					t.Fatal(err)
				}
				if it.Type == "reasoning" && it.EncryptedContent != "" {
					sawEncrypted = true
				}
				replay = append(replay, m)
			}
			call = functionCallOf(a)
			if !sawEncrypted || call == nil {
				t.Fatalf("store:false output without encrypted reasoning and a call: %s", a.RawJSON())
			}
			replay = append(append(input, replay...), map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "sunny"})
			b, err := c.Responses.New(ctx, responses.ResponseNewParams{}, body(replay))
			if err != nil {
				t.Fatalf("store:false replay: %v", err)
			}
			if b.OutputText() != "Tool said: sunny" {
				t.Fatalf("store:false replay: %s", b.RawJSON())
			}
		})
	}
}

func functionCallOf(r *responses.Response) *responses.ResponseFunctionToolCall {
	for _, it := range r.Output {
		if it.Type == "function_call" {
			fc := it.AsFunctionCall()
			return &fc
		}
	}
	return nil
}

// TestResponsesWebSocketUpgradeRefused: a WebSocket upgrade on
// /v1/responses (Codex's WebSocket transport, tried first when a provider
// says it supports it) is refused with 426 Upgrade Required in R's error
// shape, on which Codex falls back to HTTP at once (on 405 it tries the
// upgrade a second time; on 400 the turn fails).
func TestResponsesWebSocketUpgradeRefused(t *testing.T) {
	e := newEnv(t)
	req, err := http.NewRequest(http.MethodGet, e.url+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Error struct {
			Type, Message, Code string
			RequestID           string `json:"request_id"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusUpgradeRequired || json.Unmarshal(b, &body) != nil || body.Error.Message == "" || body.Error.RequestID == "" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if len(e.fake.Requests()) != 0 {
		t.Fatal("the upgrade reached a vendor")
	}
	// A plain GET stays a 405.
	resp2, err := http.Get(e.url + "/v1/responses")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("plain GET: %d", resp2.StatusCode)
	}
}
