package e2e

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// Both official SDKs list the models through the gateway: OpenAI's shape
// for openai-go, Anthropic's paged shape for anthropic-sdk-go (which sends
// anthropic-version), only vendors that are configured, at the price the
// caller pays.
func TestModelsThroughSDKs(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { delete(c.Vendors, "mistral") }) // mistral has no key here
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

// A guessed model id gets only priced ids proposed, and the README's
// table of one model per prefix names ids GET /v1/models lists.
func TestModelSuggestionsAndReadmeTable(t *testing.T) {
	e := newEnv(t)
	resp := e.get("/v1/models", e.key)
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(readAll(t, resp.Body), &list); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range list.Data {
		listed[m.ID] = true
	}
	for _, guess := range []string{"openai/gpt-4o", "deepseek/deepseek-chat", "openai/" + nativeModels["openai"] + "x"} {
		resp := e.post("/v1/chat/completions", e.key, chatBody(guess, "hi", false, ""))
		body := string(readAll(t, resp.Body))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "no price on the rate card") {
			t.Fatalf("%s: %d %s", guess, resp.StatusCode, body)
		}
		proposed := regexp.MustCompile(`(?:did you mean \\"|include )([^"\\]+)`).FindStringSubmatch(body)
		if proposed == nil {
			t.Fatalf("%s: nothing proposed: %s", guess, body)
		}
		for _, id := range strings.Split(proposed[1], ", ") {
			if id = strings.TrimSuffix(strings.TrimSuffix(id, "; GET /v1/models lists the priced models"), ";"); !listed[id] {
				t.Errorf("%s: proposed %q, which GET /v1/models does not list: %s", guess, id, body)
			}
		}
	}
	// Unprefixed, only listed ids are proposed, in full (issue 38: before,
	// "openai/<model>").
	resp = e.post("/v1/chat/completions", e.key, chatBody("gpt-4o", "hi", false, ""))
	body := string(readAll(t, resp.Body))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "did you mean") {
		t.Errorf("unprefixed gpt-4o: %d %s", resp.StatusCode, body)
	}
	for _, m := range regexp.MustCompile(`\\"([^"\\]+)\\"`).FindAllStringSubmatch(body, -1)[1:] {
		if !listed[m[1]] {
			t.Errorf("unprefixed gpt-4o: proposed %q, which GET /v1/models does not list: %s", m[1], body)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| Prefix | A model to try |")
	if !ok {
		t.Fatal("the README has no table of models per prefix")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z]+/[^`]+)`").FindAllStringSubmatch(table, -1) {
		id := m[1]
		seen[strings.SplitN(id, "/", 2)[0]] = true
		if !listed[id] { // openrouter/ too, from its price list (issue 38)
			t.Errorf("the README names %s, which GET /v1/models does not list", id)
		}
	}
	for _, v := range route.Vendors() {
		if !seen[v] {
			t.Errorf("the README's table has no model for %s/", v)
		}
	}
}

// serve --fake-vendors prints a working key on every start: the first
// start creates the demo account with $10, a restart issues a new key on
// it (a stored secret cannot be shown again) and the earlier key keeps
// working.
func TestDemoKeyOnEveryStart(t *testing.T) {
	db := t.TempDir() + "/g.db"
	urlRE := regexp.MustCompile(`listening on (http://\S+)`)
	keyRE := regexp.MustCompile(`export GATEWAY_KEY=(gwk_[0-9A-Za-z]+)`)
	start := func() (url, key, out string, stop func()) {
		cfg, err := app.ConfigFromEnv(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		cfg.Addr, cfg.DatabaseURL, cfg.FakeVendors = "127.0.0.1:0", db, true
		cfg.OTelEnv = func(string) string { return "" }
		var stdout, stderr syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- app.RunServer(ctx, cfg, &stdout, &stderr) }()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			s := stdout.String() + stderr.String()
			if u, k := urlRE.FindStringSubmatch(s), keyRE.FindStringSubmatch(stdout.String()); u != nil && k != nil {
				url, key = u[1], k[1]
				break
			}
		}
		stop = func() {
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if url == "" {
			stop()
			t.Fatalf("no URL and key:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
		return url, key, stdout.String(), stop
	}
	works := func(url, key string) int {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	url, first, out, stop := start()
	if !strings.Contains(out, "demo account created with $10.00") || works(url, first) != http.StatusOK {
		t.Errorf("first start: key %s, output:\n%s", first, out)
	}
	stop()
	url, second, out, stop := start()
	defer stop()
	if second == first || !strings.Contains(out, "a new key for the demo account (balance $10.00000000") {
		t.Errorf("restart: key %s (first %s), output:\n%s", second, first, out)
	}
	if a, b := works(url, second), works(url, first); a != http.StatusOK || b != http.StatusOK {
		t.Errorf("after the restart the new key answers %d and the first %d, want 200 both", a, b)
	}
}
