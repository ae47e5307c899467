package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
)

// conversationRoute is one route of the prompt-caching conversation test.
type conversationRoute struct {
	path, vendor string
}

func (r conversationRoute) String() string { return r.path[4:] + "->" + r.vendor }

// runConversation plays a 10-turn conversation with a 6 KB system prompt
// and tools on r and returns each turn's record.
func runConversation(t *testing.T, e *env, r conversationRoute) []*gw.Record {
	t.Helper()
	ctx := context.Background()
	// The system prompt names the route: conversations on different
	// routes share no prefix.
	var sys strings.Builder
	sys.WriteString("Conversation on " + r.String() + ". ")
	for i := 0; sys.Len() < 6<<10; i++ {
		fmt.Fprintf(&sys, "Rule %d: answer questions about the Acme travel catalogue, quote prices in euros, and keep a friendly tone. ", i)
	}
	model := r.vendor + "/" + nativeModels[r.vendor]
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	var msgs []string
	var recs []*gw.Record
	for turn := 1; turn <= 10; turn++ {
		msgs = append(msgs, `{"role":"user","content":`+quote(fmt.Sprintf("Question %d: what is a good trip for week %d?", turn, turn))+`}`)
		var body string
		if r.path == "/v1/messages" {
			body = `{"model":` + quote(model) + `,"max_tokens":256,"system":` + quote(sys.String()) +
				`,"tools":[{"name":"weather","description":"Weather for a city","input_schema":` + schema + `}]` +
				`,"messages":[` + strings.Join(msgs, ",") + `]}`
		} else {
			body = `{"model":` + quote(model) + `,"messages":[{"role":"system","content":` + quote(sys.String()) + `},` + strings.Join(msgs, ",") + `]` +
				`,"tools":[{"type":"function","function":{"name":"weather","description":"Weather for a city","parameters":` + schema + `}}]}`
		}
		resp := e.post(r.path, e.key, []byte(body), "Anthropic-Version", "2023-06-01")
		got := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: status %d: %s", turn, resp.StatusCode, got)
		}
		var m struct {
			Content []struct{ Text string } `json:"content"`
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatal(err)
		}
		reply := ""
		if len(m.Content) > 0 {
			reply = m.Content[0].Text
		} else if len(m.Choices) > 0 {
			reply = m.Choices[0].Message.Content
		}
		msgs = append(msgs, `{"role":"assistant","content":`+quote(reply)+`}`)
		rec, err := e.m.Store().Record(ctx, resp.Header.Get("X-Gateway-Request-Id"))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// TestConversationReadsTheCache: a 10-turn conversation with a 6 KB system
// prompt and tools, whose caller sets no cache marker or key, on
// C->anthropic, M->anthropic, C->openai, M->deepseek and C->google. With the fake
// vendors modelling prefix caches, turns 2-10 read what earlier turns
// wrote, with the optimizer's directive in every request; and the
// conversation's charge falls, against the same conversation with no
// cache, by exactly the ratio the rate card's prices imply for the
// reported token buckets.
func TestConversationReadsTheCache(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	routes := []conversationRoute{
		{"/v1/chat/completions", "anthropic"}, {"/v1/messages", "anthropic"},
		{"/v1/chat/completions", "openai"}, {"/v1/messages", "deepseek"},
		// Implicit caching: the mapped request is byte-stable turn after turn.
		{"/v1/chat/completions", "google"},
	}
	optimized := newEnv(t, withOptimizer)
	optimized.fake.EnablePrefixCache(0)
	cached := newEnv(t)
	cached.fake.EnablePrefixCache(0)
	uncached := newEnv(t)
	for _, r := range routes {
		t.Run(r.String(), func(t *testing.T) {
			for i, rec := range runConversation(t, optimized, r) {
				if i == 0 && rec.Usage.CacheReadTokens != 0 {
					t.Errorf("turn 1 read %d cached tokens from nowhere", rec.Usage.CacheReadTokens)
				}
				if i > 0 && rec.Usage.CacheReadTokens < 1024 {
					t.Errorf("turn %d with the directive: cache read %d tokens: %+v", i+1, rec.Usage.CacheReadTokens, rec.Usage)
				}
			}

			with, without := runConversation(t, cached, r), runConversation(t, uncached, r)
			m, ok := card.Lookup(r.vendor, nativeModels[r.vendor])
			if !ok {
				t.Fatal("no price")
			}
			p := m.Price.Resolved()
			cost := func(u gw.Usage, cache bool) *big.Rat {
				sum := new(big.Rat)
				add := func(n int64, rate *big.Rat) { sum.Add(sum, new(big.Rat).Mul(big.NewRat(n, 1), rate)) }
				if cache {
					add(u.InputTokens, p.Input)
					add(u.CacheReadTokens, p.CachedInput)
					add(u.CacheWrite5mTokens, p.CacheWrite5m)
					add(u.CacheWrite1hTokens, p.CacheWrite1h)
				} else {
					add(u.PromptTokens(), p.Input)
				}
				add(u.OutputTokens, p.Output)
				return sum
			}
			var chargeWith, chargeWithout gw.Money
			implied, full := new(big.Rat), new(big.Rat)
			for i := range with {
				if i > 0 && with[i].Usage.CacheReadTokens == 0 {
					t.Errorf("turn %d: no cache read: %+v", i+1, with[i].Usage)
				}
				if without[i].Usage.CacheReadTokens != 0 || without[i].Usage.CacheWriteTokens() != 0 {
					t.Errorf("turn %d without a cache: %+v", i+1, without[i].Usage)
				}
				if with[i].Usage.PromptTokens() != without[i].Usage.PromptTokens() {
					t.Fatalf("turn %d: prompts differ (%d vs %d): not the same conversation", i+1, with[i].Usage.PromptTokens(), without[i].Usage.PromptTokens())
				}
				chargeWith += with[i].Charge
				chargeWithout += without[i].Charge
				implied.Add(implied, cost(with[i].Usage, true))
				full.Add(full, cost(with[i].Usage, false))
			}
			impliedRatio, _ := new(big.Rat).Quo(implied, full).Float64()
			ratio := float64(chargeWith) / float64(chargeWithout)
			t.Logf("%s: conversation charge %s cents with the cache, %s without: ratio %.4f (rate card implies %.4f)",
				r, chargeWith.CentsString(), chargeWithout.CentsString(), ratio, impliedRatio)
			if ratio >= 1 || ratio-impliedRatio > 1e-4 || impliedRatio-ratio > 1e-4 {
				t.Errorf("charge ratio %.6f, rate card implies %.6f", ratio, impliedRatio)
			}
		})
	}
}

// TestCallerCacheMarkersHonoured: a caller's own cache_control (a Chat
// Completions content part sent to anthropic/..., or a Messages block) is
// sent where the caller put it and the adapter adds none of its own.
func TestCallerCacheMarkersHonoured(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("Catalogue rule: quote prices in euros. ", 200)
	const cc = `"cache_control":{"type":"ephemeral"}`
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"anthropic/` + nativeModels["anthropic"] + `","messages":[{"role":"system","content":[{"type":"text","text":` + quote(long) + `,` + cc + `}]},{"role":"user","content":"hi"}]}`},
		{"/v1/messages", `{"model":"anthropic/` + nativeModels["anthropic"] + `","max_tokens":64,"system":[{"type":"text","text":` + quote(long) + `,` + cc + `}],"messages":[{"role":"user","content":"hi"}]}`},
	} {
		resp := e.post(tc.path, e.key, []byte(tc.body), "Anthropic-Version", "2023-06-01")
		if b := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.path, resp.StatusCode, b)
		}
		sent := string(e.lastRequest().Body)
		if strings.Count(sent, "cache_control") != 1 || !strings.Contains(sent, quote(long)+`,`+cc) {
			t.Errorf("%s: upstream body does not carry exactly the caller's marker:\n%.300s", tc.path, sent)
		}
	}
	// Without the caller's marker the adapter adds its own.
	body := `{"model":"anthropic/` + nativeModels["anthropic"] + `","messages":[{"role":"system","content":` + quote(long) + `},{"role":"user","content":"hi"}]}`
	resp := e.post("/v1/chat/completions", e.key, []byte(body))
	readAll(t, resp.Body)
	if n := strings.Count(string(e.lastRequest().Body), "cache_control"); n != 2 {
		t.Errorf("adapter markers: %d, want 2 (system block, last user turn)", n)
	}
}

// TestPromptCacheKeys: OpenAI, Mistral and Fireworks get the account's
// prompt_cache_key (a hash, not the account id) on both endpoints unless
// the caller set one; Fireworks also gets it as x-session-affinity; the
// other vendors get none.
func TestPromptCacheKeys(t *testing.T) {
	e := newEnv(t)
	want := `"prompt_cache_key":"` + proxy.CacheKey(e.acct) + `"`
	for _, v := range route.Vendors() {
		if vendorShape(v) != gw.ShapeC {
			continue
		}
		takes := v == "openai" || v == "mistral" || v == "fireworks"
		model := v + "/" + nativeModels[v]
		for _, tc := range []struct{ path, body string }{
			{"/v1/chat/completions", string(chatBody(model, "hi", false, ""))},
			{"/v1/messages", string(messagesBody(model, "hi", false, ""))},
		} {
			resp := e.post(tc.path, e.key, []byte(tc.body))
			readAll(t, resp.Body)
			rec := e.lastRequest()
			if got := strings.Contains(string(rec.Body), want); got != takes || strings.Contains(string(rec.Body), e.acct) {
				t.Errorf("%s %s: prompt_cache_key set %v, want %v: %s", v, tc.path, got, takes, rec.Body)
			}
			if aff := rec.Header.Get("X-Session-Affinity"); (aff == proxy.CacheKey(e.acct)) != (v == "fireworks") {
				t.Errorf("%s: x-session-affinity %q", v, aff)
			}
		}
	}
	// The caller's own key is kept.
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, `,"prompt_cache_key":"mine"`))
	readAll(t, resp.Body)
	if b := string(e.lastRequest().Body); !strings.Contains(b, `"prompt_cache_key":"mine"`) || strings.Count(b, "prompt_cache_key") != 1 {
		t.Errorf("caller's key replaced: %s", b)
	}
}
