package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/optimize"
)

// TestResponsesGuard: input items are the caller's text and are scored
// (403 request_blocked in the Responses error shape, with code and
// request_id); instructions and developer messages are system content and
// never scored.
func TestResponsesGuard(t *testing.T) {
	e := newEnv(t)
	for _, model := range []string{"anthropic/claude-sonnet-5-5", "groq/llama-3.3-70b-versatile"} {
		resp := e.post("/v1/responses", e.key, []byte(`{"model":"`+model+`","input":[{"role":"user","content":[{"type":"input_text","text":"`+attack+`"}]}]}`))
		b := readAll(t, resp.Body)
		var env struct {
			Error struct {
				Type, Code, RequestID, IncidentID string
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &env)
		if resp.StatusCode != 403 || env.Error.Type != "request_blocked" || env.Error.Code != "request_blocked" {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
		if !strings.Contains(string(b), `"request_id":"`+resp.Header.Get("X-Gateway-Request-Id")+`"`) || !strings.Contains(string(b), `"incident_id":"inc_`) {
			t.Fatalf("envelope %s", b)
		}
		for _, body := range []string{
			`{"model":"` + model + `","instructions":"` + attack + `","input":"What is 2+2?"}`,
			`{"model":"` + model + `","input":[{"role":"developer","content":"` + attack + `"},{"role":"user","content":"What is 2+2?"}]}`,
		} {
			resp := e.post("/v1/responses", e.key, []byte(body))
			if b := readAll(t, resp.Body); resp.StatusCode != 200 {
				t.Fatalf("system text scored: %d %s", resp.StatusCode, b)
			}
		}
	}
}

// TestResponsesOptimizer: the directive goes into the native body's
// instructions (after the caller's own) and into the mapped vendor's
// system content, is announced in x-gateway-optimize, and its tokens are
// not billed: the record's usage carries them as optimizer tokens.
func TestResponsesOptimizer(t *testing.T) {
	f := &rFake{answer: rFakeAnswer, events: rFakeEvents}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEnv(t, withOptimizer, func(c *app.Config) { c.Vendors["openai"] = app.VendorConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-r"} })
	resp := e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","instructions":"Mine.","input":"hello"}`))
	readAll(t, resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("X-Gateway-Optimize"), "applied") {
		t.Fatalf("%d optimize %q", resp.StatusCode, resp.Header.Get("X-Gateway-Optimize"))
	}
	var instr string
	_ = json.Unmarshal(rawjson.Get(f.last(), "instructions"), &instr)
	if instr != "Mine.\n\n"+optimize.Text {
		t.Fatalf("instructions sent: %q", instr)
	}
	rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
	if rec.Usage.OptimizerTokens <= 0 {
		t.Fatalf("optimizer tokens not set aside: %+v", rec.Usage)
	}
	resp = e.post("/v1/responses", e.key, []byte(`{"model":"anthropic/claude-sonnet-5-5","input":"hello"}`))
	readAll(t, resp.Body)
	if sent := string(e.lastRequest().Body); resp.StatusCode != 200 || !strings.Contains(sent, "Answer concisely") {
		t.Fatalf("%d mapped body %s", resp.StatusCode, sent)
	}
	// Off for the request.
	resp = e.post("/v1/responses", e.key, []byte(`{"model":"openai/gpt-6-sol","input":"hello"}`), "X-Gateway-Optimize", "off")
	readAll(t, resp.Body)
	if len(rawjson.Get(f.last(), "instructions")) != 0 {
		t.Fatalf("directive sent with optimize off: %s", f.last())
	}
}

// TestResponsesHolds: without max_output_tokens a small balance gets the
// largest output limit it covers (x-gateway-max-tokens, and the vendor's
// field: max_output_tokens natively, max_tokens mapped); a key's allow
// list and the rate-limit headers apply as on the other endpoints.
func TestResponsesHolds(t *testing.T) {
	f := &rFake{answer: rFakeAnswer, events: rFakeEvents}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEnv(t, func(c *app.Config) { c.Vendors["openai"] = app.VendorConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-r"} })
	ctx := context.Background()
	secret, _, err := createKey(ctx, e.m.Store(), "small", 50*gw.Cent)
	if err != nil {
		t.Fatal(err)
	}
	resp := e.post("/v1/responses", secret, []byte(`{"model":"anthropic/claude-sonnet-5-5","input":"Hi"}`))
	b := readAll(t, resp.Body)
	n, err := strconv.ParseInt(resp.Header.Get("X-Gateway-Max-Tokens"), 10, 64)
	if resp.StatusCode != 200 || err != nil || n < 1024 {
		t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("X-Gateway-Max-Tokens"), b)
	}
	if got := string(rawjson.Get(e.lastRequest().Body, "max_tokens")); got != strconv.FormatInt(n, 10) {
		t.Fatalf("vendor max_tokens %s, header %d", got, n)
	}
	resp = e.post("/v1/responses", secret, []byte(`{"model":"openai/gpt-6-sol","input":"Hi"}`))
	readAll(t, resp.Body)
	if h := resp.Header.Get("X-Gateway-Max-Tokens"); h != "" {
		if got := string(rawjson.Get(f.last(), "max_output_tokens")); got != h {
			t.Fatalf("native: vendor max_output_tokens %s, header %s", got, h)
		}
	}
	if resp.Header.Get("X-Ratelimit-Limit-Requests") == "" {
		t.Fatal("no rate-limit headers")
	}
	// An output limit above the model's maximum is refused before the call.
	resp = e.post("/v1/responses", secret, []byte(`{"model":"anthropic/claude-sonnet-5-5","input":"Hi","max_output_tokens":100000000}`))
	if b := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(string(b), `"code":"invalid_request"`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
