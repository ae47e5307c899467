package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// fixedUsage answers every vendor call, in the shape of the path it was
// sent to, with the same usage: 1,000 prompt tokens of which 200 read
// from the cache, 300 output tokens of which 50 reasoning (Anthropic has
// no reasoning count; OpenRouter adds its cost).
func fixedUsage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		fmt.Fprint(w, fakevendor.OpenRouterModels) // OpenRouter's price list
	case strings.HasSuffix(p, "/responses"):
		fmt.Fprint(w, `{"id":"resp_fixed","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":200},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":50},"total_tokens":1300}}`)
	case strings.HasSuffix(p, "/chat/completions"):
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":300,"total_tokens":1300,"prompt_tokens_details":{"cached_tokens":200},"prompt_cache_hit_tokens":200,"prompt_cache_miss_tokens":800,"completion_tokens_details":{"reasoning_tokens":50},"cost":0.00123}}`)
	case strings.HasSuffix(p, "/messages"):
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":800,"cache_read_input_tokens":200,"cache_creation_input_tokens":0,"output_tokens":300}}`)
	case strings.Contains(p, ":generateContent"):
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":200,"candidatesTokenCount":250,"thoughtsTokenCount":50,"totalTokenCount":1300},"responseId":"g1"}`)
	default:
		http.NotFound(w, r)
	}
}

// TestBillingTableAcrossShapes is the billing table: the same
// conversation sent through the Responses, Chat Completions and Messages
// endpoints to each vendor, whose answers all report the same usage, is
// charged exactly the same (to the micro-cent), whichever endpoint maps
// or relays it.
func TestBillingTableAcrossShapes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(fixedUsage))
	defer srv.Close()
	e := newEnv(t, func(c *app.Config) {
		for _, v := range route.Vendors() {
			c.Vendors[v] = app.VendorConfig{BaseURL: srv.URL + "/" + v + "/v1", APIKey: "k"}
		}
	})
	// The system text makes each body larger than the 1,000 prompt
	// tokens reported, so that every hold covers the charge (a charge is
	// never above its hold).
	sys := strings.Repeat("Be brief. ", 600)
	var table strings.Builder
	fmt.Fprintf(&table, "%-11s %-14s %-14s %-14s\n", "vendor", "responses", "chat", "messages")
	for _, v := range route.Vendors() {
		model := v + "/" + nativeModels[v]
		bodies := []struct{ path, body string }{
			{"/v1/responses", `{"model":"` + model + `","instructions":"` + sys + `","input":"Say ok","max_output_tokens":1000}`},
			{"/v1/chat/completions", `{"model":"` + model + `","messages":[{"role":"system","content":"` + sys + `"},{"role":"user","content":"Say ok"}],"max_tokens":1000}`},
			{"/v1/messages", `{"model":"` + model + `","system":"` + sys + `","messages":[{"role":"user","content":"Say ok"}],"max_tokens":1000}`},
		}
		var charges []string
		for _, b := range bodies {
			resp := e.post(b.path, e.key, []byte(b.body))
			body := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d %s", v, b.path, resp.StatusCode, body)
			}
			charges = append(charges, resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
			rec, err := e.m.Store().Record(context.Background(), resp.Header.Get("X-Gateway-Request-Id"))
			if err != nil {
				t.Fatal(err)
			}
			if u := rec.Usage; u.PromptTokens() != 1000 || u.OutputTokens != 300 || strings.Contains(rec.Note, "capped") {
				t.Errorf("%s %s: recorded usage %+v note %q", v, b.path, u, rec.Note)
			}
		}
		fmt.Fprintf(&table, "%-11s %-14s %-14s %-14s\n", v, charges[0], charges[1], charges[2])
		if charges[0] == "" || charges[0] == "0.000000" || charges[0] != charges[1] || charges[0] != charges[2] {
			t.Errorf("%s: charges differ for the same usage: responses %s, chat %s, messages %s", v, charges[0], charges[1], charges[2])
		}
	}
	t.Logf("charge in cents for the same vendor usage (1,000 prompt tokens, 200 cached, 300 output):\n%s", table.String())
}
