package app

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
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
	openRouter := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "mistral/") {
			t.Errorf("listed %s, whose vendor is not routable here", id)
		}
		if strings.HasPrefix(id, "openrouter/") {
			openRouter++
		}
	}
	// Issue 38 item 1: OpenRouter's priced models are listed, from its
	// price list (before: none).
	if openRouter == 0 {
		t.Errorf("no openrouter/ model listed: %v", ids)
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
	resp := e.get("/v1/models/openai/"+nativeModels["openai"], e.key)
	body := string(readAll(t, resp.Body))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"input":"`+want+`"`) || !strings.Contains(body, `"object":"model"`) {
		t.Errorf("GET one model: %d %s; want input price %s", resp.StatusCode, body, want)
	}
	resp = e.get("/v1/models/mistral/mistral-large-latest", e.key)
	body = string(readAll(t, resp.Body))
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"type":"not_found"`) {
		t.Errorf("GET an unroutable model: %d %s", resp.StatusCode, body)
	}
}

// get sends a GET with the key (none when "") and the extra headers.
func (e *env) get(path, key string, hdr ...string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// GET /v1/models and /v1/models/{id} need a key (401 in the shape the
// caller asked for) and list only what the key may call.
func TestModelsNeedAKeyAndFollowItsAllowList(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, path := range []string{"/v1/models", "/v1/models/openai/" + nativeModels["openai"]} {
		for _, key := range []string{"", "gwk_notakey"} {
			resp := e.get(path, key)
			if body := readAll(t, resp.Body); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"type":"authentication_error"`) || strings.Contains(string(body), `"type":"error"`) {
				t.Errorf("GET %s with key %q: %d %s, want 401 in the OpenAI envelope", path, key, resp.StatusCode, body)
			}
			resp = e.get(path, key, "Anthropic-Version", "2023-06-01")
			if body := readAll(t, resp.Body); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"type":"error"`) || !strings.Contains(string(body), `"authentication_error"`) {
				t.Errorf("GET %s (Anthropic) with key %q: %d %s, want 401 in the Anthropic envelope", path, key, resp.StatusCode, body)
			}
		}
	}
	// A key restricted to one vendor's models and one model of another.
	secret, k, err := createKey(ctx, e.m.Store(), "narrow", gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	allowed := "anthropic/" + nativeModels["anthropic"]
	if err := e.m.Store().(interface {
		SetKeyModels(context.Context, string, []string) error
	}).SetKeyModels(ctx, k.ID, []string{"openai/*", allowed}); err != nil {
		t.Fatal(err)
	}
	oc := openai.NewClient(ooption.WithBaseURL(e.url+"/v1"), ooption.WithAPIKey(secret), ooption.WithMaxRetries(0))
	var ids []string
	pager := oc.Models.ListAutoPaging(ctx)
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	sawAllowed, sawOpenAI := false, false
	for _, id := range ids {
		switch {
		case id == allowed:
			sawAllowed = true
		case strings.HasPrefix(id, "openai/"):
			sawOpenAI = true
		default:
			t.Errorf("the restricted key sees %s", id)
		}
	}
	if !sawAllowed || !sawOpenAI {
		t.Errorf("the restricted key sees %v, want openai/* and %s", ids, allowed)
	}
	ac := anthropic.NewClient(aoption.WithBaseURL(e.url), aoption.WithAPIKey(secret), aoption.WithMaxRetries(0))
	var aids []string
	apager := ac.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(3)})
	for apager.Next() {
		aids = append(aids, apager.Current().ID)
	}
	if err := apager.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != strings.Join(aids, " ") {
		t.Errorf("the two SDKs list different models:\nopenai    %v\nanthropic %v", ids, aids)
	}
	if resp := e.get("/v1/models/google/"+nativeModels["google"], secret); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET a model the key may not call: %d, want 404", resp.StatusCode)
	} else {
		readAll(t, resp.Body)
	}
	if resp := e.get("/v1/models/"+allowed, secret); resp.StatusCode != http.StatusOK {
		t.Errorf("GET an allowed model: %d, want 200", resp.StatusCode)
	} else {
		readAll(t, resp.Body)
	}
}
