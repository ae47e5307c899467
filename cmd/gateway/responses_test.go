package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	gw "github.com/gwlabs/gateway"

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

// rFake is a minimal OpenAI Responses endpoint for the native route's
// tests: it records the body it got and answers a fixed response object
// (or its event stream) with the usage given.
type rFake struct {
	mu     sync.Mutex
	bodies [][]byte
	answer string // non-stream body
	events string // stream body
}

func (f *rFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, b)
	f.mu.Unlock()
	if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer sk-r" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if strings.Contains(string(b), `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, f.events)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, f.answer)
}

func (f *rFake) last() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}

const rFakeAnswer = `{"id":"resp_native1","object":"response","created_at":1,"status":"completed","model":"gpt-6-sol","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}],"usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":400},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":1050},"x_vendor_extra":true}`

const rFakeEvents = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_native2\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\n" +
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_native2\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1000,\"input_tokens_details\":{\"cached_tokens\":400},\"output_tokens\":50,\"output_tokens_details\":{\"reasoning_tokens\":20},\"total_tokens\":1050}}}\n\n"

// TestResponsesNative checks the openai/ route: the caller's bytes reach
// OpenAI's /v1/responses with only the model rewritten, the answer and the
// stream come back byte for byte, the usage (cached and reasoning tokens)
// is billed like the same usage on Chat Completions, and a
// previous_response_id of another account is 404 before any vendor call.
func TestResponsesNative(t *testing.T) {
	f := &rFake{answer: rFakeAnswer, events: rFakeEvents}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEnv(t, func(c *Config) { c.Vendors["openai"] = VendorConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-r"} })
	body := `{"model":"openai/gpt-6-sol","input":"hello","store":true,"client_metadata":{"x":1}}`
	resp := e.post("/v1/responses", e.key, []byte(body))
	got := readAll(t, resp.Body)
	if resp.StatusCode != 200 || string(got) != rFakeAnswer {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	if want := `{"model":"gpt-6-sol","input":"hello","store":true,"client_metadata":{"x":1}`; !strings.HasPrefix(string(f.last()), want) {
		t.Fatalf("vendor got %s", f.last())
	}
	charge := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
	if charge == "" || charge == "0.000000" {
		t.Fatalf("charge %q", charge)
	}

	sresp := e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"hello","stream":true}`))
	sgot := readAll(t, sresp.Body)
	if string(sgot) != rFakeEvents {
		t.Fatalf("stream relayed as\n%s", sgot)
	}
	if tr := sresp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); tr != charge {
		t.Fatalf("stream charge %q, non-stream %q (same usage)", tr, charge)
	}

	// Continuing the account's own response reaches the vendor.
	resp = e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"more","previous_response_id":"resp_native2"}`))
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("own previous response: %d", resp.StatusCode)
	}
	// Another account's is not found.
	other, _, err := createKey(context.Background(), e.m.Store(), "other", 10*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	n := len(f.bodies)
	resp = e.post("/v1/responses", other, []byte(`{"model":"openai/gpt-6-sol","input":"more","previous_response_id":"resp_native1"}`))
	eb := readAll(t, resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(eb), `"code":"response_not_found"`) || len(f.bodies) != n {
		t.Fatalf("other account: %d %s", resp.StatusCode, eb)
	}
}
