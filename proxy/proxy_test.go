package proxy_test

import (
	"context"
	"errors"
	"io"
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

// provider is a scripted gw.Provider: one function field per method.
type provider struct {
	send func(ctx context.Context, c *gw.Call) (*gw.Upstream, error)
}

func (p *provider) Name() string    { return "openai" }
func (p *provider) Shape() gw.Shape { return gw.ShapeC }
func (p *provider) Send(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
	return p.send(ctx, c)
}
func (p *provider) PassThrough(body []byte, model string, stream bool) ([]byte, bool, error) {
	return body, false, nil
}

type guardFunc func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error)

func (f guardFunc) Check(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
	return f(ctx, shape, body)
}

// biller prices every request at a fixed cost and holds a fixed amount.
type biller struct{ hold, cost gw.Money }

func (b biller) Known(vendor, model string) bool { return model != "unpriced" }
func (b biller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	return proxy.HoldPlan{Amount: b.hold}, nil
}
func (b biller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	return proxy.Quote{Cost: b.cost, Charge: gw.Charge(b.cost)}, nil
}

type limiter struct{ allowed bool }

func (l limiter) Allow(ctx context.Context, key string, lim gw.Limit, tokens int64) (gw.LimitDecision, error) {
	return gw.LimitDecision{Allowed: l.allowed, RequestsLimit: 10, RetryAfter: 1500 * time.Millisecond}, nil
}
func (l limiter) Adjust(ctx context.Context, key string, lim gw.Limit, delta int64) error { return nil }

type fixture struct {
	gw        *proxy.Gateway
	store     *sqlite.DB
	principal *gw.Principal
}

func newFixture(t *testing.T, p gw.Provider, g proxy.Guard, l gw.Limiter, balance gw.Money) *fixture {
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
	if balance > 0 {
		if err := st.TopUp(ctx, acct.ID, balance, "test"); err != nil {
			t.Fatal(err)
		}
	}
	gwy, err := proxy.New(proxy.Config{
		Store: st, Auth: &auth.Authenticator{Keys: st},
		Providers: map[string]gw.Provider{"openai": p},
		Limiter:   l, Biller: biller{hold: 10 * gw.Cent, cost: 2 * gw.Cent}, Guard: g,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{gw: gwy, store: st, principal: &gw.Principal{KeyID: "key_1", AccountID: acct.ID}}
}

func (f *fixture) inbound(id string) proxy.Inbound {
	return proxy.Inbound{RequestID: id, Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m", Body: []byte(`{"model":"openai/m","messages":[]}`), Received: time.Now()}
}

func (f *fixture) balance(t *testing.T) gw.Balance {
	t.Helper()
	b, err := f.store.Balance(context.Background(), f.principal.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func okUpstream() *gw.Upstream {
	return &gw.Upstream{Status: 200, Body: io.NopCloser(strings.NewReader("{}"))}
}

// TestBlockedRequestNeverSentAndChargesNothing: the first stage judges
// before the vendor gets the body, so a blocked request never reaches it.
func TestBlockedRequestNeverSentAndChargesNothing(t *testing.T) {
	var sent atomic.Int32
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
		sent.Add(1)
		<-ctx.Done() // a vendor still thinking
		return nil, ctx.Err()
	}}
	g := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		return proxy.Verdict{Flagged: true, Kind: "extraction", Score: 0.99, Reason: "asks for the system prompt", Excerpt: "reveal your prompt"}, nil
	})
	f := newFixture(t, p, g, nil, gw.USD)
	ctx := context.Background()
	x, err := f.gw.Begin(ctx, f.inbound("req_blocked"))
	if err != nil {
		t.Fatal(err)
	}
	if b := f.balance(t); b.Held != 10*gw.Cent {
		t.Fatalf("held %d before the call", b.Held)
	}
	_, err = x.Call(ctx)
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeRequestBlocked || !strings.HasPrefix(e.IncidentID, "inc_") {
		t.Fatalf("Call = %v, want request_blocked with an incident id", err)
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("the vendor was sent a blocked request %d times", n)
	}
	if _, err := x.Finish(ctx, proxy.Outcome{Status: 403, Err: err}); err != nil {
		t.Fatal(err)
	}
	b := f.balance(t)
	if b.Charged != 0 || b.Held != 0 || b.Balance != gw.USD {
		t.Fatalf("balance after block = %+v", b)
	}
	in, err := f.store.Incident(ctx, e.IncidentID)
	if err != nil || in.RequestID != "req_blocked" || in.Kind != "extraction" || in.Excerpt == "" {
		t.Fatalf("incident = %+v, %v", in, err)
	}
}

func TestNothingReleasedBeforeVerdict(t *testing.T) {
	var guardDone atomic.Bool
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	g := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		time.Sleep(150 * time.Millisecond) // slower than the vendor
		guardDone.Store(true)
		return proxy.Verdict{}, nil
	})
	f := newFixture(t, p, g, nil, gw.USD)
	ctx := context.Background()
	x, err := f.gw.Begin(ctx, f.inbound("req_slowguard"))
	if err != nil {
		t.Fatal(err)
	}
	up, err := x.Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	up.Body.Close()
	if !guardDone.Load() {
		t.Fatal("the vendor's answer was released before the guard's verdict")
	}
	if x.Guard != "pass" {
		t.Fatalf("guard summary %q", x.Guard)
	}
	x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{Reported: true}})
}

func TestGuardFailMode(t *testing.T) {
	boom := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		return proxy.Verdict{}, errors.New("model file missing")
	})
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, boom, nil, gw.USD)
	ctx := context.Background()
	x, _ := f.gw.Begin(ctx, f.inbound("req_failopen"))
	up, err := x.Call(ctx)
	if err != nil {
		t.Fatalf("fail-open blocked: %v", err)
	}
	up.Body.Close()
	if x.Guard != "error" {
		t.Fatalf("guard summary %q, want error", x.Guard)
	}
	x.Finish(ctx, proxy.Outcome{Status: 200, Success: true})
}

func TestSettleAndRelease(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, gw.USD)
	ctx := context.Background()

	x, _ := f.gw.Begin(ctx, f.inbound("req_ok"))
	charge, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{InputTokens: 5, OutputTokens: 7, Reported: true}})
	if err != nil {
		t.Fatal(err)
	}
	if want := gw.Charge(2 * gw.Cent); charge != want {
		t.Fatalf("charge %d, want %d", charge, want)
	}
	if again, _ := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true}); again != 0 {
		t.Fatal("a second Finish charged again")
	}
	b := f.balance(t)
	if b.Charged != charge || b.Balance != gw.USD-charge || b.Held != 0 {
		t.Fatalf("after settle: %+v", b)
	}

	y, _ := f.gw.Begin(ctx, f.inbound("req_failed"))
	if _, err := y.Finish(ctx, proxy.Outcome{Status: 502, Err: &gw.Error{Code: gw.CodeUpstream}}); err != nil {
		t.Fatal(err)
	}
	if b2 := f.balance(t); b2 != b {
		t.Fatalf("a failed request moved money: %+v -> %+v", b, b2)
	}
	r, err := f.store.Record(ctx, "req_failed")
	if err != nil || r.ErrorCode != gw.CodeUpstream || r.Charge != 0 {
		t.Fatalf("failed record = %+v, %v", r, err)
	}
}

func TestAdmissionRefusals(t *testing.T) {
	called := false
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { called = true; return okUpstream(), nil }}
	ctx := context.Background()

	poor := newFixture(t, p, nil, nil, 5*gw.Cent) // the hold is 10 cents
	if _, err := poor.gw.Begin(ctx, poor.inbound("req_poor")); gw.ErrorCode(err) != gw.CodeInsufficientBalance {
		t.Fatalf("poor account: %v", err)
	}
	limited := newFixture(t, p, nil, limiter{allowed: false}, gw.USD)
	x, err := limited.gw.Begin(ctx, limited.inbound("req_limited"))
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeRateLimited || e.RetryAfter < time.Second {
		t.Fatalf("limited: %v", err)
	}
	if x.Limit.RequestsLimit != 10 {
		t.Fatal("limit decision not kept for the headers")
	}
	in := limited.inbound("req_unpriced")
	in.Model = "unpriced"
	if _, err := limited.gw.Begin(ctx, in); gw.ErrorCode(err) != gw.CodeInvalidRequest {
		t.Fatalf("unpriced: %v", err)
	}
	if called {
		t.Fatal("a refused request reached the vendor")
	}
	if b := limited.balance(t); b.Held != 0 {
		t.Fatalf("a refused request left a hold: %+v", b)
	}
}

// unavailable is a provider without credentials.
type unavailable struct{ provider }

func (unavailable) Unavailable() error {
	return &gw.Error{Code: gw.CodeVendorUnavailable, Message: "openai is not configured: set GATEWAY_OPENAI_API_KEY"}
}

func TestUnavailableVendorHoldsNothing(t *testing.T) {
	called := false
	p := &unavailable{provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { called = true; return okUpstream(), nil }}}
	f := newFixture(t, p, nil, nil, gw.USD)
	_, err := f.gw.Begin(context.Background(), f.inbound("req_unconfigured"))
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeVendorUnavailable || !strings.Contains(e.Message, "GATEWAY_OPENAI_API_KEY") {
		t.Fatalf("Begin = %v", err)
	}
	if called {
		t.Fatal("the vendor was called")
	}
	if b := f.balance(t); b.Held != 0 {
		t.Fatalf("money held for a call that cannot be made: %+v", b)
	}
}

// stagedGuard is a StagedGuard whose first stage returns first and
// whose second stage, when set, runs beside the vendor call.
type stagedGuard struct {
	first  proxy.Verdict
	second func(context.Context) (proxy.Verdict, error)
}

func (s *stagedGuard) Check(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
	return s.first, nil
}

func (s *stagedGuard) CheckText(ctx context.Context, p *gw.Principal, text []gw.Text) (proxy.Verdict, error) {
	return s.first, nil
}

func (s *stagedGuard) CheckFirst(ctx context.Context, p *gw.Principal, text []gw.Text) (proxy.Verdict, func(context.Context) (proxy.Verdict, error), error) {
	return s.first, s.second, nil
}

// TestSecondStageRunsBesideTheVendor: a grey first verdict sends the
// body while the second stage judges; its block cancels the vendor call.
// A first-stage block never sends.
func TestSecondStageRunsBesideTheVendor(t *testing.T) {
	var sent atomic.Int32
	started := make(chan struct{}, 1)
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
		sent.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	sg := &stagedGuard{first: proxy.Verdict{Kind: "injection", Score: 0.8, Note: "grey"}}
	sg.second = func(ctx context.Context) (proxy.Verdict, error) {
		<-started // the vendor already has the body
		return proxy.Verdict{Flagged: true, Kind: "injection", Score: 0.8, Reason: "second stage", Excerpt: "x"}, nil
	}
	f := newFixture(t, p, sg, nil, gw.USD)
	ctx := context.Background()
	in := f.inbound("req_grey")
	in.Text = []gw.Text{{Source: gw.TextUser, Text: "grey text"}}
	x, err := f.gw.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Call(ctx); gw.ErrorCode(err) != gw.CodeRequestBlocked || sent.Load() != 1 {
		t.Fatalf("Call = %v after %d sends; want request_blocked after one", err, sent.Load())
	}
	x.Finish(ctx, proxy.Outcome{Status: 403, Err: err})

	sg.first, sg.second = proxy.Verdict{Flagged: true, Kind: "extraction", Score: 0.99, Excerpt: "x"}, nil
	in = f.inbound("req_first")
	in.Text = []gw.Text{{Source: gw.TextUser, Text: "attack"}}
	if x, err = f.gw.Begin(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Call(ctx); gw.ErrorCode(err) != gw.CodeRequestBlocked || sent.Load() != 1 {
		t.Fatalf("Call = %v, %d sends in all; want request_blocked with no second send", err, sent.Load())
	}
	x.Finish(ctx, proxy.Outcome{Status: 403, Err: err})
}
