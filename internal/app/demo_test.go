package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/route"
)

// serve --fake-vendors prints a working key on every start: the first
// start creates the demo account with $10, a restart issues a new key on
// it (a stored secret cannot be shown again) and the earlier key keeps
// working.
func TestDemoKeyOnEveryStart(t *testing.T) {
	db := t.TempDir() + "/g.db"
	urlRE := regexp.MustCompile(`listening on (http://\S+)`)
	keyRE := regexp.MustCompile(`export GATEWAY_KEY=(gwk_[0-9A-Za-z]+)`)
	start := func() (url, key, out string, stop func()) {
		cfg, err := envConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		cfg.Addr, cfg.DatabaseURL, cfg.FakeVendors = "127.0.0.1:0", db, true
		cfg.OTelEnv = func(string) string { return "" }
		var stdout, stderr syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, &stdout, &stderr) }()
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
	readme, err := os.ReadFile("../../README.md")
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
