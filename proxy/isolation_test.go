package proxy_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/sqlite"
)

// isoGateway is a gateway over providers with cfg's isolation settings,
// and a funded account's principal.
func isoGateway(t *testing.T, providers map[string]gw.Provider, cfg proxy.Config) (*proxy.Gateway, *gw.Principal) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Auth, cfg.Providers = st, &auth.Authenticator{Keys: st}, providers
	g, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, &gw.Principal{KeyID: "key_1", AccountID: acct.ID}
}

// One budget covers a request's fallbacks and the retries within each:
// the providers spend it as the vendor client does, and the models past
// it are not called.
func TestAttemptBudgetCoversFallbacks(t *testing.T) {
	vendors := []string{"openai", "groq", "mistral", "together", "fireworks"}
	providers := map[string]gw.Provider{}
	var called []*named
	var accounts []string
	for _, v := range vendors {
		p := &named{name: v}
		p.send = func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
			s := gw.CallScopeFrom(ctx)
			accounts = append(accounts, s.Account)
			// Two tries (a retry) each, as far as the budget goes.
			if s.Budget.Take() {
				s.Budget.Take()
			}
			return nil, &gw.Error{Code: gw.CodeOverloaded, Message: "scripted"}
		}
		providers[v] = p
		called = append(called, p)
	}
	g, pr := isoGateway(t, providers, proxy.Config{MaxAttempts: 5})
	in := proxy.Inbound{RequestID: "req_budget", Endpoint: gw.ShapeC, Principal: pr, Vendor: "openai", Model: "m",
		Body: []byte(`{"model":"openai/m","messages":[]}`), Received: time.Now(), CallerModels: 4}
	for _, v := range vendors[1:] {
		in.Fallbacks = append(in.Fallbacks, proxy.Target{Vendor: v, Model: "m"})
	}
	ctx := context.Background()
	x, err := g.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Call(ctx); gw.ErrorCode(err) != gw.CodeOverloaded {
		t.Fatalf("err %v", err)
	}
	// 5 calls: 2 + 2 + 1, and the last two models are not called.
	for i, p := range called {
		want := int32(1)
		if i >= 3 {
			want = 0
		}
		if p.calls.Load() != want {
			t.Fatalf("%s called %d times, want %d", p.name, p.calls.Load(), want)
		}
	}
	for _, a := range accounts {
		if a != pr.AccountID {
			t.Fatalf("a vendor call made for account %q, want %q", a, pr.AccountID)
		}
	}
	skipped := 0
	for _, a := range x.Attempts() {
		if strings.Contains(a.Skipped, "attempts are spent") {
			skipped++
		}
	}
	if skipped != 2 {
		t.Fatalf("attempts %v", x.Attempts())
	}
}

// A caller's models list longer than the cap is refused with a clear
// 400; an operator route may set its own cap.
func TestCallerModelsOverTheCapRefused(t *testing.T) {
	p := &named{provider: provider{send: serving}, name: "openai"}
	g, pr := isoGateway(t, map[string]gw.Provider{"openai": p}, proxy.Config{})
	in := proxy.Inbound{RequestID: "req_cap", Endpoint: gw.ShapeC, Principal: pr, Vendor: "openai", Model: "m",
		Body: []byte(`{"model":"openai/m","messages":[]}`), Received: time.Now(), CallerModels: proxy.DefaultMaxAttempts}
	for i := 0; i < proxy.DefaultMaxAttempts; i++ {
		in.Fallbacks = append(in.Fallbacks, proxy.Target{Vendor: "openai", Model: "m" + string(rune('a'+i))})
	}
	_, err := g.Begin(context.Background(), in)
	if e := gw.AsError(err); e.Code != gw.CodeInvalidRequest || !strings.Contains(e.Message, "at most 6 vendor calls") {
		t.Fatalf("err %v", err)
	}
	in.MaxAttempts, in.RequestID = 7, "req_cap2"
	if _, err := g.Begin(context.Background(), in); err != nil {
		t.Fatalf("within the route's own cap: %v", err)
	}
	if p.calls.Load() != 0 {
		t.Fatal("a refused request reached the vendor")
	}
}

// Only blocks on the caller's own text count toward the cool-down; a
// block on third-party text or a token count is refused and recorded,
// and counts nothing. The cool-down is the key's before the account's.
func TestCooldownCountsOnlyTheCallersOwnText(t *testing.T) {
	third := true
	g := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		if strings.Contains(string(body), "attack") {
			return proxy.Verdict{Flagged: true, Kind: "extraction", Score: 0.9, Reason: "test", ThirdParty: third}, nil
		}
		return proxy.Verdict{}, nil
	})
	p := &named{provider: provider{send: serving}, name: "openai"}
	gwy, pr := isoGateway(t, map[string]gw.Provider{"openai": p}, proxy.Config{Guard: g,
		GuardCooldown: proxy.Cooldown{Incidents: 3, Window: time.Hour, Period: time.Hour}})
	ctx := context.Background()
	send := func(key, text string) error {
		prc := *pr
		prc.KeyID = key
		x, err := gwy.Begin(ctx, proxy.Inbound{RequestID: "req_" + key + text, Endpoint: gw.ShapeC, Principal: &prc, Vendor: "openai", Model: "m",
			Body: []byte(`{"model":"openai/m","messages":[{"role":"user","content":"` + text + `"}]}`), Received: time.Now()})
		if err == nil {
			var up *gw.Upstream
			status := 200
			if up, err = x.Call(ctx); err == nil {
				up.Body.Close()
			} else {
				status = gw.ErrorCode(err).Status()
			}
			_, _ = x.Finish(ctx, proxy.Outcome{Status: status, Err: err, Success: err == nil})
		}
		return err
	}
	count := func(key, text string) error {
		prc := *pr
		prc.KeyID = key
		return gwy.Screen(ctx, proxy.Inbound{RequestID: "req_count" + text, Endpoint: gw.ShapeC, Principal: &prc, Vendor: "openai", Model: "m",
			Body: []byte(`{"model":"openai/m","messages":[{"role":"user","content":"` + text + `"}]}`), Received: time.Now()})
	}
	for i := 0; i < 5; i++ {
		if err := send("key_1", "attack"+string(rune('a'+i))); gw.ErrorCode(err) != gw.CodeRequestBlocked {
			t.Fatalf("third-party attack %d: %v", i, err)
		}
	}
	third = false
	for i := 0; i < 5; i++ {
		if err := count("key_1", "attack"+string(rune('a'+i))); gw.ErrorCode(err) != gw.CodeRequestBlocked {
			t.Fatalf("count attack %d: %v", i, err)
		}
	}
	if err := send("key_1", "hello"); err != nil {
		t.Fatalf("after third-party and count blocks: %v", err)
	}
	for i := 0; i < 3; i++ {
		_ = send("key_1", "attack own "+string(rune('a'+i)))
	}
	if err := send("key_1", "hello again"); gw.ErrorCode(err) != gw.CodeRateLimited {
		t.Fatalf("the key after 3 blocks of its own text: %v", err)
	}
	if err := send("key_2", "hello"); err != nil {
		t.Fatalf("the account's other key: %v", err)
	}
	for i := 0; i < 3; i++ {
		_ = send("key_2", "attack two "+string(rune('a'+i)))
	}
	if err := send("key_3", "hello"); gw.ErrorCode(err) != gw.CodeRateLimited || !strings.Contains(gw.AsError(err).Message, "account is cooled down") {
		t.Fatalf("a third key once two keys are cooled down: %v", err)
	}
}
