package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// orModel is on the scripted OpenRouter price list at $1/M prompt
// tokens (100 uc each) and $2/M completion tokens (200 uc each).
const orModel = "openrouter/meta-llama/llama-3.3-70b-instruct"

// orSend sends one OpenRouter request whose scripted answer carries
// usage (a JSON value), stream or not, from a fresh $1 account, and
// returns its status and record.
func orSend(t *testing.T, e *env, s *scripted, name, usage string, stream bool) (int, *gw.Record) {
	t.Helper()
	if stream {
		s.script(name, func(w http.ResponseWriter) { cStream(w, []string{"Hello ", "there."}, usage) })
	} else {
		s.answer(name, usage)
	}
	secret, _, err := createKey(context.Background(), e.m.Store(), uniqueAccount("orbound"), gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	resp := e.post("/v1/chat/completions", secret, chatBody(orModel, "hi [case:"+name+"]", stream, `,"max_tokens":100`))
	b := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "there.") {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
}

// Issue 46 D2-D5 (before -> after), on both stores, stream and not:
//   - D2: cost 5 USD on 100 + 5 tokens charged 545,000,000 uc; now the
//     price list's price of the tokens, 100 x 100 + 5 x 200 = 11,000 uc,
//     x 1.09 = 11,990, and the rest of the 5 USD is disputed cost;
//   - D3: absurd tokens beside a valid cost threw the cost away; now the
//     cost (3,074 uc, below the bounded tokens' price) is charged:
//     3,074 x 1.09 = 3,350.66 -> 3,351;
//   - D4: an unreadable cost ("abc", 1e12, {}) was a 502 without a
//     stream; now priced from the list, 11,990, noted cost_malformed;
//   - D5: a valid cost beside malformed counts, or the cost alone, was
//     dropped (billed from the estimate); now the cost is charged,
//     0.0001 USD = 10,000 uc x 1.09 = 10,900, and recorded as reported.
func TestOpenRouterCostBounded(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			e, s := moneyEnv(t, dbURL, func(c *app.Config) { c.Optimize = false })
			for _, stream := range []bool{false, true} {
				sfx := "n"
				if stream {
					sfx = "s"
				}
				// D2.
				status, rec := orSend(t, e, s, "d2"+sfx, `{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105,"cost":5}`, stream)
				if rec == nil {
					t.Fatalf("D2 stream=%v: status %d", stream, status)
				}
				if rec.Charge != 11_990 || rec.Cost != 11_000 || rec.DisputedCost != 5*gw.USD-11_000 || !strings.Contains(rec.Note, "usage_disputed") ||
					!rec.Usage.HasReportedCost || rec.Usage.ReportedCost != 5*gw.USD {
					t.Errorf("D2 stream=%v: charge %d cost %d disputed %d reported %d note %q; want 11,990, 11,000, %d, the 5 USD recorded",
						stream, rec.Charge, rec.Cost, rec.DisputedCost, rec.Usage.ReportedCost, rec.Note, 5*gw.USD-11_000)
				}
				// D3.
				_, rec = orSend(t, e, s, "d3"+sfx, `{"prompt_tokens":1000000000000,"completion_tokens":5,"cost":0.00003074}`, stream)
				if rec == nil || rec.Charge != 3_351 || rec.Cost != 3_074 || rec.DisputedCost != 0 {
					t.Errorf("D3 stream=%v: record %+v; want charge 3,351 on the cost 3,074", stream, rec)
				}
				// D4.
				for i, cost := range []string{`"abc"`, `1e12`, `{}`, `[1]`, `"1e400"`} {
					status, rec := orSend(t, e, s, fmt.Sprintf("d4%s%d", sfx, i), `{"prompt_tokens":100,"completion_tokens":5,"cost":`+cost+`}`, stream)
					if rec == nil {
						t.Errorf("D4 cost %s stream=%v: status %d, want 200", cost, stream, status)
						continue
					}
					if rec.Charge != 11_990 || rec.Cost != 11_000 || !strings.Contains(rec.Note, "cost_malformed") {
						t.Errorf("D4 cost %s stream=%v: charge %d cost %d note %q; want 11,990 from the list, cost_malformed", cost, stream, rec.Charge, rec.Cost, rec.Note)
					}
				}
				// D5.
				for i, usage := range []string{
					`{"prompt_tokens":"100","completion_tokens":5,"cost":0.0001}`,
					`{"prompt_tokens":1.5,"completion_tokens":5,"cost":"0.0001"}`,
					`{"cost":0.0001}`,
				} {
					_, rec := orSend(t, e, s, fmt.Sprintf("d5%s%d", sfx, i), usage, stream)
					if rec == nil || rec.Charge != 10_900 || rec.Cost != 10_000 || !rec.Usage.HasReportedCost || rec.Usage.ReportedCost != 10_000 {
						t.Errorf("D5 %s stream=%v: record %+v; want charge 10,900 on the reported cost 10,000", usage, stream, rec)
					}
				}
				// The cost alone, above any price of what the gateway
				// could have sent: bounded, the rest disputed.
				_, rec = orSend(t, e, s, "d5big"+sfx, `{"cost":5}`, stream)
				if rec == nil || rec.Charge > gw.USD/100 || rec.DisputedCost <= 0 || rec.Cost+rec.DisputedCost != 5*gw.USD {
					t.Errorf("cost 5 USD alone stream=%v: record %+v; want a charge under a cent, the rest disputed", stream, rec)
				}
			}
		})
	}
}

// geminiTotalOnly answers every generateContent call with text and
// usageMetadata carrying totalTokenCount alone, streamed or not as asked.
func geminiTotalOnly(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cand := `"candidates":[{"content":{"role":"model","parts":[{"text":` + quote(text) + `}]},"finishReason":"STOP","index":0}],"usageMetadata":{"totalTokenCount":500},"modelVersion":"gemini-2.5-flash"`
		if strings.Contains(r.URL.Path, ":streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {%s}\n\n", cand)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{%s}", cand)
	}
}

// Issue 46 D1 (before -> after): Gemini usage carrying only
// totalTokenCount was billed as free (0 on G, M, C and R, stream and
// not; the record said usage reported, 0 tokens). Now it is estimated
// as the OpenAI-shaped vendors' total-only form is: the text relayed at
// one token a byte, noted usage_malformed, charged more than nothing.
func TestGeminiTotalOnlyEstimated(t *testing.T) {
	const text = "Hello from Gemini."
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(geminiTotalOnly(text))
			t.Cleanup(srv.Close)
			e := newEnv(t, func(c *app.Config) {
				c.DatabaseURL = dbURL
				c.RPM, c.TPM = 0, 0
				c.Optimize = false
				c.Vendors["google"] = app.VendorConfig{BaseURL: srv.URL, APIKey: "k"}
			})
			st := e.m.Store()
			model := "google/gemini-2.5-flash"
			for _, stream := range []bool{false, true} {
				for _, rt := range []struct {
					path string
					body []byte
					hdr  []string
				}{
					{"/v1/chat/completions", chatBody(model, "hi", stream, `,"max_tokens":100`), nil},
					{"/v1/messages", []byte(`{"model":"` + model + `","max_tokens":100,"messages":[{"role":"user","content":"hi"}]` + map[bool]string{true: `,"stream":true`}[stream] + `}`), []string{"anthropic-version", "2023-06-01"}},
					{"/v1/responses", []byte(`{"model":"` + model + `","input":"hi","max_output_tokens":100` + map[bool]string{true: `,"stream":true`}[stream] + `}`), nil},
					{"/v1beta/models/google/gemini-2.5-flash:" + map[bool]string{false: "generateContent", true: "streamGenerateContent?alt=sse"}[stream], []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":100}}`), nil},
				} {
					secret, _, err := createKey(context.Background(), st, uniqueAccount("gtotal"), gw.USD)
					if err != nil {
						t.Fatal(err)
					}
					resp := e.post(rt.path, secret, rt.body, rt.hdr...)
					b := readAll(t, resp.Body)
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Gemini") {
						t.Errorf("%s stream=%v: status %d %s", rt.path, stream, resp.StatusCode, b)
						continue
					}
					rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id"))
					if rec.Charge <= 0 || rec.Usage.OutputTokens != int64(len(text)) || !strings.Contains(rec.Note, "usage_malformed") {
						t.Errorf("%s stream=%v: charge %d usage %+v note %q; want the estimate (%d output tokens), usage_malformed",
							rt.path, stream, rec.Charge, rec.Usage, rec.Note, len(text))
					}
				}
			}
		})
	}
}
