package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// listedModel is the part of a /v1/models entry these tests read.
type listedModel struct {
	ID              string `json:"id"`
	OwnedBy         string `json:"owned_by"`
	ContextWindow   int64  `json:"context_window"`
	MaxOutputTokens int64  `json:"max_output_tokens"`
	Pricing         struct {
		Input, Output, CachedInput string
	} `json:"pricing"`
	PriceList *struct {
		Source     string `json:"source"`
		FetchedAt  string `json:"fetched_at"`
		AgeSeconds int64  `json:"age_seconds"`
		FromStore  bool   `json:"from_store"`
	} `json:"price_list"`
}

// modelList reads GET /v1/models in OpenAI's shape.
func (e *env) modelList(t *testing.T) map[string]listedModel {
	t.Helper()
	resp := e.get("/v1/models", e.key)
	b := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, b)
	}
	var l struct{ Data []listedModel }
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	out := map[string]listedModel{}
	for _, m := range l.Data {
		out[m.ID] = m
	}
	return out
}

// Issue 38 item 1: GET /v1/models (both shapes) and /v1/models/{id} list
// the models OpenRouter's price list prices, at its price x 1.09, with
// their context windows and the list's date and age; the router
// pseudo-model (negative prices) is neither listed nor served.
func TestModelsListOpenRouter(t *testing.T) {
	e := newEnv(t)
	listed := e.modelList(t)
	m, ok := listed["openrouter/anthropic/claude-sonnet-4.5"]
	if !ok {
		t.Fatalf("openrouter/anthropic/claude-sonnet-4.5 is not listed; listed: %d models", len(listed))
	}
	// The fake lists it at $1 / $2 per million, cache reads $0.10.
	if m.OwnedBy != "openrouter" || m.Pricing.Input != "1.09" || m.Pricing.Output != "2.18" || m.ContextWindow != 1_000_000 || m.MaxOutputTokens != 64_000 {
		t.Errorf("listed as %+v; want owned by openrouter, $1.09 / $2.18, 1,000,000-token window, 64,000 out", m)
	}
	if m.PriceList == nil || m.PriceList.Source != "openrouter models endpoint" || m.PriceList.FromStore || m.PriceList.AgeSeconds < 0 {
		t.Errorf("price list %+v; want the endpoint's, fresh", m.PriceList)
	} else if at, err := time.Parse(time.RFC3339, m.PriceList.FetchedAt); err != nil || time.Since(at) > time.Hour {
		t.Errorf("price list fetched at %q (%v)", m.PriceList.FetchedAt, err)
	}
	var n int
	for id, m := range listed {
		switch {
		case strings.HasPrefix(id, "openrouter/"):
			n++
			if m.PriceList == nil {
				t.Errorf("%s is listed without its price list", id)
			}
		case m.PriceList != nil:
			t.Errorf("%s (not openrouter) carries a price list", id)
		}
	}
	if n != 3 {
		t.Errorf("%d openrouter models listed, want the fake's 3 priced ones", n)
	}
	if _, ok := listed["openrouter/openrouter/auto"]; ok {
		t.Error("the router pseudo-model (priced -1) is listed")
	}

	// Anthropic's paged shape lists the same ids.
	var paged []string
	after := ""
	for page := 0; page < 100; page++ {
		resp := e.get("/v1/models?limit=7&after_id="+url.QueryEscape(after), e.key, "Anthropic-Version", "2023-06-01")
		var p struct {
			Data []struct {
				ID        string          `json:"id"`
				PriceList json.RawMessage `json:"price_list"`
			}
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := json.Unmarshal(readAll(t, resp.Body), &p); err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Data {
			paged = append(paged, d.ID)
			if strings.HasPrefix(d.ID, "openrouter/") && len(d.PriceList) == 0 {
				t.Errorf("%s in Anthropic's shape lacks its price list", d.ID)
			}
		}
		if !p.HasMore {
			break
		}
		after = p.LastID
	}
	if len(paged) != len(listed) {
		t.Errorf("Anthropic's shape lists %d models, OpenAI's %d", len(paged), len(listed))
	}

	// Every listed id is found by /v1/models/{id}, in both shapes,
	// slashes and all.
	for id := range listed {
		for _, hdr := range [][]string{nil, {"Anthropic-Version", "2023-06-01"}} {
			resp := e.get("/v1/models/"+id, e.key, hdr...)
			if b := readAll(t, resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), quote(id)) {
				t.Errorf("GET /v1/models/%s %v: %d %s", id, hdr, resp.StatusCode, b)
			}
		}
	}
	for _, id := range []string{"openrouter/openrouter/auto", "openrouter/acme/unlisted-1"} {
		resp := e.get("/v1/models/"+id, e.key)
		if b := readAll(t, resp.Body); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /v1/models/%s: %d %s, want 404", id, resp.StatusCode, b)
		}
		resp = e.post("/v1/chat/completions", e.key, chatBody(id, "hi", false, ""))
		if b := readAll(t, resp.Body); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("chat with %s: %d %s, want 400", id, resp.StatusCode, b)
		}
	}
	// A listed id answers chat.
	resp := e.post("/v1/chat/completions", e.key, chatBody("openrouter/anthropic/claude-sonnet-4.5", "hi", false, ""))
	if b := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
		t.Errorf("chat with a listed openrouter id: %d %s", resp.StatusCode, b)
	}
}

// listGate stands in front of the fake OpenRouter: its price list
// answers 503 while down is set (and counts the reads), everything else
// goes through.
type listGate struct {
	down  atomic.Bool
	reads atomic.Int64
	srv   *httptest.Server
}

func newListGate(t *testing.T, fake *fakevendor.Server) (*listGate, string) {
	t.Helper()
	target, err := url.Parse(fake.BaseURL(route.OpenRouter))
	if err != nil {
		t.Fatal(err)
	}
	g := &listGate{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") && r.Method == http.MethodGet {
			g.reads.Add(1)
			if g.down.Load() {
				http.Error(w, "not yet", http.StatusServiceUnavailable)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g, g.srv.URL + target.Path
}

// Issue 38 item 2: a gateway started before OpenRouter's price list
// answers retries it (with backoff, here shortened) and serves
// openrouter/ once it does, without waiting for the 6-hour refresh.
func TestOpenRouterListRetriedUntilItLoads(t *testing.T) {
	var gate *listGate
	e := newEnv(t, func(c *app.Config) {
		fake, err := fakevendor.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fake.Close() })
		var base string
		gate, base = newListGate(t, fake)
		gate.down.Store(true)
		c.Vendors[route.OpenRouter] = app.VendorConfig{BaseURL: base, APIKey: fake.APIKey(route.OpenRouter)}
		c.OpenRouterRetry, c.OpenRouterRetryMax = 5*time.Millisecond, 40*time.Millisecond
	})
	model := "openrouter/anthropic/claude-sonnet-4.5"
	resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi", false, ""))
	if b := readAll(t, resp.Body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "could not be read yet") {
		t.Fatalf("before the list answers: %d %s, want 400 (not priced yet)", resp.StatusCode, b)
	}
	if _, ok := e.modelList(t)[model]; ok {
		t.Error("listed before the price list was read")
	}
	// Retried while down, not only at start.
	for start := time.Now(); gate.reads.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the price list was read %d times in 30 s while it failed; want retries", gate.reads.Load())
		}
	}
	gate.down.Store(false)
	reachable := time.Now()
	for {
		resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi", false, ""))
		b := readAll(t, resp.Body)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Since(reachable) > 30*time.Second {
			t.Fatalf("30 s after the list became reachable: %d %s", resp.StatusCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := e.modelList(t)[model]; !ok {
		t.Error("not listed once the price list was read")
	}
}

// Issue 38 item 2: the last good price list is kept in the store; a
// gateway started while the list cannot be read serves openrouter/ from
// the kept copy, and /v1/models says it is that copy and how old it is.
func TestOpenRouterListFromStore(t *testing.T) {
	fake, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	gate, base := newListGate(t, fake)
	db := filepath.Join(t.TempDir(), "gateway.db")
	start := func() *env {
		return newEnv(t, func(c *app.Config) {
			c.DatabaseURL = db
			c.Vendors[route.OpenRouter] = app.VendorConfig{BaseURL: base, APIKey: fake.APIKey(route.OpenRouter)}
			c.OpenRouterRetry, c.OpenRouterRetryMax = 5*time.Millisecond, 40*time.Millisecond
		})
	}
	first := start()
	model := "openrouter/anthropic/claude-sonnet-4.5"
	m, ok := first.modelList(t)[model]
	if !ok || m.PriceList == nil || m.PriceList.FromStore {
		t.Fatalf("first run: %+v %v; want listed from the vendor", m, ok)
	}
	fetched := m.PriceList.FetchedAt
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := first.m.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := first.m.Close(); err != nil {
		t.Fatal(err)
	}

	gate.down.Store(true)
	e := start()
	m, ok = e.modelList(t)[model]
	if !ok || m.PriceList == nil || !m.PriceList.FromStore || m.PriceList.FetchedAt != fetched || m.Pricing.Input != "1.09" {
		t.Fatalf("second run with the list down: %+v %v; want the kept copy of %s", m, ok, fetched)
	}
	resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi", false, ""))
	if b := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("served from the kept list: %d %s", resp.StatusCode, b)
	}
	rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
	if rec.Charge <= 0 {
		t.Errorf("charged %d from the kept list", rec.Charge)
	}
	// Once the vendor answers again a fresh list replaces the copy.
	gate.down.Store(false)
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if m := e.modelList(t)[model]; m.PriceList != nil && !m.PriceList.FromStore {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("30 s after the vendor answered again, the kept copy is still in use")
		}
	}
}
