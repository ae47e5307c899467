package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// TestGeminiBillingTable: the same conversation through G, M, C and R on
// every vendor. Each charge is the card's price of the usage the vendor
// reported (prompt tokens as the fake counts the body it received, the
// same output, cache reads and reasoning whatever the caller's shape),
// and where two shapes reached the vendor with the same bytes the usage
// and the charge are identical. G and M, both mapped on every vendor but
// Anthropic and Google, must reach it with the same bytes there.
func TestGeminiBillingTable(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	b := testBiller(t)
	const prompt = "hi [fake:cache][fake:reasoning]"
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			type row struct {
				shape  string
				sent   []byte
				charge int64
				output int64
				cache  int64
				prompt int64
			}
			var rows []row
			for _, c := range []struct {
				shape, path string
				body        []byte
			}{
				{"G", gPath(model, "body"), geminiBody(prompt, "")},
				{"M", "/v1/messages", messagesBody(model, prompt, false, "")},
				{"C", "/v1/chat/completions", []byte(`{"model":` + quote(model) + `,"max_tokens":256,"messages":[{"role":"user","content":` + quote(prompt) + `}]}`)},
				{"R", "/v1/responses", []byte(`{"model":` + quote(model) + `,"max_output_tokens":256,"input":` + quote(prompt) + `}`)},
			} {
				resp := e.post(c.path, e.key, c.body, "Anthropic-Version", "2023-06-01")
				got := readAll(t, resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: status %d: %s", c.shape, resp.StatusCode, got)
				}
				sent := e.lastRequest().Body
				rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
				q, err := b.PriceAt(rec.Vendor, rec.Model, rec.Usage, rec.CreatedAt)
				if err != nil {
					t.Fatal(err)
				}
				told := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
				if rec.Charge <= 0 || rec.Charge != q.Charge || told != rec.Charge.CentsString() || !rec.Usage.Reported || rec.Usage.Malformed {
					t.Errorf("%s: charge %d, repriced %d, told %q, usage %+v", c.shape, rec.Charge, q.Charge, told, rec.Usage)
				}
				if p := int64(fakevendor.PromptTokens(sent)); rec.Usage.PromptTokens() != p {
					t.Errorf("%s: billed %d prompt tokens, the vendor counted %d", c.shape, rec.Usage.PromptTokens(), p)
				}
				if c.shape == "G" {
					// The caller is told the usage it is billed for.
					var um struct {
						UsageMetadata struct {
							PromptTokenCount        int64 `json:"promptTokenCount"`
							CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
							CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
							ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
						} `json:"usageMetadata"`
					}
					_ = json.Unmarshal(got, &um)
					m := um.UsageMetadata
					if m.PromptTokenCount != rec.Usage.PromptTokens() || m.CachedContentTokenCount != rec.Usage.CacheReadTokens ||
						m.ThoughtsTokenCount != rec.Usage.ReasoningTokens || m.CandidatesTokenCount+m.ThoughtsTokenCount != rec.Usage.OutputTokens {
						t.Errorf("G usageMetadata %+v, billed %+v", m, rec.Usage)
					}
					if rec.Usage.CacheReadTokens == 0 && v != "together" && v != "mistral" { // the two report no cache fields
						t.Errorf("no cache reads billed: %+v", rec.Usage)
					}
				}
				rows = append(rows, row{c.shape, sent, int64(rec.Charge), rec.Usage.OutputTokens, rec.Usage.CacheReadTokens, rec.Usage.PromptTokens()})
			}
			for _, r := range rows[1:] {
				if r.output != rows[0].output {
					t.Errorf("output tokens: %s %d, %s %d", rows[0].shape, rows[0].output, r.shape, r.output)
				}
			}
			for i := range rows {
				for j := i + 1; j < len(rows); j++ {
					if bytes.Equal(rows[i].sent, rows[j].sent) && (rows[i].charge != rows[j].charge || rows[i].cache != rows[j].cache || rows[i].prompt != rows[j].prompt) {
						t.Errorf("same vendor bytes, %s charged %d, %s charged %d", rows[i].shape, rows[i].charge, rows[j].shape, rows[j].charge)
					}
				}
			}
			if v != "anthropic" && v != "google" && !bytes.Equal(rows[0].sent, rows[1].sent) {
				t.Errorf("G and M reached %s with different bytes:\n%s\n%s", v, rows[0].sent, rows[1].sent)
			}
		})
	}
}

// TestGeminiFallbackRoute: G has no "models" list; an operator route
// named as the model (gw/NAME in the path) gives the fallbacks, and the
// answer comes from the member that served.
func TestGeminiFallbackRoute(t *testing.T) {
	e := newEnv(t, withFaultTimings, withRoutes(t, route.Route{Name: "gw/g", Members: []route.Target{
		{Vendor: "openai", Model: "missing-model"},
		{Vendor: "anthropic", Model: nativeModels["anthropic"]},
	}}))
	for _, mode := range []string{"body", "sse"} {
		resp := e.gpost(gPath("gw/g", mode), geminiBody("Say hello.", ""))
		got := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", mode, resp.StatusCode, got)
		}
		if m := resp.Header.Get("X-Gateway-Model"); m != "anthropic/"+nativeModels["anthropic"] {
			t.Errorf("%s: served by %q", mode, m)
		}
		text, finish, _, _ := gSummary(t, gRecords(t, got, mode))
		if text == "" || finish != "STOP" || !bytes.Contains(got, []byte(`"modelVersion":"anthropic/`+nativeModels["anthropic"]+`"`)) {
			t.Errorf("%s: %s", mode, got)
		}
	}
}
