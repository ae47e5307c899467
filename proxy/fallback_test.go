package proxy_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/sqlite"
)

// named is a scripted C provider with a name.
type named struct {
	provider
	name  string
	calls atomic.Int32
}

func (p *named) Name() string { return p.name }
func (p *named) Send(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
	p.calls.Add(1)
	return p.send(ctx, c)
}

// vendorBiller prices and holds per vendor, and knows context windows.
type vendorBiller struct {
	hold, cost map[string]gw.Money
	window     map[string]int64
}

func (b vendorBiller) Known(vendor, model string) bool { return model != "unpriced" }
func (b vendorBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	return proxy.HoldPlan{Amount: b.hold[r.Vendor]}, nil
}
func (b vendorBiller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	return proxy.Quote{Cost: b.cost[vendor], Charge: gw.Charge(b.cost[vendor])}, nil
}
func (b vendorBiller) ContextWindow(vendor, model string) int64 { return b.window[vendor] }

type fallbackFixture struct {
	gw        *proxy.Gateway
	store     *sqlite.DB
	principal *gw.Principal
	guards    *atomic.Int32
}

func newFallbackFixture(t testing.TB, providers map[string]gw.Provider, b vendorBiller) *fallbackFixture {
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
	if err := st.TopUp(ctx, acct.ID, gw.USD, "test"); err != nil {
		t.Fatal(err)
	}
	var guards atomic.Int32
	g := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		guards.Add(1)
		return proxy.Verdict{}, nil
	})
	gwy, err := proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: st}, Providers: providers, Biller: b, Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	return &fallbackFixture{gw: gwy, store: st, principal: &gw.Principal{KeyID: "key_1", AccountID: acct.ID}, guards: &guards}
}

func failing(code gw.Code) func(context.Context, *gw.Call) (*gw.Upstream, error) {
	return func(context.Context, *gw.Call) (*gw.Upstream, error) {
		return nil, &gw.Error{Code: code, Message: "scripted " + string(code)}
	}
}

func serving(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }

func TestFallbackServesAtItsPriceAfterAHoldForTheDearest(t *testing.T) {
	primary := &named{provider: provider{send: failing(gw.CodeOverloaded)}, name: "openai"}
	fallback := &named{provider: provider{send: serving}, name: "groq"}
	b := vendorBiller{hold: map[string]gw.Money{"openai": 5 * gw.Cent, "groq": 30 * gw.Cent}, cost: map[string]gw.Money{"openai": 4 * gw.Cent, "groq": gw.Cent}}
	f := newFallbackFixture(t, map[string]gw.Provider{"openai": primary, "groq": fallback}, b)
	ctx := context.Background()
	in := proxy.Inbound{RequestID: "req_fb", Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m",
		Fallbacks: []proxy.Target{{Vendor: "groq", Model: "g"}}, Body: []byte(`{"model":"openai/m","messages":[]}`), Received: time.Now()}
	x, err := f.gw.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if bal, _ := f.store.Balance(ctx, f.principal.AccountID); bal.Held != 30*gw.Cent {
		t.Fatalf("held %v, want the dearest candidate's 30c", bal.Held)
	}
	up, err := x.Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	up.Body.Close()
	if got := x.Inbound().Vendor + "/" + x.Inbound().Model; got != "groq/g" || x.Tries() != 2 {
		t.Fatalf("served by %s in %d tries", got, x.Tries())
	}
	if primary.calls.Load() != 1 || fallback.calls.Load() != 1 || f.guards.Load() != 1 {
		t.Fatalf("calls %d/%d, guard ran %d times", primary.calls.Load(), fallback.calls.Load(), f.guards.Load())
	}
	charge, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{Reported: true, InputTokens: 1, OutputTokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if charge != gw.Charge(gw.Cent) {
		t.Fatalf("charged %v, want the fallback's price %v", charge, gw.Charge(gw.Cent))
	}
	rec, err := f.store.Record(ctx, "req_fb")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Vendor != "groq" || rec.Model != "g" || rec.Cost != gw.Cent || !strings.Contains(rec.Note, "attempts: openai/m overloaded") || !strings.Contains(rec.Note, "groq/g ok") {
		t.Fatalf("record %s/%s cost %v note %q", rec.Vendor, rec.Model, rec.Cost, rec.Note)
	}
	if bal, _ := f.store.Balance(ctx, f.principal.AccountID); bal.Held != 0 || bal.Charged != gw.Charge(gw.Cent) {
		t.Fatalf("balance %+v", bal)
	}
}

func TestFallbacksSkippedWithTheirReason(t *testing.T) {
	primary := &named{provider: provider{send: failing(gw.CodeRateLimited)}, name: "openai"}
	small := &named{provider: provider{send: serving}, name: "groq"}
	other := &named{provider: provider{send: serving}, name: "mistral"}
	last := &named{provider: provider{send: serving}, name: "together"}
	b := vendorBiller{hold: map[string]gw.Money{}, cost: map[string]gw.Money{}, window: map[string]int64{"groq": 10}}
	f := newFallbackFixture(t, map[string]gw.Provider{"openai": primary, "groq": small, "mistral": other, "together": last}, b)
	f.principal.Models = []string{"openai/*", "groq/*", "together/*", "fireworks/*"}
	ctx := context.Background()
	body := `{"model":"openai/m","messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]}`
	in := proxy.Inbound{RequestID: "req_skip", Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m", Body: []byte(body), Received: time.Now(),
		Fallbacks: []proxy.Target{{"groq", "g"}, {"mistral", "m"}, {"fireworks", "f"}, {"together", "unpriced"}, {"together", "t"}}}
	x, err := f.gw.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	up, err := x.Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	up.Body.Close()
	want := []string{
		"openai/m rate_limited",
		"groq/g skipped (context window too small",
		"mistral/m skipped (not allowed for this API key)",
		"fireworks/f skipped (unknown vendor",
		"together/unpriced skipped (no price on the rate card)",
		"together/t ok",
	}
	got := x.Attempts()
	if len(got) != len(want) {
		t.Fatalf("attempts %v", got)
	}
	for i, a := range got {
		if !strings.HasPrefix(a.String(), want[i]) {
			t.Errorf("attempt %d = %q, want %q...", i, a, want[i])
		}
	}
	if small.calls.Load()+other.calls.Load() != 0 || last.calls.Load() != 1 {
		t.Fatal("a skipped model was called")
	}
	_, _ = x.Finish(ctx, proxy.Outcome{Status: 200, Success: true})
}

func TestCallerErrorsDoNotFallOver(t *testing.T) {
	for _, code := range []gw.Code{gw.CodeInvalidRequest, gw.CodeRequestTooLarge} {
		primary := &named{provider: provider{send: failing(code)}, name: "openai"}
		fallback := &named{provider: provider{send: serving}, name: "groq"}
		f := newFallbackFixture(t, map[string]gw.Provider{"openai": primary, "groq": fallback}, vendorBiller{})
		ctx := context.Background()
		in := proxy.Inbound{RequestID: "req_" + string(code), Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m",
			Fallbacks: []proxy.Target{{"groq", "g"}}, Body: []byte(`{"messages":[]}`), Received: time.Now()}
		x, err := f.gw.Begin(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		_, err = x.Call(ctx)
		if gw.ErrorCode(err) != code || fallback.calls.Load() != 0 {
			t.Fatalf("%s: err %v, fallback called %d times", code, err, fallback.calls.Load())
		}
		_, _ = x.Finish(ctx, proxy.Outcome{Status: 400, Err: err})
	}
}

func TestEveryModelFailingAnswersTheLastError(t *testing.T) {
	primary := &named{provider: provider{send: failing(gw.CodeOverloaded)}, name: "openai"}
	fallback := &named{provider: provider{send: failing(gw.CodeUpstreamTimeout)}, name: "groq"}
	f := newFallbackFixture(t, map[string]gw.Provider{"openai": primary, "groq": fallback}, vendorBiller{})
	ctx := context.Background()
	in := proxy.Inbound{RequestID: "req_allfail", Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m",
		Fallbacks: []proxy.Target{{"groq", "g"}}, Body: []byte(`{"messages":[]}`), Received: time.Now()}
	x, err := f.gw.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.Call(ctx)
	if gw.ErrorCode(err) != gw.CodeUpstreamTimeout || x.Inbound().Vendor != "groq" || x.Tries() != 2 {
		t.Fatalf("err %v vendor %s tries %d", err, x.Inbound().Vendor, x.Tries())
	}
	if charge, _ := x.Finish(ctx, proxy.Outcome{Status: 504, Err: err}); charge != 0 {
		t.Fatalf("charged %v", charge)
	}
	if bal, _ := f.store.Balance(ctx, f.principal.AccountID); bal.Held != 0 || bal.Charged != 0 {
		t.Fatalf("balance %+v", bal)
	}
}
