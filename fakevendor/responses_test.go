package fakevendor_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/gwlabs/gateway/fakevendor"
)

// postResponses posts body to the fake's /v1/responses and returns the
// status and the body.
func postResponses(t *testing.T, s *fakevendor.Server, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, s.BaseURL("openai")+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.APIKey("openai"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// respEvent is one event of a Responses stream.
type respEvent struct {
	name string
	data map[string]any
}

func respEvents(t *testing.T, b []byte) []respEvent {
	t.Helper()
	var out []respEvent
	var name string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if m["type"] != name {
				t.Fatalf("event %q carries type %v", name, m["type"])
			}
			out = append(out, respEvent{name, m})
		}
	}
	return out
}

func TestResponsesSDKCreateAndStream(t *testing.T) {
	s := start(t)
	c := openaiClient(s, "openai")
	ctx := testCtx(t)
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-x", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hi [fake:reasoning] [fake:cache=7]")},
		Reasoning: openai.ReasoningParam{Summary: openai.ReasoningSummaryAuto},
		Include:   []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() != fakevendor.DefaultText("openai", "gpt-x") || r.Status != "completed" || !strings.HasPrefix(r.ID, "resp_") {
		t.Errorf("text %q status %q id %q", r.OutputText(), r.Status, r.ID)
	}
	if len(r.Output) != 2 || r.Output[0].Type != "reasoning" || !strings.HasPrefix(r.Output[0].EncryptedContent, "gAAAAA") ||
		len(r.Output[0].Summary) != 1 || r.Output[0].Summary[0].Text != fakevendor.ReasoningText("gpt-x") {
		t.Errorf("output %+v", r.Output)
	}
	reasoning := int64(fakevendor.Tokens(len(fakevendor.ReasoningText("gpt-x"))))
	text := int64(fakevendor.Tokens(len(fakevendor.DefaultText("openai", "gpt-x"))))
	u := r.Usage
	if u.InputTokensDetails.CachedTokens != 7 || u.OutputTokensDetails.ReasoningTokens != reasoning || u.OutputTokens != reasoning+text || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v", u)
	}

	// The stream: the SDK's accumulation gives the same answer.
	st := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "gpt-x", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hi [fake:reasoning]")},
		Reasoning: openai.ReasoningParam{Summary: openai.ReasoningSummaryAuto},
	})
	var deltas strings.Builder
	var types []string
	var final responses.Response
	seq := int64(0)
	for st.Next() {
		ev := st.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("sequence_number %d, want %d", ev.SequenceNumber, seq)
		}
		seq++
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas.WriteString(ev.Delta)
		case "response.completed":
			final = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	want := "response.created response.in_progress response.output_item.added response.reasoning_summary_part.added"
	if got := strings.Join(types, " "); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "response.output_item.done response.completed") ||
		!strings.Contains(got, "response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done response.output_item.added response.content_part.added response.output_text.delta") {
		t.Errorf("event order: %s", got)
	}
	if deltas.String() != fakevendor.DefaultText("openai", "gpt-x") || final.OutputText() != deltas.String() || final.Usage.OutputTokensDetails.ReasoningTokens != reasoning {
		t.Errorf("deltas %q final %q usage %+v", deltas.String(), final.OutputText(), final.Usage)
	}
}

func TestResponsesToolLoopWithPreviousResponseID(t *testing.T) {
	s := start(t)
	c := openaiClient(s, "openai")
	ctx := testCtx(t)
	tool := responses.ToolParamOfFunction("get_weather", map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"},
	}, true)
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-x", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather? [fake:tool]")},
		Tools: []responses.ToolUnionParam{tool},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 1 || r.Output[0].Type != "function_call" || r.Output[0].Name != "get_weather" || r.Output[0].Arguments.OfString != `{"city":"x"}` ||
		!strings.HasPrefix(r.Output[0].CallID, "call_") || !strings.HasPrefix(r.Output[0].ID, "fc_") {
		t.Fatalf("output %+v", r.Output)
	}
	next, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-x", PreviousResponseID: openai.String(r.ID), Tools: []responses.ToolUnionParam{tool},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(r.Output[0].CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("sunny")},
			}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if next.OutputText() != "Tool said: sunny" || next.PreviousResponseID != r.ID {
		t.Errorf("second turn %q prev %q", next.OutputText(), next.PreviousResponseID)
	}
	// The kept response and its input items.
	got, err := c.Responses.Get(ctx, next.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != "Tool said: sunny" {
		t.Fatalf("get: %v %+v", err, got)
	}
	items, err := c.Responses.InputItems.List(ctx, next.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) != 1 || items.Data[0].Type != "function_call_output" {
		t.Fatalf("input items: %v %+v", err, items)
	}
	if err := c.Responses.Delete(ctx, next.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Responses.Get(ctx, next.ID, responses.ResponseGetParams{})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("get after delete: %v", err)
	}
	// An unknown previous_response_id is OpenAI's 400.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-x", PreviousResponseID: openai.String("resp_nope"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "previous_response_not_found" {
		t.Errorf("unknown previous id: %v", err)
	}
}

func TestResponsesStatelessEncryptedReasoningRoundTrip(t *testing.T) {
	s := start(t)
	first := `{"model":"gpt-x","store":false,"include":["reasoning.encrypted_content"],"reasoning":{"summary":"auto"},` +
		`"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}],` +
		`"input":[{"type":"message","role":"developer","content":"be brief"},{"type":"message","role":"user","content":[{"type":"input_text","text":"run it [fake:reasoning] [fake:tool]"}]}]}`
	status, b := postResponses(t, s, first)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	var r struct {
		ID     string           `json:"id"`
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Output) != 2 {
		t.Fatalf("%v %s", err, b)
	}
	rs, fc := r.Output[0], r.Output[1]
	// store false: nothing to continue from.
	if status, b := postResponses(t, s, `{"model":"gpt-x","previous_response_id":"`+r.ID+`","input":"hi"}`); status != 400 || !strings.Contains(string(b), "previous_response_not_found") {
		t.Errorf("continue a store:false response: %d %s", status, b)
	}
	replay := func(reasoning map[string]any, output bool) (int, []byte) {
		items := []any{
			map[string]any{"type": "message", "role": "user", "content": "run it [fake:reasoning] [fake:tool]"},
			reasoning,
			map[string]any{"type": "function_call", "call_id": fc["call_id"], "name": fc["name"], "arguments": fc["arguments"]},
		}
		if output {
			items = append(items, map[string]any{"type": "function_call_output", "call_id": fc["call_id"], "output": "done-77"})
		}
		body, _ := json.Marshal(map[string]any{"model": "gpt-x", "store": false, "include": []string{"reasoning.encrypted_content"}, "input": items,
			"tools": []any{map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{"type": "object"}}}})
		return postResponses(t, s, string(body))
	}
	if status, b := replay(rs, true); status != 200 || !strings.Contains(string(b), "Tool said: done-77") {
		t.Errorf("replay with encrypted reasoning: %d %s", status, b)
	}
	if status, b := replay(map[string]any{"type": "reasoning", "id": rs["id"], "summary": []any{}}, true); status != 404 || !strings.Contains(string(b), "Items are not persisted when `store` is set to false") {
		t.Errorf("reasoning by id under store:false: %d %s", status, b)
	}
	tampered := map[string]any{"type": "reasoning", "id": rs["id"], "summary": []any{}, "encrypted_content": rs["encrypted_content"].(string) + "x"}
	if status, b := replay(tampered, true); status != 400 || !strings.Contains(string(b), "invalid_encrypted_content") {
		t.Errorf("tampered encrypted_content: %d %s", status, b)
	}
	if status, b := replay(rs, false); status != 400 || !strings.Contains(string(b), "No tool output found for function call") {
		t.Errorf("call without output: %d %s", status, b)
	}
}

func TestResponsesRequestRules(t *testing.T) {
	s := start(t)
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"gpt-x","input":"hi","messages":[]}`, 400, `"code":"unknown_parameter"`},
		{`{"model":"gpt-x","input":"hi","stream":true,"stream_options":{"include_usage":true}}`, 400, `Unknown parameter: 'stream_options.include_usage'.`},
		{`{"input":"hi"}`, 400, `"param":"model"`},
		{`{"model":"gpt-x"}`, 400, `Missing required parameter: 'input'.`},
		{`{"model":"gpt-x","input":"hi","max_output_tokens":5}`, 400, `integer_below_min_value`},
		{`{"model":"gpt-x","input":[{"type":"function_call_output","call_id":"call_9","output":"x"}]}`, 400, `No tool call found for function call output with call_id call_9.`},
		{`{"model":"gpt-missing","input":"hi"}`, 404, `model_not_found`},
		{`{"model":"gpt-x","input":"hi [fake:status=429]"}`, 429, `rate_limit_exceeded`},
		{`{"model":"gpt-x","input":"hi [fake:bogus]"}`, 400, `unknown directive`},
		{`{"model":"gpt-x","client_metadata":{"a":"b"},"prompt_cache_key":"k","input":"hi"}`, 200, `"prompt_cache_key":"k"`},
		{`{"model":"gpt-x","input":"hi [fake:stop=length]"}`, 200, `"incomplete_details":{"reason":"max_output_tokens"}`},
	} {
		status, b := postResponses(t, s, tc.body)
		if status != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.body, status, b, tc.status, tc.want)
		}
	}
}

func TestResponsesStreamToolsAndFailures(t *testing.T) {
	s := start(t)
	tools := `"tools":[{"type":"custom","name":"apply_patch"},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent","parameters":{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}}]},{"type":"web_search","external_web_access":false}]`
	status, b := postResponses(t, s, `{"model":"gpt-x","stream":true,`+tools+`,"input":"edit [fake:call=apply_patch:{\"input\":\"*** Begin Patch\"}] [fake:call=spawn_agent]"}`)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	evs := respEvents(t, b)
	var custom, args string
	var done []map[string]any
	for i, e := range evs {
		if num := e.data["sequence_number"].(float64); int(num) != i {
			t.Errorf("event %d has sequence_number %v", i, num)
		}
		switch e.name {
		case "response.custom_tool_call_input.delta":
			custom += e.data["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e.data["delta"].(string)
		case "response.output_item.done":
			done = append(done, e.data["item"].(map[string]any))
		}
	}
	if custom != "*** Begin Patch" || args != `{"task":"x"}` || len(done) != 2 || done[0]["type"] != "custom_tool_call" || done[1]["namespace"] != "multi_agent_v1" || done[1]["name"] != "spawn_agent" {
		t.Errorf("custom %q args %q items %v", custom, args, done)
	}
	if last := evs[len(evs)-1]; last.name != "response.completed" {
		t.Errorf("last event %s", last.name)
	}
	status, b = postResponses(t, s, `{"model":"gpt-x","stream":true,"input":"hi [fake:error-after=2]"}`)
	evs = respEvents(t, b)
	if status != 200 || len(evs) < 2 || evs[len(evs)-2].name != "error" || evs[len(evs)-1].name != "response.failed" {
		t.Fatalf("error-after: %d %s", status, b)
	}
	for i, e := range evs {
		if int(e.data["sequence_number"].(float64)) != i {
			t.Errorf("error-after: event %d %s has sequence_number %v", i, e.name, e.data["sequence_number"])
		}
	}
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, s.BaseURL("openai")+"/responses", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("WebSocket upgrade: %d, want 426", resp.StatusCode)
	}
	status, b = postResponses(t, s, `{"model":"gpt-x","stream":true,"input":"hi [fake:stop=length]"}`)
	if evs = respEvents(t, b); status != 200 || evs[len(evs)-1].name != "response.incomplete" {
		t.Errorf("stop=length stream: %d %s", status, b)
	}
}

// FuzzResponsesRequest posts arbitrary bodies to the Responses route: the
// fake answers every one with a status and a JSON or event-stream body,
// never a panic. (Directives are left out: hang and break are meant to
// misbehave.)
func FuzzResponsesRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"gpt-x","input":"hi"}`,
		`{"model":"gpt-x","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
		`{"model":"gpt-x","tools":[{"type":"namespace","name":"n","tools":[{"type":"namespace"}]}],"input":"x"}`,
		`{"model":"gpt-x","input":[{"type":"reasoning","encrypted_content":"gAAAAAB!"},{"type":"item_reference","id":"x"}]}`,
		`{"model":"gpt-x","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"y"}]}]}`,
		`{"model":1,"input":{},"stream_options":[],"max_output_tokens":1.5}`,
	} {
		f.Add(seed)
	}
	s := fakevendor.NewHandler()
	f.Cleanup(func() { _ = s.Close() })
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(body, "[fake:") {
			return
		}
		req, _ := http.NewRequest(http.MethodPost, "/openai/v1/responses", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fakevendor.APIKey("openai"))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		ct := w.Header().Get("Content-Type")
		if w.Code == 0 || !(strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/event-stream")) {
			t.Fatalf("status %d content type %q for %q", w.Code, ct, body)
		}
		if w.Code != http.StatusOK && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("status %d with a non-JSON body %q", w.Code, w.Body.String())
		}
		s.Reset()
	})
}

// TestResponsesPrefixCache: with the prefix cache on, a second call that
// repeats the first one's instructions and input reports the kept prefix
// as input_tokens_details.cached_tokens (a multiple of 128, as OpenAI).
func TestResponsesPrefixCache(t *testing.T) {
	s := start(t)
	s.EnablePrefixCache(0)
	long := strings.Repeat("All work and no play makes a dull model. ", 200)
	body := func(turn string) string {
		b, _ := json.Marshal(map[string]any{
			"model": "gpt-x", "instructions": long, "prompt_cache_key": "k1",
			"input": []any{map[string]any{"role": "user", "content": long}, map[string]any{"role": "user", "content": turn}},
		})
		return string(b)
	}
	cached := func(b []byte) int {
		var r struct {
			Usage struct {
				InputTokens        int `json:"input_tokens"`
				InputTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"input_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Usage.InputTokensDetails.CachedTokens > r.Usage.InputTokens {
			t.Fatalf("cached %d > input %d", r.Usage.InputTokensDetails.CachedTokens, r.Usage.InputTokens)
		}
		return r.Usage.InputTokensDetails.CachedTokens
	}
	if status, b := postResponses(t, s, body("first")); status != 200 || cached(b) != 0 {
		t.Fatalf("first call: %d %s", status, b)
	}
	status, b := postResponses(t, s, body("second"))
	if c := cached(b); status != 200 || c == 0 || c%128 != 0 {
		t.Fatalf("second call: cached %d (%d %s)", c, status, b)
	}
}
