package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/sse"
)

// End-to-end checks of shape G, the Gemini API's endpoints, on all nine
// prefixes: google/ passed through byte for byte, every other prefix
// mapped, streamed (SSE and Google's JSON array) and not.

// geminiBody is a generateContent body with one user turn.
func geminiBody(text, extra string) []byte {
	return []byte(`{"contents":[{"role":"user","parts":[{"text":` + quote(text) + `}]}],"generationConfig":{"maxOutputTokens":256` + extra + `}}`)
}

// gpost sends a G request with the key in x-goog-api-key.
func (e *env) gpost(path string, body []byte, hdr ...string) *http.Response {
	e.t.Helper()
	return e.post(path, "", body, append([]string{"X-Goog-Api-Key", e.key}, hdr...)...)
}

// gResponse is what the tests read of a GenerateContentResponse.
type gResponse struct {
	Candidates []struct {
		Content *struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         *string `json:"text"`
				Thought      bool    `json:"thought"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount     int64 `json:"promptTokenCount"`
		CandidatesTokenCount int64 `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
		TotalTokenCount      int64 `json:"totalTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
	ResponseID   string `json:"responseId"`
	Error        *struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

// text joins the non-thought text of the records; finish is the last
// finishReason; usage the last usageMetadata.
func gSummary(t *testing.T, rs []gResponse) (text, finish string, calls []string, usage int64) {
	t.Helper()
	for _, r := range rs {
		if r.Error != nil {
			t.Fatalf("error record: %+v", r.Error)
		}
		for _, c := range r.Candidates {
			if c.Content != nil {
				for _, p := range c.Content.Parts {
					if p.Text != nil && !p.Thought {
						text += *p.Text
					}
					if p.FunctionCall != nil {
						calls = append(calls, p.FunctionCall.Name+":"+string(p.FunctionCall.Args))
					}
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
		if r.UsageMetadata != nil {
			usage = r.UsageMetadata.TotalTokenCount
		}
	}
	return text, finish, calls, usage
}

// gRecords reads a G answer: a body, an SSE stream or a JSON array.
func gRecords(t *testing.T, b []byte, mode string) []gResponse {
	t.Helper()
	switch mode {
	case "sse":
		var out []gResponse
		rd := sse.NewReader(bytes.NewReader(b))
		for rd.Next() {
			ev := rd.Event()
			if len(ev.Data) == 0 {
				continue
			}
			var r gResponse
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.Fatalf("event %q: %v", ev.Data, err)
			}
			out = append(out, r)
		}
		return out
	case "array":
		var out []gResponse
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("not a JSON array: %v\n%s", err, b)
		}
		return out
	}
	var r gResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return []gResponse{r}
}

func gPath(model, mode string) string {
	switch mode {
	case "sse":
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	case "array":
		return "/v1beta/models/" + model + ":streamGenerateContent"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// TestGeminiEveryPrefix: on all nine prefixes, generateContent and both
// streams answer in Google's shape with the fake's reply, finishReason
// STOP, usageMetadata, the gateway's headers and a charge equal to the
// record's.
func TestGeminiEveryPrefix(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	for _, v := range route.Vendors() {
		for _, mode := range []string{"body", "sse", "array"} {
			t.Run(v+"/"+mode, func(t *testing.T) {
				model := v + "/" + nativeModels[v]
				resp := e.gpost(gPath(model, mode), geminiBody("Say hello.", ""))
				got := readAll(t, resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, got)
				}
				if vv := resp.Header.Get("X-Gateway-Vendor"); vv != v {
					t.Errorf("x-gateway-vendor = %q", vv)
				}
				if m := resp.Header.Get("X-Gateway-Model"); m != model {
					t.Errorf("x-gateway-model = %q", m)
				}
				wantCT := "application/json"
				if mode == "sse" {
					wantCT = "text/event-stream"
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, wantCT) {
					t.Errorf("content-type = %q, want %s", ct, wantCT)
				}
				text, finish, _, total := gSummary(t, gRecords(t, got, mode))
				if text == "" || finish != "STOP" || total <= 0 {
					t.Errorf("text %q finish %q total %d\n%s", text, finish, total, got)
				}
				told := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
				if mode != "body" {
					told = resp.Trailer.Get("X-Gateway-Customer-Charge-Cents")
				}
				rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
				if rec.Charge <= 0 || told != rec.Charge.CentsString() || rec.Endpoint != "gemini" {
					t.Errorf("charge %d told %q endpoint %q", rec.Charge, told, rec.Endpoint)
				}
				if v == "google" {
					// Native: the vendor got the caller's bytes and the
					// caller the vendor's (re-framed as an array there).
					sent := e.lastRequest()
					if !bytes.Equal(sent.Body, geminiBody("Say hello.", "")) {
						t.Errorf("vendor received %s", sent.Body)
					}
					direct := e.direct("google", sent)
					if mode != "array" && !bytes.Equal(direct, got) {
						t.Errorf("caller received\n%s\nvendor sent\n%s", got, direct)
					}
					if mode == "array" {
						// The same records, each byte for byte, in an array.
						var recs []json.RawMessage
						_ = json.Unmarshal(got, &recs)
						var events [][]byte
						rd := sse.NewReader(bytes.NewReader(direct))
						for rd.Next() {
							if d := rd.Event().Data; len(d) > 0 {
								events = append(events, bytes.Clone(d))
							}
						}
						if len(recs) != len(events) || len(events) == 0 {
							t.Fatalf("%d records, the vendor sent %d events", len(recs), len(events))
						}
						for i := range recs {
							if !bytes.Equal(recs[i], events[i]) {
								t.Errorf("record %d\n%s\nvendor event\n%s", i, recs[i], events[i])
							}
						}
					}
				}
			})
		}
	}
}

// TestGeminiKeysAndErrors: the key is taken from x-goog-api-key, ?key=
// or Bearer; errors come in Google's envelope, 429 with RetryInfo.
func TestGeminiKeysAndErrors(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	path := gPath("openai/"+nativeModels["openai"], "body")
	body := geminiBody("Say hello.", "")
	for name, do := range map[string]func() *http.Response{
		"header": func() *http.Response { return e.gpost(path, body) },
		"query":  func() *http.Response { return e.post(path+"?key="+e.key, "", body) },
		"bearer": func() *http.Response { return e.post(path, e.key, body) },
	} {
		resp := do()
		b := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d: %s", name, resp.StatusCode, b)
		}
	}
	// A field no other vendor has is dropped by rule and named.
	resp := e.gpost(path, []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`))
	b := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Gateway-Dropped-Fields") != "safetySettings" {
		t.Errorf("safetySettings: %d dropped %q: %s", resp.StatusCode, resp.Header.Get("X-Gateway-Dropped-Fields"), b)
	}
	check := func(name string, resp *http.Response, status int, rpc string) {
		t.Helper()
		b := readAll(t, resp.Body)
		var env struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
				Details []struct {
					Type       string `json:"@type"`
					RetryDelay string `json:"retryDelay"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != status || env.Error.Code != status || env.Error.Status != rpc || env.Error.Message == "" {
			t.Errorf("%s: status %d body %s", name, resp.StatusCode, b)
		}
		if status == http.StatusTooManyRequests {
			found := false
			for _, d := range env.Error.Details {
				found = found || strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && strings.HasSuffix(d.RetryDelay, "s")
			}
			if !found || resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s: no RetryInfo: %s", name, b)
			}
		}
	}
	check("no key", e.post(path, "", body), http.StatusUnauthorized, "UNAUTHENTICATED")
	check("bad json", e.gpost(path, []byte(`{"contents":`)), http.StatusBadRequest, "INVALID_ARGUMENT")
	check("dup key", e.gpost(path, []byte(`{"contents":[],"contents":[]}`)), http.StatusBadRequest, "INVALID_ARGUMENT")
	check("unknown model", e.gpost(gPath("nosuch/model", "body"), body), http.StatusBadRequest, "INVALID_ARGUMENT")
	check("cachedContent mapped", e.gpost(path, []byte(`{"cachedContent":"cachedContents/x","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)), http.StatusBadRequest, "INVALID_ARGUMENT")
	check("vendor 429", e.gpost(path, geminiBody("hi [fake:status=429]", "")), http.StatusTooManyRequests, "RESOURCE_EXHAUSTED")
	check("bad method", e.gpost("/v1beta/models/openai/gpt-6-sol:predictLongRunning", body), http.StatusNotFound, "NOT_FOUND")
	// embedContent is served (embeddings): a generateContent body sent
	// to it is a 400 that names the fields it takes.
	check("embed method, chat body", e.gpost("/v1beta/models/google/gemini-embedding-001:embedContent", body), http.StatusBadRequest, "INVALID_ARGUMENT")
}

// TestGeminiToolRoundTrip: a function call comes back with its id, and
// the function response sent back with that id reaches the vendor as the
// tool result, on a mapped and the native prefix.
func TestGeminiToolRoundTrip(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	tools := `,"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}]`
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			first := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris? [fake:call=get_weather:{\"city\":\"Paris\"}]"}]}]` + tools + `}`
			resp := e.gpost(gPath(model, "body"), []byte(first))
			b := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var r gResponse
			if err := json.Unmarshal(b, &r); err != nil || len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
				t.Fatalf("answer %s", b)
			}
			var call json.RawMessage
			for _, p := range r.Candidates[0].Content.Parts {
				if p.FunctionCall != nil {
					call, _ = json.Marshal(map[string]any{"functionCall": p.FunctionCall})
					if p.FunctionCall.Name != "get_weather" || !bytes.Contains(p.FunctionCall.Args, []byte(`"Paris"`)) {
						t.Errorf("call %s", call)
					}
				}
			}
			if call == nil {
				t.Fatalf("no functionCall in %s", b)
			}
			// Replay the model turn as Gemini clients do: the parts as
			// received (google/ needs the thoughtSignature back).
			var raw struct {
				Candidates []struct {
					Content json.RawMessage `json:"content"`
				} `json:"candidates"`
			}
			_ = json.Unmarshal(b, &raw)
			var fc struct {
				FunctionCall struct {
					ID string `json:"id"`
				} `json:"functionCall"`
			}
			_ = json.Unmarshal(call, &fc)
			second := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris? [fake:call=get_weather:{\"city\":\"Paris\"}]"}]},` + string(raw.Candidates[0].Content) +
				`,{"role":"user","parts":[{"functionResponse":{"id":` + quote(fc.FunctionCall.ID) + `,"name":"get_weather","response":{"output":"sunny, 21C"}}}]}]` + tools + `}`
			resp = e.gpost(gPath(model, "sse"), []byte(second))
			b = readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("round trip: status %d: %s", resp.StatusCode, b)
			}
			text, finish, _, _ := gSummary(t, gRecords(t, b, "sse"))
			if !strings.Contains(text, "sunny, 21C") || finish != "STOP" {
				t.Errorf("round trip: text %q finish %q", text, finish)
			}
		})
	}
}

// TestGeminiModelsAndCount: the model list in Google's shape, paged; a
// model by its prefixed name; countTokens on a native and a mapped
// prefix.
func TestGeminiModelsAndCount(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		req.Header.Set("X-Goog-Api-Key", e.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, readAll(t, resp.Body)
	}
	var names []string
	token := ""
	for range 100 {
		path := "/v1beta/models?pageSize=3"
		if token != "" {
			path += "&pageToken=" + token
		}
		st, b := get(path)
		var page struct {
			Models []struct {
				Name                       string   `json:"name"`
				SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
			} `json:"models"`
			NextPageToken string `json:"nextPageToken"`
		}
		if st != http.StatusOK || json.Unmarshal(b, &page) != nil || len(page.Models) > 3 {
			t.Fatalf("list: %d %s", st, b)
		}
		for _, m := range page.Models {
			names = append(names, m.Name)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	want := "models/anthropic/" + nativeModels["anthropic"]
	found := false
	for _, n := range names {
		found = found || n == want
	}
	if !found || len(names) < 9 {
		t.Errorf("%d models, %s missing", len(names), want)
	}
	if st, b := get("/v1beta/models/anthropic/" + nativeModels["anthropic"]); st != http.StatusOK || !bytes.Contains(b, []byte(`"name":"`+want+`"`)) {
		t.Errorf("get: %d %s", st, b)
	}
	if st, b := get("/v1beta/models/anthropic/nosuch"); st != http.StatusNotFound || !bytes.Contains(b, []byte(`"NOT_FOUND"`)) {
		t.Errorf("get unknown: %d %s", st, b)
	}
	for _, v := range []string{"google", "anthropic", "openai"} {
		body := []byte(`{"contents":[{"role":"user","parts":[{"text":"Count these words please."}]}]}`)
		resp := e.gpost("/v1beta/models/"+v+"/"+nativeModels[v]+":countTokens", body)
		b := readAll(t, resp.Body)
		var out struct {
			TotalTokens int64 `json:"totalTokens"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.TotalTokens <= 0 {
			t.Errorf("%s countTokens: %d %s", v, resp.StatusCode, b)
		}
		if v == "google" && out.TotalTokens != int64(fakevendor.PromptTokens(e.lastRequest().Body)) {
			t.Errorf("google count %d, vendor body %s", out.TotalTokens, e.lastRequest().Body)
		}
	}
}
