package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
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
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) { testResponsesMappedToolLoop(t, dbURL) })
	}
}

func testResponsesMappedToolLoop(t *testing.T, dbURL string) {
	e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
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
	if !calibration(b) {
		f.mu.Lock()
		f.bodies = append(f.bodies, b)
		f.mu.Unlock()
	}
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

// calibration reports whether body is one of the optimizer's calibration
// requests (a "Hello" with at most 16 output tokens), not a request under
// test.
func calibration(body []byte) bool {
	return bytes.Contains(body, []byte(`"Hello"`)) && (bytes.Contains(body, []byte(`"max_output_tokens":16`)) ||
		bytes.Contains(body, []byte(`"max_tokens":16`)) || bytes.Contains(body, []byte(`"max_completion_tokens":16`)))
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
	e := newEnv(t, func(c *app.Config) { c.Vendors["openai"] = app.VendorConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-r"} })
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

	// A hosted tool the rate card cannot price for the model is left out
	// of the vendor request and named, not refused (Codex declares hosted
	// tools on every turn); the caller's other tools and bytes go as
	// sent. A priced one (web_search on gpt-6-sol) goes through and is
	// billed (TestHostedUnitsBilled).
	tresp := e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"hello","tools":[{"type":"function","name":"f","parameters":{}},{"type":"file_search","vector_store_ids":["vs_1"]}]}`))
	readAll(t, tresp.Body)
	if tresp.StatusCode != 200 || tresp.Header.Get("X-Gateway-Dropped-Tools") != "file_search" {
		t.Fatalf("file_search: %d, dropped tools %q", tresp.StatusCode, tresp.Header.Get("X-Gateway-Dropped-Tools"))
	}
	if want := `{"model":"gpt-6-sol","input":"hello","tools":[{"type":"function","name":"f","parameters":{}}]`; !strings.HasPrefix(string(f.last()), want) || strings.Contains(string(f.last()), "file_search") {
		t.Fatalf("vendor got %s, want %s", f.last(), want)
	}

	sresp := e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"hello","stream":true}`))
	sgot := readAll(t, sresp.Body)
	if string(sgot) != rFakeEvents {
		t.Fatalf("stream relayed as\n%s", sgot)
	}
	// The fake reports more prompt tokens than a body can hold, so each
	// request is charged at the gateway's bound, which depends on its
	// body: the trailer is the stream's recorded charge, and the usage
	// past the prompt is the non-streamed one's.
	sr, nr := recordOf(t, e, sresp), recordOf(t, e, resp)
	if tr := sresp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); tr != sr.Charge.CentsString() || charge != nr.Charge.CentsString() || sr.Charge <= 0 {
		t.Fatalf("stream charge %q (recorded %s), non-stream %q (recorded %s)", tr, sr.Charge.CentsString(), charge, nr.Charge.CentsString())
	}
	if sr.Usage.OutputTokens != nr.Usage.OutputTokens || sr.Usage.ReasoningTokens != nr.Usage.ReasoningTokens {
		t.Fatalf("stream usage %+v, non-stream %+v", sr.Usage, nr.Usage)
	}

	// Continuing the account's own response reaches the vendor.
	resp = e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"more","max_output_tokens":60,"previous_response_id":"resp_native2"}`))
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("own previous response: %d", resp.StatusCode)
	}
	// OpenAI bills the kept conversation (1,000 prompt tokens here) for
	// a body of a few bytes: the charge is its full price.
	rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
	if strings.Contains(rec.Note, "capped") || rec.Usage.PromptTokens() != 1000 || rec.Charge <= 0 {
		t.Fatalf("continued response billed %+v note %q", rec.Usage, rec.Note)
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

// rPost posts a raw Responses body and decodes the answer.
func (e *env) rPost(t *testing.T, key, body string) (map[string]any, *http.Response) {
	t.Helper()
	resp := e.post("/v1/responses", key, []byte(body))
	b := readAll(t, resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return v, resp
}

// TestResponsesStatelessReasoning is what Codex does: store:false with
// include reasoning.encrypted_content, the output items replayed as the
// next request's input. The vendor's reasoning state (Anthropic thinking
// signatures, DeepSeek reasoning_content, Gemini thought signatures)
// must reach the vendor again from the sealed blob alone; a blob altered
// by one byte, or sent by another account, is a 400.
func TestResponsesStatelessReasoning(t *testing.T) {
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) { testResponsesStatelessReasoning(t, dbURL) })
	}
}

func testResponsesStatelessReasoning(t *testing.T, dbURL string) {
	e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
	tools := `[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	for _, v := range mappedRPrefixes {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			user := `{"role":"user","content":"[fake:reasoning][fake:tool] weather in Paris?"}`
			first, _ := e.rPost(t, e.key, `{"model":"`+model+`","store":false,"include":["reasoning.encrypted_content"],"input":[`+user+`],"tools":`+tools+`}`)
			out, _ := json.Marshal(first["output"])
			var items []map[string]any
			_ = json.Unmarshal(out, &items)
			var callID, blob string
			for _, it := range items {
				switch it["type"] {
				case "function_call":
					callID, _ = it["call_id"].(string)
				case "reasoning":
					if s, ok := it["encrypted_content"].(string); ok {
						blob = s
					}
				}
			}
			if callID == "" {
				t.Fatalf("no call in %s", out)
			}
			// store:false keeps nothing server-side.
			req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/responses/"+first["id"].(string), nil)
			req.Header.Set("Authorization", "Bearer "+e.key)
			if gr, err := http.DefaultClient.Do(req); err != nil || gr.StatusCode != 404 {
				t.Fatalf("store:false response kept: %v %v", err, gr.StatusCode)
			} else {
				gr.Body.Close()
			}
			if blob == "" && v != "openrouter" && v != "together" && v != "groq" && v != "mistral" && v != "fireworks" {
				t.Fatalf("no reasoning blob in %s", out)
			}
			input := user + "," + string(out[1:len(out)-1]) + `,{"type":"function_call_output","call_id":"` + callID + `","output":"sunny"}`
			e.fake.Reset()
			second, _ := e.rPost(t, e.key, `{"model":"`+model+`","store":false,"include":["reasoning.encrypted_content"],"input":[`+input+`],"tools":`+tools+`}`)
			if second["status"] != "completed" {
				t.Fatalf("second: %v", second)
			}
			reqs := e.fake.Requests()
			sent := string(reqs[len(reqs)-1].Body)
			switch v {
			case "anthropic":
				if !strings.Contains(sent, `"signature":"`) || !strings.Contains(sent, `"type":"thinking"`) {
					t.Fatalf("thinking not replayed: %s", sent)
				}
			case "deepseek":
				if !strings.Contains(sent, `"reasoning_content":"`) {
					t.Fatalf("reasoning not replayed: %s", sent)
				}
			}
			if blob == "" {
				return
			}
			// Tampered: one character of the sealed part changed.
			i := len(blob) - 5
			c := byte('A')
			if blob[i] == 'A' {
				c = 'B'
			}
			bad := blob[:i] + string(c) + blob[i+1:]
			resp := e.post("/v1/responses", e.key, []byte(`{"model":"`+model+`","store":false,"input":[`+strings.Replace(input, blob, bad, 1)+`]}`))
			b := readAll(t, resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(b), "encrypted_content") {
				t.Fatalf("tampered blob: %d %s", resp.StatusCode, b)
			}
			other, _, err := createKey(context.Background(), e.m.Store(), "other-"+v, 10*gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			resp = e.post("/v1/responses", other, []byte(`{"model":"`+model+`","store":false,"input":[`+input+`],"tools":`+tools+`}`))
			b = readAll(t, resp.Body)
			if resp.StatusCode != 400 {
				t.Fatalf("another account's blob: %d %s", resp.StatusCode, b)
			}
		})
	}
}

// codexBody is what Codex sends (captured shape): developer messages for
// its system prompt, function tools, a namespace group, the hosted
// web_search, a custom apply_patch tool, client_metadata, store false and
// encrypted reasoning.
func codexBody(model, prompt string, stream bool) string {
	s := "false"
	if stream {
		s = "true"
	}
	return `{"model":"` + model + `","instructions":null,"input":[` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex, a coding agent."}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd=/tmp</environment_context>"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"` + prompt + `"}]}],` +
		`"tools":[{"type":"function","name":"exec_command","description":"Run a command","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}},` +
		`{"type":"namespace","name":"multi_agent_v1","description":"Agents","tools":[{"type":"function","name":"spawn_agent","description":"Spawn","parameters":{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}}]},` +
		`{"type":"custom","name":"apply_patch","description":"Apply a patch","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},` +
		`{"type":"web_search","external_web_access":false}],` +
		`"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,"stream":` + s + `,` +
		`"include":["reasoning.encrypted_content"],"prompt_cache_key":"019a-thread","client_metadata":{"originator":"codex_exec"}}`
}

// TestResponsesCodexShape sends Codex's request on every mapped prefix:
// never a 400 (web_search is left out and named in a header), the
// namespace tool is flattened for the vendor and restored in the answer,
// the custom tool's call comes back as a custom_tool_call with its raw
// input, developer messages are system content, and client_metadata
// never reaches the vendor.
func TestResponsesCodexShape(t *testing.T) {
	e := newEnv(t)
	for _, v := range mappedRPrefixes {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			e.fake.Reset()
			got, resp := e.rPost(t, e.key, codexBody(model, `[fake:call=multi_agent_v1__spawn_agent:{\"task\":\"t\"}][fake:call=apply_patch:{\"input\":\"*** Begin Patch\"}]`, false))
			if h := resp.Header.Get("X-Gateway-Dropped-Tools"); h != "web_search" {
				t.Fatalf("dropped tools header %q", h)
			}
			out, _ := json.Marshal(got["output"])
			if !strings.Contains(string(out), `"name":"spawn_agent","namespace":"multi_agent_v1"`) ||
				!strings.Contains(string(out), `"type":"custom_tool_call"`) || !strings.Contains(string(out), `"input":"*** Begin Patch"`) {
				t.Fatalf("output %s", out)
			}
			reqs := e.fake.Requests()
			sent := string(reqs[len(reqs)-1].Body)
			if strings.Contains(sent, "client_metadata") || strings.Contains(sent, "web_search") || !strings.Contains(sent, "multi_agent_v1__spawn_agent") {
				t.Fatalf("vendor got %s", sent)
			}
			if !strings.Contains(sent, "You are Codex") {
				t.Fatalf("developer message lost: %s", sent)
			}
			// The same as a stream, through openai-go's event types.
			sresp := e.post("/v1/responses", e.key, []byte(codexBody(model, `[fake:call=apply_patch:{\"input\":\"*** Begin Patch\"}]`, true)))
			sb := string(readAll(t, sresp.Body))
			for _, ev := range []string{"response.created", "response.output_item.added", "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done", "response.output_item.done", "response.completed"} {
				if !strings.Contains(sb, "event: "+ev+"\n") {
					t.Fatalf("no %s in\n%s", ev, sb)
				}
			}
		})
	}
}

// TestResponsesInputTokens is openai-go's responses.inputTokens.count:
// the vendor's count on anthropic/ and google/, an estimate elsewhere.
func TestResponsesInputTokens(t *testing.T) {
	e := newEnv(t)
	c := e.rClient()
	for _, v := range []string{"openai", "anthropic", "google", "groq"} {
		var hp *http.Response
		got, err := c.Responses.InputTokens.Count(context.Background(), responses.InputTokenCountParams{
			Model: openai.String(v + "/" + nativeModels[v]),
			Input: responses.InputTokenCountParamsInputUnion{OfString: openai.String("How many tokens is this sentence?")},
		}, option.WithResponseInto(&hp))
		if err != nil {
			t.Fatal(v, err)
		}
		want := "estimate"
		if v == "anthropic" || v == "google" {
			want = "vendor"
		}
		if got.InputTokens < 5 || hp.Header.Get("X-Gateway-Token-Count") != want {
			t.Fatalf("%s: %d tokens, %q", v, got.InputTokens, hp.Header.Get("X-Gateway-Token-Count"))
		}
	}
}

// TestResponsesItemReference is what the AI SDK sends with store on: the
// earlier output items as item_reference (and reasoning items by id
// without a blob), no previous_response_id. The gateway resolves them
// from the kept response, for the account only.
func TestResponsesItemReference(t *testing.T) {
	e := newEnv(t)
	tools := `[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	for _, v := range []string{"deepseek", "anthropic", "google"} {
		model := v + "/" + nativeModels[v]
		user := `{"role":"user","content":"[fake:reasoning][fake:tool] weather in Paris?"}`
		first, _ := e.rPost(t, e.key, `{"model":"`+model+`","input":[`+user+`],"tools":`+tools+`}`)
		var refs []string
		callID := ""
		for _, it := range first["output"].([]any) {
			m := it.(map[string]any)
			if m["type"] == "reasoning" {
				refs = append(refs, `{"type":"reasoning","id":"`+m["id"].(string)+`","summary":[]}`)
			} else {
				refs = append(refs, `{"type":"item_reference","id":"`+m["id"].(string)+`"}`)
			}
			if m["type"] == "function_call" {
				callID = m["call_id"].(string)
			}
		}
		input := user + "," + strings.Join(refs, ",") + `,{"type":"function_call_output","call_id":"` + callID + `","output":"sunny"}`
		second, _ := e.rPost(t, e.key, `{"model":"`+model+`","input":[`+input+`],"tools":`+tools+`}`)
		if second["status"] != "completed" {
			t.Fatalf("%s: %v", v, second)
		}
		sent := string(e.lastRequest().Body)
		if v == "deepseek" && !strings.Contains(sent, `"reasoning_content":"`) || v == "anthropic" && !strings.Contains(sent, `"signature":"`) {
			t.Fatalf("%s: reasoning not restored: %s", v, sent)
		}
		other, _, err := createKey(context.Background(), e.m.Store(), "other-"+v, 10*gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		resp := e.post("/v1/responses", other, []byte(`{"model":"`+model+`","input":[`+input+`],"tools":`+tools+`}`))
		if b := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(string(b), "item_reference") && !strings.Contains(string(b), "no item") {
			t.Fatalf("%s: another account's items: %d %s", v, resp.StatusCode, b)
		}
	}
}

// TestResponsesNativeState: on openai/ OpenAI keeps stored responses;
// GET, input_items and DELETE through the gateway reach it for the
// account that made the response, and are 404 for another account.
func TestResponsesNativeState(t *testing.T) {
	e := newEnv(t)
	c := e.rClient()
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "openai/" + nativeModels["openai"],
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello")},
		Store: openai.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != resp.ID || got.OutputText() != resp.OutputText() {
		t.Fatalf("get: %v %+v", err, got)
	}
	items, err := c.Responses.InputItems.List(ctx, resp.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) == 0 {
		t.Fatalf("input items: %v %+v", err, items)
	}
	other, _, err := createKey(ctx, e.m.Store(), "other", 10*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	oc := openai.NewClient(option.WithBaseURL(e.url+"/v1"), option.WithAPIKey(other), option.WithMaxRetries(0))
	if _, err := oc.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("another account's get: %v", err)
	}
	if err := oc.Responses.Delete(ctx, resp.ID); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("another account's delete: %v", err)
	}
	if err := c.Responses.Delete(ctx, resp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("get after delete: %v", err)
	}
}

// TestResponsesNativeStreamBreak: OpenAI's stream ends before its
// terminal event: the caller gets an error event numbered after the last
// relayed one, and the request is not billed.
func TestResponsesNativeStreamBreak(t *testing.T) {
	cut := rFakeEvents[:strings.Index(rFakeEvents, "event: response.completed")]
	f := &rFake{answer: rFakeAnswer, events: cut}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEnv(t, func(c *app.Config) { c.Vendors["openai"] = app.VendorConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-r"} })
	resp := e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"hello","stream":true}`))
	got := string(readAll(t, resp.Body))
	if !strings.HasPrefix(got, cut) || !strings.Contains(got[len(cut):], "event: error\n") || !strings.Contains(got[len(cut):], `"sequence_number":2`) {
		t.Fatalf("stream:\n%s", got)
	}
	if rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id")); rec.Charge != 0 {
		t.Fatalf("a broken stream was charged %v", rec.Charge)
	}
}

// Issue 38 item 5: on /v1/responses the caller got the directive back
// inside "instructions". Now the answer echoes the caller's own
// instructions (null when it sent none), on the native route (openai/)
// and a mapped one, stream and not.
func TestResponsesEchoCallerInstructions(t *testing.T) {
	e := newEnv(t, withOptimizer, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	for _, model := range []string{"openai/gpt-6-sol", "groq/llama-3.3-70b-versatile", "anthropic/claude-sonnet-5-5"} {
		for _, instr := range []string{"", `,"instructions":"Be brief."`} {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s instructions=%v stream=%v", model, instr != "", stream)
				s := `{"model":` + quote(model) + `,"input":"Say hello.","max_output_tokens":64` + instr
				if stream {
					s += `,"stream":true`
				}
				resp := e.post("/v1/responses", e.key, []byte(s+`}`))
				b := readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Errorf("%s: status %d %s", name, resp.StatusCode, b)
					continue
				}
				if resp.Header.Get("X-Gateway-Optimize") != "applied; v=1" {
					t.Errorf("%s: the directive was not applied", name)
				}
				if strings.Contains(string(b), "Answer concisely") {
					t.Errorf("%s: the directive came back to the caller:\n%s", name, b)
				}
				want := `"instructions":null`
				if instr != "" {
					want = `"instructions":"Be brief."`
				}
				if c := strings.Count(string(b), `"instructions":`); c == 0 || strings.Count(string(b), want) != c {
					t.Errorf("%s: instructions not the caller's own (%s):\n%s", name, want, b)
				}
			}
		}
	}
}
