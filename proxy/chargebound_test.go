package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratecard"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/shape/gemini"
	openaishape "github.com/gwlabs/gateway/shape/openai"
)

// usageForms are the shapes of a vendor's usage the property runs over:
// counts, totals alone, costs, strings, floats, exponents, negatives,
// absent members, absurd values.
var usageForms = []string{
	`{"prompt_tokens":%[1]d,"completion_tokens":%[2]d}`,
	`{"prompt_tokens":%[1]d,"completion_tokens":%[2]d,"cost":%[3]s}`,
	`{"prompt_tokens":"%[1]d","completion_tokens":%[2]d,"cost":%[3]s}`,
	`{"prompt_tokens":%[1]d.5,"completion_tokens":%[2]d}`,
	`{"prompt_tokens":%[1]de3,"completion_tokens":%[2]d}`,
	`{"prompt_tokens":-%[1]d,"completion_tokens":%[2]d}`,
	`{"total_tokens":%[1]d}`,
	`{"cost":%[3]s}`,
	`{}`,
	`{"prompt_tokens":%[1]d,"completion_tokens":%[2]d,"cost":"abc"}`,
	`{"prompt_tokens":%[1]d,"completion_tokens":%[2]d,"prompt_tokens_details":{"cached_tokens":%[2]d}}`,
}

// decode reads a usage form as the vendor's shape decoder does, and
// falls back to the gateway's own count where it cannot be used (as the
// chat layer does: the body at one token per four bytes, the text
// relayed at one a byte), keeping a readable cost.
func decode(vendor, raw string, body []byte, text int64) gw.Usage {
	var u gw.Usage
	switch vendor {
	case "anthropic":
		r := strings.NewReplacer(`"prompt_tokens"`, `"input_tokens"`, `"completion_tokens"`, `"output_tokens"`, `"total_tokens"`, `"x"`).Replace(raw)
		u, _ = anthropicshape.UsageFromBody([]byte(`{"type":"message","usage":` + r + `}`))
	case "google":
		r := strings.NewReplacer(`"prompt_tokens"`, `"promptTokenCount"`, `"completion_tokens"`, `"candidatesTokenCount"`, `"total_tokens"`, `"totalTokenCount"`).Replace(raw)
		var m gemini.UsageMetadata
		_ = json.Unmarshal([]byte(r), &m)
		u = m.Usage()
	default:
		u, _ = openaishape.DecodeUsage([]byte(raw))
	}
	if u.Reported && !u.Malformed {
		return u
	}
	e := gw.Usage{InputTokens: (int64(len(body)) + 3) / 4, OutputTokens: text}
	e.ReportedCost, e.HasReportedCost, e.ReportedCostUSD = u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD
	return e
}

// Issue 46: whatever a vendor reports, on every vendor, the charge is
// never above the price of the gateway's bounds (the prompt bound, the
// request's max_tokens) x 1.09, and where the report is within them and
// carries no cost, it is exactly the caller's tokens' cost x 1.09 (the
// directive is off here: no rounding applies).
func TestChargeWithinBoundsEveryVendor(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	list, err := ratecard.ParseOpenRouter(strings.NewReader(fakevendor.OpenRouterModels), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	prices := &ratecard.OpenRouterPrices{}
	prices.Set(list)
	b := billing.New(card, billing.Options{OpenRouter: prices})
	models := map[string]string{"openrouter": "meta-llama/llama-3.3-70b-instruct"}
	for _, m := range card.Models() {
		if _, ok := models[m.Vendor]; !ok && len(m.Tiers) == 0 {
			models[m.Vendor] = m.ID
		}
	}
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	providers := map[string]gw.Provider{}
	for v := range models {
		providers[v] = p
	}
	f := newFixture(t, p, nil, nil, 1000*gw.USD)
	g, err := proxy.New(proxy.Config{Store: f.store, Auth: &auth.Authenticator{Keys: f.store}, Providers: providers, Biller: b})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(46, 46))
	n := 0
	for vendor, model := range models {
		for fi, form := range usageForms {
			for range 6 {
				prompt, out := rng.Int64N(1<<uint(rng.IntN(40))), rng.Int64N(1<<uint(rng.IntN(20)))
				cost := []string{"0.00003074", "5", "1e-9", "0.0000000149", `"0.0001"`, "1e5"}[rng.IntN(6)]
				raw := fmt.Sprintf(form, prompt, out, cost)
				const maxTokens = 200
				body := []byte(fmt.Sprintf(`{"model":%q,"max_tokens":%d,"messages":[{"role":"user","content":"Say hello to the team in one short sentence."}]}`, vendor+"/"+model, maxTokens))
				n++
				in := f.inbound(fmt.Sprintf("req_prop_%d", n))
				in.Vendor, in.Model, in.Body = vendor, model, body
				x, err := g.Begin(ctx, in)
				if err != nil {
					t.Fatalf("%s/%s: begin: %v", vendor, model, err)
				}
				if _, err := x.Call(ctx); err != nil {
					t.Fatalf("call: %v", err)
				}
				u := decode(vendor, raw, body, 12)
				if _, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: u}); err != nil {
					t.Fatal(err)
				}
				rec := x.Record()
				bound := proxy.PromptBound(x.Body, 0, gw.Hosted{})
				top, err := b.Price(vendor, model, gw.Usage{InputTokens: bound, OutputTokens: maxTokens})
				if err != nil {
					t.Fatal(err)
				}
				if rec.Charge > top.Charge || rec.Charge < 0 {
					t.Errorf("%s/%s form %d %s: charge %d, above the bounds' price %d (bound %d prompt, %d output)", vendor, model, fi, raw, rec.Charge, top.Charge, bound, maxTokens)
				}
				if u.Reported && !u.HasReportedCost && u.PromptTokens() <= bound && u.OutputTokens <= maxTokens {
					own, err := b.Price(vendor, model, u)
					if err != nil {
						t.Fatal(err)
					}
					if rec.Charge != own.Charge {
						t.Errorf("%s/%s form %d %s: charge %d, want the caller's tokens' %d", vendor, model, fi, raw, rec.Charge, own.Charge)
					}
				}
			}
		}
	}
	t.Logf("%d requests over %d vendors", n, len(models))
}
