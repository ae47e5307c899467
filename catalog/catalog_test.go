package catalog

import (
	"math/big"
	"strings"
	"testing"

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
