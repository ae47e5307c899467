package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// mappedRPrefixes are the prefixes whose vendors do not serve the
// Responses API: the gateway maps R to their shape.
var mappedRPrefixes = []string{"anthropic", "google", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"}

func (e *env) rClient() openai.Client {
	return openai.NewClient(option.WithBaseURL(e.url+"/v1"), option.WithAPIKey(e.key), option.WithMaxRetries(0))
}

// TestResponsesMappedSDK runs openai-go's Responses client (create and
// the stream accumulator) on every mapped prefix: the answer's text, the
// usage and the charge header.
func TestResponsesMappedSDK(t *testing.T) {
	e := newEnv(t)
	c := e.rClient()
	ctx := context.Background()
	for _, v := range mappedRPrefixes {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			var hdr http.Response
			var hp *http.Response = &hdr
			resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model:        model,
				Instructions: openai.String("Be brief."),
				Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello")},
			}, option.WithResponseInto(&hp))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != "completed" || resp.OutputText() == "" {
				t.Fatalf("status %q, text %q", resp.Status, resp.OutputText())
			}
			if !strings.HasPrefix(resp.ID, "resp_") || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
				t.Fatalf("id %q usage %+v", resp.ID, resp.Usage)
			}
			if hp.Header.Get("X-Gateway-Customer-Charge-Cents") == "" {
				t.Fatal("no charge header")
			}

			stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
				Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello")},
			})
			var types []string
			var completed *responses.Response
			for stream.Next() {
				ev := stream.Current()
				types = append(types, ev.Type)
				if ev.Type == "response.completed" {
					r := ev.Response
					completed = &r
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if completed == nil || completed.OutputText() == "" || completed.Usage.OutputTokens == 0 {
				t.Fatalf("events %v", types)
			}
			if types[0] != "response.created" || types[1] != "response.in_progress" {
				t.Fatalf("events %v", types)
			}
		})
	}
}

// TestResponsesMappedToolLoop runs a function-tool round trip with
// previous_response_id (the gateway keeps the conversation) and then the
// same with store:false and the output items replayed, on every mapped
// prefix.
func TestResponsesMappedToolLoop(t *testing.T) {
	e := newEnv(t)
	c := e.rClient()
	ctx := context.Background()
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:       "get_weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	}}
	for _, v := range mappedRPrefixes {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			first, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("[fake:tool] weather in Paris?")},
				Tools: []responses.ToolUnionParam{tool},
			})
			if err != nil {
				t.Fatal(err)
			}
			var call *responses.ResponseFunctionToolCall
			for _, it := range first.Output {
				if it.Type == "function_call" {
					fc := it.AsFunctionCall()
					call = &fc
				}
			}
			if call == nil || call.Name != "get_weather" || !json.Valid([]byte(call.Arguments)) {
				t.Fatalf("no function call in %s", first.RawJSON())
			}
			second, err := c.Responses.New(ctx, responses.ResponseNewParams{
				Model:              model,
				PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
					functionOutput(call.CallID, "sunny"),
				}},
				Tools: []responses.ToolUnionParam{tool},
			})
			if err != nil {
				t.Fatal(err)
			}
			if second.Status != "completed" || second.OutputText() == "" {
				t.Fatalf("second turn: %s", second.RawJSON())
			}
			got, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
			if err != nil || got.ID != second.ID || got.OutputText() != second.OutputText() {
				t.Fatalf("get: %v %+v", err, got)
			}
			items, err := c.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{})
			if err != nil || len(items.Data) != 1 {
				t.Fatalf("input items: %v %+v", err, items)
			}
			if err := c.Responses.Delete(ctx, second.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{}); err == nil || !strings.Contains(err.Error(), "404") {
				t.Fatalf("get after delete: %v", err)
			}
		})
	}
}

func functionOutput(callID, out string) responses.ResponseInputItemUnionParam {
	p := responses.ResponseInputItemParamOfFunctionCallOutput(out)
	p.OfFunctionCallOutput.CallID = openai.String(callID)
	return p
}
