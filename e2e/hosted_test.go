package e2e

import (
	"context"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/ratecard"
)

// Issue 29 items 4 and 6, end to end (before -> after): a service tier,
// fast mode, hosted web search and code execution used to be refused
// (400) or, let through by the operator, charged for tokens only. Now
// each is billed from the vendor's own report on every route shape
// (Messages, Chat, Responses; stream and not), through the fake vendors
// that report them as the real ones do. The units' hand-worked figures
// are in billing's TestHostedUnitsPriced; here each charge is checked
// against the tokens-only price of the recorded usage plus the unit:
// C = the recorded tokens' cost (whole micro-cents on these models),
// charge = round_half_up(1.09 x (C x multiplier + calls x price)).
func TestHostedUnitsBilled(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	st := e.m.Store()
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	b := billing.New(card, billing.Options{})
	secret, _, err := createKey(ctx, st, uniqueAccount("hosted"), 100*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	tokensCost := func(t *testing.T, vendor, model string, u gw.Usage) gw.Money {
		t.Helper()
		u.Hosted = gw.Hosted{}
		q, err := b.Price(vendor, model, u)
		if err != nil {
			t.Fatal(err)
		}
		return q.Cost
	}
	const search = `,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}]`
	cases := []struct {
		name, path, vendor, model string
		body                      []byte
		// want is the charge from the tokens' cost c.
		want func(c gw.Money) gw.Money
		note string
	}{
		{"messages web search, 3 calls", "/v1/messages", "anthropic", "claude-opus-5-5",
			messagesBody("anthropic/claude-opus-5-5", "look it up [fake:searches=3]", false, search),
			func(c gw.Money) gw.Money { return gw.Charge(c + 3_000_000) }, "3 web searches"},
		{"messages stream web search, 3 calls", "/v1/messages", "anthropic", "claude-opus-5-5",
			messagesBody("anthropic/claude-opus-5-5", "look it up [fake:searches=3]", true, search),
			func(c gw.Money) gw.Money { return gw.Charge(c + 3_000_000) }, "3 web searches"},
		{"messages fast mode", "/v1/messages", "anthropic", "claude-opus-5",
			messagesBody("anthropic/claude-opus-5", "quick", false, `,"speed":"fast"`),
			func(c gw.Money) gw.Money { return gw.Charge(2 * c) }, "fast mode x2"},
		{"messages stream code execution", "/v1/messages", "anthropic", "claude-haiku-4-5",
			messagesBody("anthropic/claude-haiku-4-5", "run it [fake:container]", true, `,"tools":[{"type":"code_execution_20250825","name":"code_execution"}]`),
			// 300 s at $0.05/hour = 416,666 2/3 uc, rounded once with the rest.
			func(c gw.Money) gw.Money { return gw.Money(((int64(c)*3+1_250_000)*109 + 150) / 300) }, "code execution 300 s"},
		{"chat priority tier", "/v1/chat/completions", "openai", "gpt-6-sol",
			chatBody("openai/gpt-6-sol", "fast please", false, `,"service_tier":"priority"`),
			func(c gw.Money) gw.Money { return gw.Charge(2 * c) }, "service tier priority x2"},
		{"chat stream flex tier", "/v1/chat/completions", "openai", "gpt-6-sol",
			chatBody("openai/gpt-6-sol", "slow is fine", true, `,"service_tier":"flex","stream_options":{"include_usage":true}`),
			func(c gw.Money) gw.Money { return gw.Money((int64(c)*109 + 100) / 200) }, "service tier flex x1/2"},
		{"chat web_search_options, one search per request", "/v1/chat/completions", "openai", "gpt-6-sol",
			chatBody("openai/gpt-6-sol", "news", false, `,"web_search_options":{}`),
			func(c gw.Money) gw.Money { return gw.Charge(c + 1_000_000) }, "1 web searches"},
		{"responses priority and 2 searches", "/v1/responses", "openai", "gpt-6-sol",
			[]byte(`{"model":"openai/gpt-6-sol","input":"find it [fake:searches=2]","service_tier":"priority","tools":[{"type":"web_search"}]}`),
			func(c gw.Money) gw.Money { return gw.Charge(2*c + 2_000_000) }, "2 web searches"},
		{"responses stream, 2 searches", "/v1/responses", "openai", "gpt-6-sol",
			[]byte(`{"model":"openai/gpt-6-sol","input":"find it [fake:searches=2]","stream":true,"tools":[{"type":"web_search"}]}`),
			func(c gw.Money) gw.Money { return gw.Charge(c + 2_000_000) }, "2 web searches"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.post(c.path, secret, c.body)
			body := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d %s", resp.StatusCode, body)
			}
			rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id"))
			cost := tokensCost(t, c.vendor, c.model, rec.Usage)
			if want := c.want(cost); rec.Charge != want || !strings.Contains(rec.Note, c.note) {
				t.Errorf("charge %d note %q, want %d (tokens cost %d) and %q", rec.Charge, rec.Note, want, cost, c.note)
			}
			if before := gw.Charge(cost); rec.Charge == before {
				t.Errorf("charge %d is the tokens-only charge: the unit was not billed", rec.Charge)
			}
		})
	}

	// What the card cannot price for the model is still refused, naming
	// the field, before any hold or vendor call.
	for _, r := range []struct {
		name, path string
		body       []byte
		field      string
	}{
		{"fast mode without a fast price", "/v1/messages", messagesBody("anthropic/claude-sonnet-5-5", "hi", false, `,"speed":"fast"`), `speed \"fast\"`},
		{"web fetch on a model without it", "/v1/messages", messagesBody("anthropic/claude-opus-5", "hi", false, `,"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]`), "web_fetch"},
		{"mcp connector", "/v1/messages", messagesBody("anthropic/claude-opus-5-5", "hi", false, `,"mcp_servers":[{"type":"url","url":"https://example.com/mcp","name":"x"}]`), "mcp_servers"},
		{"priority on a model without a priority price", "/v1/chat/completions", chatBody("openai/gpt-5.6-sol", "hi", false, `,"service_tier":"priority"`), `service_tier \"priority\"`},
	} {
		resp := e.post(r.path, secret, r.body)
		got := readAll(t, resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(got), r.field) || !strings.Contains(string(got), "cannot price") {
			t.Errorf("%s: %d %s, want 400 naming %s", r.name, resp.StatusCode, got, r.field)
		}
	}
}

// The units the request reader finds are the units a rate card may
// price, by the same names.
func TestUnitNamesAgree(t *testing.T) {
	if got, want := strings.Join(billable.Units, ","), strings.Join(ratecard.UnitNames(), ","); got != want {
		t.Errorf("billable units %s, rate-card units %s", got, want)
	}
}

// An answer billed from the gateway's own count (here one over
// GATEWAY_MAX_RESPONSE_BYTES, refused 502 and billed from the bytes read)
// is priced at the tier the request asked for: the same body with
// "flex" costs half of it with "auto" (the two names are as long, so the
// estimates agree), C/2 rounded half up.
func TestEstimatedAnswerAtRequestedTier(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.MaxResponseBytes = 200; c.TPM = 0 })
	st := e.m.Store()
	cost := func(tier string) gw.Money {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/gpt-6-sol", "a long answer please", false, `,"service_tier":"`+tier+`","max_tokens":1000`))
		b := readAll(t, resp.Body)
		if resp.StatusCode != 502 {
			t.Fatalf("%s: status %d %s, want 502 (over-size)", tier, resp.StatusCode, b)
		}
		rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id"))
		if !strings.Contains(rec.Note, "answer_too_large") || rec.Charge == 0 {
			t.Fatalf("%s: note %q charge %d", tier, rec.Note, rec.Charge)
		}
		return rec.Cost
	}
	auto, flex := cost("auto"), cost("flex")
	if flex != (auto+1)/2 {
		t.Errorf("flex estimate cost %d, want half of auto's %d rounded half up: %d", flex, auto, (auto+1)/2)
	}
}
