package main

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/gwlabs/gateway/ratecard"
)

// Both official SDKs list the models through the gateway: OpenAI's shape
// for openai-go, Anthropic's paged shape for anthropic-sdk-go (which sends
// anthropic-version), only vendors that are configured, at the price the
// caller pays.
func TestModelsThroughSDKs(t *testing.T) {
	e := newEnv(t, func(c *Config) { delete(c.Vendors, "mistral") }) // mistral has no key here
	ctx := context.Background()

	var ids []string
	oc, ac := e.openaiClient(), e.anthropicClient()
	pager := oc.Models.ListAutoPaging(ctx)
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) < 10 {
		t.Fatalf("openai-go listed %d models: %v", len(ids), ids)
	}
	var anthropicIDs []string
	apager := ac.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(7)})
	for apager.Next() {
		anthropicIDs = append(anthropicIDs, apager.Current().ID)
	}
	if err := apager.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != strings.Join(anthropicIDs, " ") {
		t.Errorf("the two SDKs list different models:\nopenai    %v\nanthropic %v", ids, anthropicIDs)
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "mistral/") || strings.HasPrefix(id, "openrouter/") {
			t.Errorf("listed %s, whose vendor is not routable here", id)
		}
	}

	// The price is the rate card's x 1.09, exactly.
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := card.Lookup("openai", nativeModels["openai"])
	if !ok {
		t.Fatal("openai model not on the card")
	}
	want := ratecard.FormatPrice(new(big.Rat).Mul(m.Price.Input, big.NewRat(109, 100)))
	resp, err := http.Get(e.url + "/v1/models/openai/" + nativeModels["openai"])
	if err != nil {
		t.Fatal(err)
	}
	body := string(readAll(t, resp.Body))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"input":"`+want+`"`) || !strings.Contains(body, `"object":"model"`) {
		t.Errorf("GET one model: %d %s; want input price %s", resp.StatusCode, body, want)
	}
	resp, err = http.Get(e.url + "/v1/models/mistral/mistral-large-latest")
	if err != nil {
		t.Fatal(err)
	}
	body = string(readAll(t, resp.Body))
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"type":"not_found"`) {
		t.Errorf("GET an unroutable model: %d %s", resp.StatusCode, body)
	}
}
