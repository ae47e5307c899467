package vendorreport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/reconcile/vendorreport"
)

// fake starts the fake vendors on loopback for one test.
func fake(t *testing.T) (*fakevendor.Server, string) {
	t.Helper()
	srv := fakevendor.NewHandler()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); _ = srv.Close() })
	return srv, hs.URL
}

// cfg is vendor's reader configuration pointed at the fake, with the
// fake's admin key.
func cfg(root, vendor string) vendorreport.Config {
	return vendorreport.Config{
		BaseURL:  fakevendor.BaseURLAt(root, vendor),
		AdminKey: vendorreport.Secret(fakevendor.AdminKey(vendor)),
	}
}

// call makes one inference request to the fake and returns the answer.
func call(t *testing.T, root, vendor, model, text string) map[string]any {
	t.Helper()
	var url string
	body := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": text}}}
	h := http.Header{"Content-Type": {"application/json"}}
	switch vendor {
	case "anthropic":
		url = fakevendor.BaseURLAt(root, vendor) + "/v1/messages"
		body["max_tokens"] = 100
		h.Set("X-Api-Key", fakevendor.APIKey(vendor))
		h.Set("Anthropic-Version", "2023-06-01")
	default:
		url = fakevendor.BaseURLAt(root, vendor) + "/chat/completions"
		h.Set("Authorization", "Bearer "+fakevendor.APIKey(vendor))
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: HTTP %d %s", vendor, model, resp.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func today() time.Time { return time.Now().UTC().Truncate(24 * time.Hour) }

// expected sums the fake's log for vendor's model the way the report
// does: tokens by class, and the exact cost at the rate card's price
// rounded once.
type expected struct {
	input, cacheRead, cacheWrite, output, requests int64
	cost                                           gw.Money
}

func expect(t *testing.T, srv *fakevendor.Server, vendor, model string, rates func(u fakevendor.Usage) fakevendor.Rates) expected {
	t.Helper()
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	total := new(big.Int)
	for _, u := range srv.UsageLog() {
		if u.Vendor != vendor || u.Model != model {
			continue
		}
		var r fakevendor.Rates
		if rates != nil {
			r = rates(u)
		} else {
			m, ok := card.Lookup(vendor, model)
			if !ok {
				t.Fatalf("%s/%s not on the rate card", vendor, model)
			}
			cr, _ := m.RatesAt(u.Input+u.CacheRead+u.CacheWrite5m+u.CacheWrite1h, u.Time)
			r = fakevendor.Rates{Input: cr.Input, CacheRead: cr.CachedInput, CacheWrite5m: cr.CacheWrite5m, CacheWrite1h: cr.CacheWrite1h, Output: cr.Output}
		}
		e.input += u.Input
		e.cacheRead += u.CacheRead
		e.cacheWrite += u.CacheWrite5m + u.CacheWrite1h
		e.output += u.Output
		e.requests++
		for _, p := range [][2]int64{{u.Input, r.Input}, {u.CacheRead, r.CacheRead}, {u.CacheWrite5m, r.CacheWrite5m}, {u.CacheWrite1h, r.CacheWrite1h}, {u.Output, r.Output}} {
			total.Add(total, new(big.Int).Mul(big.NewInt(p[0]), big.NewInt(p[1])))
		}
	}
	total.Add(total, big.NewInt(500_000))
	e.cost = gw.Money(total.Quo(total, big.NewInt(1_000_000)).Int64())
	return e
}

// model sums a report's rows of one model: tokens by class, cost.
func model(rep reconcile.Report, m string) (tokens map[string]int64, cost gw.Money, hasCost bool) {
	tokens = map[string]int64{}
	for _, r := range rep.Rows {
		if r.Model != m {
			continue
		}
		for k, v := range r.Tokens {
			tokens[k] += v
		}
		if r.HasCost {
			cost += r.Cost
			hasCost = true
		}
	}
	return tokens, cost, hasCost
}

func TestOpenAIReportFromFakeLogPaginated(t *testing.T) {
	srv, root := fake(t)
	for i := 0; i < 3; i++ {
		call(t, root, "openai", "gpt-4.1", fmt.Sprintf("question %d", i))
	}
	call(t, root, "openai", "gpt-4.1-mini", "another")
	srv.SetReportPageSize(1) // one result a page: the reader must follow next_page
	rep, err := vendorreport.NewOpenAI(cfg(root, "openai")).Day(context.Background(), today())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Vendor != "openai" || !rep.Day.Equal(today()) || rep.Complete {
		t.Fatalf("report header = %q %v complete=%v", rep.Vendor, rep.Day, rep.Complete)
	}
	for _, m := range []string{"gpt-4.1", "gpt-4.1-mini"} {
		want := expect(t, srv, "openai", m, nil)
		got, cost, hasCost := model(rep, m)
		if got[reconcile.TokensInput] != want.input || got[reconcile.TokensCacheRead] != want.cacheRead ||
			got[reconcile.TokensOutput] != want.output || got[reconcile.TokensRequests] != want.requests {
			t.Errorf("%s tokens = %v, want %+v", m, got, want)
		}
		if !hasCost || cost != want.cost || cost == 0 {
			t.Errorf("%s cost = %d (has %v), want %d", m, cost, hasCost, want.cost)
		}
	}
	// The usage rows carry the fake's id of the inference key.
	keyID := fakevendor.KeyID("openai", fakevendor.APIKey("openai"))
	found := false
	for _, r := range rep.Rows {
		if r.Tokens != nil && r.VendorKey != keyID {
			t.Errorf("row %+v: vendor key %q, want %q", r, r.VendorKey, keyID)
		}
		found = found || r.VendorKey == keyID
	}
	if !found {
		t.Error("no row names the inference key")
	}
}

func TestAnthropicReportFromFakeLogPaginated(t *testing.T) {
	srv, root := fake(t)
	for i := 0; i < 4; i++ {
		call(t, root, "anthropic", "claude-sonnet-4-5", fmt.Sprintf("q%d", i))
	}
	call(t, root, "anthropic", "claude-haiku-4-5", "[fake:cache=30/20/10] hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello hello ")
	srv.SetReportPageSize(1)
	rep, err := vendorreport.NewAnthropic(cfg(root, "anthropic")).Day(context.Background(), today())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"claude-sonnet-4-5", "claude-haiku-4-5"} {
		want := expect(t, srv, "anthropic", m, nil)
		got, cost, hasCost := model(rep, m)
		if got[reconcile.TokensInput] != want.input || got[reconcile.TokensCacheRead] != want.cacheRead ||
			got[reconcile.TokensCacheWrite] != want.cacheWrite || got[reconcile.TokensOutput] != want.output {
			t.Errorf("%s tokens = %v, want %+v", m, got, want)
		}
		if _, ok := got[reconcile.TokensRequests]; ok {
			t.Errorf("%s: Anthropic's report has no request count, got one", m)
		}
		if !hasCost || cost != want.cost || cost == 0 {
			t.Errorf("%s cost = %d (has %v), want %d", m, cost, hasCost, want.cost)
		}
	}
}

// canned serves body for every request, recording the last one.
func canned(t *testing.T, bodies map[string]string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for suffix, b := range bodies {
			if strings.HasSuffix(r.URL.Path, suffix) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, b)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestMoneyIsExact(t *testing.T) {
	empty := `{"data":[],"has_more":false,"next_page":null}`
	for _, tc := range []struct {
		name   string
		vendor string
		costs  string
		model  string
		want   gw.Money
	}{
		{"openai usd floats 0.1+0.2", "openai", `{"data":[{"results":[
			{"amount":{"value":0.1,"currency":"usd"},"line_item":"gpt-4.1-2025-04-14, input"},
			{"amount":{"value":0.2,"currency":"usd"},"line_item":"gpt-4.1-2025-04-14, output"}]}],"has_more":false}`, "gpt-4.1", 30_000_000},
		{"openai float artefact 0.30000000000000004", "openai", `{"data":[{"results":[
			{"amount":{"value":0.30000000000000004,"currency":"usd"},"line_item":"gpt-4.1, input"}]}],"has_more":false}`, "gpt-4.1", 30_000_000},
		{"openai tiny amounts add before rounding", "openai", `{"data":[{"results":[
			{"amount":{"value":0.000000004,"currency":"usd"},"line_item":"gpt-4.1, input"},
			{"amount":{"value":0.000000004,"currency":"usd"},"line_item":"gpt-4.1, cached input"}]}],"has_more":false}`, "gpt-4.1", 1},
		{"anthropic cents 123.45", "anthropic", `{"data":[{"results":[
			{"currency":"USD","amount":"123.45","model":"claude-sonnet-4-5-20250929","cost_type":"tokens","token_type":"output_tokens"}]}],"has_more":false}`, "claude-sonnet-4-5", 123_450_000},
		{"anthropic cents many decimals", "anthropic", `{"data":[{"results":[
			{"currency":"USD","amount":"0.1","model":"claude-sonnet-4-5"},
			{"currency":"USD","amount":"0.2","model":"claude-sonnet-4-5"},
			{"currency":"USD","amount":"0.0000015","model":"claude-sonnet-4-5"}]}],"has_more":false}`, "claude-sonnet-4-5", 300_002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := canned(t, map[string]string{"/costs": tc.costs, "/cost_report": tc.costs, "/completions": empty, "/messages": empty})
			card, _ := ratecard.Default()
			c := vendorreport.Config{BaseURL: root, AdminKey: "admin", Canonical: func(v, m string) (string, bool) {
				if mm, ok := card.Lookup(v, m); ok {
					return mm.ID, true
				}
				return "", false
			}}
			var src reconcile.Source = vendorreport.NewOpenAI(c)
			if tc.vendor == "anthropic" {
				src = vendorreport.NewAnthropic(c)
			}
			rep, err := src.Day(context.Background(), today())
			if err != nil {
				t.Fatal(err)
			}
			_, cost, has := model(rep, tc.model)
			if !has || cost != tc.want {
				t.Fatalf("cost of %s = %d (has %v), want %d; rows %+v", tc.model, cost, has, tc.want, rep.Rows)
			}
		})
	}
}

func TestGenerationNotReadyThenReady(t *testing.T) {
	srv, root := fake(t)
	srv.SetGenerationLag(2)
	ans := call(t, root, "openrouter", "openai/gpt-4o-mini", "hello")
	id, _ := ans["id"].(string)
	usage, _ := ans["usage"].(map[string]any)
	reported, err := gw.ParseUSD(fmt.Sprint(usage["cost"]))
	if err != nil || id == "" {
		t.Fatalf("answer id %q cost %v: %v", id, usage["cost"], err)
	}
	g := vendorreport.NewOpenRouter(cfg(root, "openrouter"))
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if c, ok, err := g.GenerationCost(ctx, id); err != nil || ok || c != 0 {
			t.Fatalf("lookup %d: cost %d ok %v err %v, want not ready", i, c, ok, err)
		}
	}
	c, ok, err := g.GenerationCost(ctx, id)
	if err != nil || !ok || c != reported || c == 0 {
		t.Fatalf("ready lookup: cost %d ok %v err %v, want %d", c, ok, err, reported)
	}
	if _, ok, err := g.GenerationCost(ctx, "gen-unknown"); ok || err != nil {
		t.Fatalf("unknown id: ok %v err %v, want not ready", ok, err)
	}
	// The key's usage is read with the key itself.
	ku, err := g.KeyUsage(ctx, vendorreport.Secret(fakevendor.APIKey("openrouter")))
	if err != nil || ku.Usage != reported || ku.HasLimit {
		t.Fatalf("key usage %+v err %v, want %d", ku, err, reported)
	}
}

func TestDeepSeekBalanceFollowsTheLog(t *testing.T) {
	srv, root := fake(t)
	srv.SetBalance("deepseek", 50*gw.USD)
	b := vendorreport.NewDeepSeek(cfg(root, "deepseek"))
	ctx := context.Background()
	before, err := b.Balance(ctx)
	if err != nil || before != 50*gw.USD {
		t.Fatalf("balance before = %d, %v", before, err)
	}
	for i := 0; i < 3; i++ {
		call(t, root, "deepseek", "deepseek-flash", fmt.Sprintf("[fake:text=%s] q", strings.Repeat("word ", 20000)))
	}
	after, err := b.Balance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := expect(t, srv, "deepseek", "deepseek-flash", nil).cost
	// DeepSeek shows whole cents.
	if d := (before - after) - want; d > gw.Cent/2 || d < -gw.Cent/2 || before == after {
		t.Fatalf("balance fell by %d, the log cost %d", before-after, want)
	}
}

func TestNoCredentialsIsUnreconcilable(t *testing.T) {
	_, root := fake(t)
	ctx := context.Background()
	noKey := func(v string) vendorreport.Config { c := cfg(root, v); c.AdminKey = ""; return c }
	if _, err := vendorreport.NewOpenAI(noKey("openai")).Day(ctx, today()); !errors.Is(err, reconcile.ErrNoCredentials) {
		t.Errorf("openai: %v", err)
	}
	if _, err := vendorreport.NewAnthropic(noKey("anthropic")).Day(ctx, today()); !errors.Is(err, reconcile.ErrNoCredentials) {
		t.Errorf("anthropic: %v", err)
	}
	if _, _, err := vendorreport.NewOpenRouter(noKey("openrouter")).GenerationCost(ctx, "gen-1"); !errors.Is(err, reconcile.ErrNoCredentials) {
		t.Errorf("openrouter: %v", err)
	}
	if _, err := vendorreport.NewDeepSeek(noKey("deepseek")).Balance(ctx); !errors.Is(err, reconcile.ErrNoCredentials) {
		t.Errorf("deepseek: %v", err)
	}
	set := vendorreport.New([]string{"openai", "anthropic", "google", "groq", "together", "fireworks", "mistral", "deepseek", "openrouter"}, nil)
	for _, v := range []string{"google", "groq", "together", "fireworks", "mistral"} {
		rep, err := set.Sources[v].Day(ctx, today())
		if !errors.Is(err, reconcile.ErrNoReport) || !errors.Is(err, reconcile.ErrNoCredentials) || len(rep.Rows) != 0 {
			t.Errorf("%s: %v, %d rows; want ErrNoReport", v, err, len(rep.Rows))
		}
	}
	if _, err := set.Sources["openai"].Day(ctx, today()); !errors.Is(err, reconcile.ErrNoCredentials) {
		t.Errorf("openai without a configuration: %v", err)
	}
	if set.Generations == nil || len(set.Balances) != 1 {
		t.Errorf("set = %+v", set)
	}
}

func TestKeysStayApart(t *testing.T) {
	_, root := fake(t)
	ctx := context.Background()
	// An inference key given as the admin key: the admin endpoints refuse it.
	for _, v := range []string{"openai", "anthropic"} {
		c := cfg(root, v)
		c.AdminKey = vendorreport.Secret(fakevendor.APIKey(v))
		var src reconcile.Source = vendorreport.NewOpenAI(c)
		if v == "anthropic" {
			src = vendorreport.NewAnthropic(c)
		}
		_, err := src.Day(ctx, today())
		if !errors.Is(err, vendorreport.ErrAdminKeyRefused) {
			t.Errorf("%s with its inference key: %v, want ErrAdminKeyRefused", v, err)
		}
		if err != nil && strings.Contains(err.Error(), fakevendor.APIKey(v)) {
			t.Errorf("%s: the error shows the key: %v", v, err)
		}
	}
	c := cfg(root, "openrouter")
	c.AdminKey = vendorreport.Secret(fakevendor.APIKey("openrouter"))
	if _, _, err := vendorreport.NewOpenRouter(c).GenerationCost(ctx, "gen-1"); !errors.Is(err, vendorreport.ErrAdminKeyRefused) {
		t.Errorf("openrouter generation with the inference key: %v", err)
	}
	d := cfg(root, "deepseek")
	d.AdminKey = vendorreport.Secret(fakevendor.APIKey("deepseek"))
	if _, err := vendorreport.NewDeepSeek(d).Balance(ctx); !errors.Is(err, vendorreport.ErrAdminKeyRefused) {
		t.Errorf("deepseek balance with the inference key: %v", err)
	}
	// The admin key does not serve a request.
	for _, v := range []string{"openai", "deepseek", "openrouter"} {
		b := `{"model":"m/x","messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest(http.MethodPost, fakevendor.BaseURLAt(root, v)+"/chat/completions", strings.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+fakevendor.AdminKey(v))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s inference with the admin key: HTTP %d, want 401", v, resp.StatusCode)
		}
	}
}

func TestSecretIsRedacted(t *testing.T) {
	c := vendorreport.Config{BaseURL: "http://x", AdminKey: "sk-ant-admin01-secret"}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "admin_key", c.AdminKey, "cfg", c)
	js, err := json.Marshal(struct{ Key vendorreport.Secret }{c.AdminKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logged.String(), string(js)} {
		if strings.Contains(s, "secret") || !strings.Contains(s, "[redacted]") {
			t.Errorf("shown: %s", s)
		}
	}
}

// OpenAI reports embeddings apart from completions: their cost is on the
// Costs API, their tokens not in the completions usage.
func TestOpenAIEmbeddingsCostOnly(t *testing.T) {
	srv, root := fake(t)
	req, _ := http.NewRequest(http.MethodPost, fakevendor.BaseURLAt(root, "openai")+"/embeddings",
		strings.NewReader(`{"model":"text-embedding-3-small","input":["one two three","four five"]}`))
	req.Header.Set("Authorization", "Bearer "+fakevendor.APIKey("openai"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("embeddings: HTTP %d", resp.StatusCode)
	}
	rep, err := vendorreport.NewOpenAI(cfg(root, "openai")).Day(context.Background(), today())
	if err != nil {
		t.Fatal(err)
	}
	toks, cost, has := model(rep, "text-embedding-3-small")
	want := expect(t, srv, "openai", "text-embedding-3-small", nil)
	if len(toks) != 0 || !has || cost != want.cost || want.input == 0 {
		t.Fatalf("tokens %v cost %d (has %v), want no tokens and cost %d", toks, cost, has, want.cost)
	}
}
