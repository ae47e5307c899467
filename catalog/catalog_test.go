package catalog

import (
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwlabs/gateway/ratecard"
)

func card(t *testing.T) *ratecard.Card {
	t.Helper()
	c, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCustomerPriceIsExactlyMarkedUp(t *testing.T) {
	c := New(card(t), nil)
	if len(c.Models()) == 0 {
		t.Fatal("empty catalog")
	}
	for _, m := range c.Models() {
		vendor, id, _ := strings.Cut(m.ID, "/")
		rm, ok := card(t).Lookup(vendor, id)
		if !ok {
			t.Fatalf("%s not on the card", m.ID)
		}
		out := new(big.Rat).Mul(rm.Price.Output, big.NewRat(109, 100))
		if got, want := m.Pricing.Output, ratecard.FormatPrice(out); got != want {
			t.Errorf("%s output %s, want %s", m.ID, got, want)
		}
		if m.OwnedBy == "openrouter" {
			t.Errorf("listed an openrouter model: %s", m.ID)
		}
	}
}

func TestRoutableFilter(t *testing.T) {
	c := New(card(t), func(v string) bool { return v == "anthropic" })
	for _, m := range c.Models() {
		if m.OwnedBy != "anthropic" {
			t.Fatalf("listed %s", m.ID)
		}
	}
	if len(c.Models()) == 0 {
		t.Fatal("no anthropic model listed")
	}
	if _, ok := c.Lookup(strings.ToUpper(c.Models()[0].ID)); !ok {
		t.Error("Lookup is not case-insensitive")
	}
}

func TestAnthropicPaging(t *testing.T) {
	c := New(card(t), nil)
	all := c.Models()
	n := len(all)
	first := c.Anthropic("", "", 3)
	if len(first.Data) != 3 || !first.HasMore || *first.FirstID != all[0].ID || *first.LastID != all[2].ID {
		t.Fatalf("first page %+v", first)
	}
	next := c.Anthropic(*first.LastID, "", 3)
	if next.Data[0].ID != all[3].ID {
		t.Fatalf("after_id page starts at %s, want %s", next.Data[0].ID, all[3].ID)
	}
	last := c.Anthropic(all[n-3].ID, "", 10)
	if len(last.Data) != 2 || last.HasMore {
		t.Fatalf("last page %+v", last)
	}
	back := c.Anthropic("", all[5].ID, 3)
	if len(back.Data) != 3 || back.Data[0].ID != all[2].ID || !back.HasMore {
		t.Fatalf("before_id page %+v", back)
	}
	start := c.Anthropic("", all[1].ID, 3)
	if len(start.Data) != 1 || start.HasMore {
		t.Fatalf("before_id near the start %+v", start)
	}
	if empty := c.Anthropic(all[n-1].ID, "", 5); len(empty.Data) != 0 || empty.FirstID != nil || empty.HasMore {
		t.Fatalf("past the end %+v", empty)
	}
}

func TestRouteListedForKeysThatMayCallAMember(t *testing.T) {
	c := &Catalog{models: []Model{
		{ID: "anthropic/claude-x", OwnedBy: "anthropic", Pricing: Pricing{Output: "16.35"}, ContextWindow: 200000, MaxOutputTokens: 64000},
		{ID: "openai/gpt-y", OwnedBy: "openai", Pricing: Pricing{Output: "10.9"}, ContextWindow: 400000, MaxOutputTokens: 128000},
	}}
	c.AddRoute("gw/code", []string{"anthropic/claude-x", "openai/gpt-y"})
	m, ok := c.Lookup("gw/code")
	if !ok || m.Pricing.Output != "16.35" || m.ContextWindow != 200000 || m.MaxOutputTokens != 64000 || m.OwnedBy != "gateway" {
		t.Fatalf("route entry %+v", m)
	}
	if _, ok := c.For([]string{"openai/*"}).Lookup("gw/code"); !ok {
		t.Error("a key allowed one member does not see the route")
	}
	if _, ok := c.For([]string{"google/*"}).Lookup("gw/code"); ok {
		t.Error("a key allowed no member sees the route")
	}
}

// openRouterList is a price list as OpenRouter's models endpoint answers:
// two priced models, the router pseudo-model at -1 and one without a
// price.
const openRouterList = `{"data":[
{"id":"anthropic/claude-sonnet-4.5","context_length":1000000,"pricing":{"prompt":"0.000003","completion":"0.000015","input_cache_read":"0.0000003"},"top_provider":{"context_length":1000000,"max_completion_tokens":64000}},
{"id":"meta-llama/llama-3.3-70b-instruct","context_length":131072,"pricing":{"prompt":"0.0000001","completion":"0.0000003"},"top_provider":{"max_completion_tokens":16384}},
{"id":"openrouter/auto","context_length":2000000,"pricing":{"prompt":"-1","completion":"-1"}},
{"id":"acme/unpriced","context_length":8192,"pricing":{}}]}`

// Issue 38 item 1: OpenRouter's priced models are listed (x 1.09, with
// the list's date and age), the others are not, and an allow list
// applies to them as to the rest.
func TestOpenRouterModelsListed(t *testing.T) {
	fetched := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	l, err := ratecard.ParseOpenRouter(strings.NewReader(openRouterList), fetched)
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[ratecard.OpenRouterList]
	now := fetched.Add(90 * time.Minute)
	c := New(card(t), nil)
	c.WithOpenRouter(cur.Load, func() time.Time { return now })
	if _, ok := c.Lookup("openrouter/anthropic/claude-sonnet-4.5"); ok {
		t.Fatal("listed before any price list was read")
	}
	cur.Store(l)
	m, ok := c.Lookup("OpenRouter/Anthropic/Claude-Sonnet-4.5")
	if !ok {
		t.Fatal("a priced openrouter model is not found")
	}
	if m.OwnedBy != "openrouter" || m.Pricing.Input != "3.27" || m.Pricing.Output != "16.35" || m.Pricing.CachedInput != "0.327" ||
		m.ContextWindow != 1_000_000 || m.MaxOutputTokens != 64_000 || m.Created != fetched.Truncate(24*time.Hour).Unix() {
		t.Errorf("listed as %+v", m)
	}
	if m.PriceList == nil || m.PriceList.AgeSeconds != 5400 || m.PriceList.FetchedAt != "2026-11-27T06:00:00Z" || m.PriceList.FromStore {
		t.Errorf("price list %+v; want fetched 06:00, 5,400 s old", m.PriceList)
	}
	for _, id := range []string{"openrouter/openrouter/auto", "openrouter/acme/unpriced"} {
		if _, ok := c.Lookup(id); ok {
			t.Errorf("%s is listed", id)
		}
	}
	ids := map[string]bool{}
	for _, m := range c.OpenAI().Data {
		ids[m.ID] = true
	}
	if !ids["openrouter/meta-llama/llama-3.3-70b-instruct"] || len(ids) != len(New(card(t), nil).Models())+2 {
		t.Errorf("the list has %d models, want the card's and 2 openrouter ones", len(ids))
	}
	// Sorted, in both shapes.
	all := c.Models()
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Fatalf("not sorted: %s before %s", all[i-1].ID, all[i].ID)
		}
	}
	page := c.Anthropic("openrouter/anthropic/claude-sonnet-4.5", "", 1)
	if len(page.Data) != 1 || page.Data[0].ID != "openrouter/meta-llama/llama-3.3-70b-instruct" || page.Data[0].PriceList == nil {
		t.Errorf("the page after the first openrouter model: %+v", page.Data)
	}
	narrow := c.For([]string{"openrouter/anthropic/*"})
	if got := narrow.Models(); len(got) != 1 || got[0].ID != "openrouter/anthropic/claude-sonnet-4.5" {
		t.Errorf("an openrouter/anthropic/* key sees %v", got)
	}
	// A new list replaces the old one's models.
	l2, err := ratecard.ParseOpenRouter(strings.NewReader(`{"data":[{"id":"acme/new-1","context_length":4096,"pricing":{"prompt":"0.000001","completion":"0.000001"}}]}`), now)
	if err != nil {
		t.Fatal(err)
	}
	cur.Store(l2)
	if _, ok := c.Lookup("openrouter/anthropic/claude-sonnet-4.5"); ok {
		t.Error("a model of the old list is still listed")
	}
	if m, ok := c.Lookup("openrouter/acme/new-1"); !ok || m.PriceList.AgeSeconds != 0 {
		t.Errorf("the new list's model: %+v %v", m, ok)
	}
}

// Issue 38 item 4: the listed ids a name without a known prefix most
// likely means.
func TestSuggest(t *testing.T) {
	l, err := ratecard.ParseOpenRouter(strings.NewReader(openRouterList), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := New(card(t), nil)
	c.WithOpenRouter(func() *ratecard.OpenRouterList { return l }, nil)
	for in, want := range map[string]string{
		"gpt-4.1-mini":                      "openai/gpt-4.1-mini",
		"azure/gpt-4.1-mini":                "openai/gpt-4.1-mini",
		"gpt-4.1-mimi":                      "openai/gpt-4.1-mini",
		"claude-sonnet-4.5":                 "openrouter/anthropic/claude-sonnet-4.5",
		"meta-llama/llama-3.3-70b-instruct": "openrouter/meta-llama/llama-3.3-70b-instruct",
		"llama-3.3-70b-versatile":           "groq/llama-3.3-70b-versatile",
		"quite-unlike-anything":             "",
	} {
		got := c.Suggest(in, 3)
		if want == "" && len(got) != 0 || want != "" && (len(got) == 0 || got[0] != want) {
			t.Errorf("Suggest(%q) = %v, want %s first", in, got, want)
		}
	}
}
