package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Each test below is an attack by one account followed by another
// account's ordinary request: the victim must be served (or told to wait
// at most the cap), and the operator's keys stay in.

func as(account string) context.Context {
	return gw.WithCallScope(context.Background(), gw.CallScope{Account: account})
}

// isoServer answers by body: "attack" gets status (with header h),
// anything else 200. GET is the gateway's own probe: probeStatus.
type isoServer struct {
	status      int
	h           http.Header
	probeStatus atomic.Int32
	calls       atomic.Int32
	probes      atomic.Int32
	refuseOrg   bool // 401 when OpenAI-Organization is present
}

func (s *isoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.probes.Add(1)
		w.WriteHeader(max(int(s.probeStatus.Load()), 200))
		return
	}
	s.calls.Add(1)
	b, _ := io.ReadAll(r.Body)
	if s.refuseOrg && r.Header.Get("OpenAI-Organization") != "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if strings.Contains(string(b), "attack") {
		for k, v := range s.h {
			w.Header()[k] = v
		}
		w.WriteHeader(s.status)
		return
	}
	w.WriteHeader(200)
}

func isoDo(t *testing.T, c *Client, ctx context.Context, url, body string, h http.Header) (int, http.Header, error) {
	t.Helper()
	resp, err := c.Do(ctx, &Request{Method: "POST", URL: url, Body: []byte(body), Header: h, Auth: bearerAuth})
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// Why 1: one request answered 429 with Retry-After: 86400 rested both
// pooled keys for a day.
func TestIsolationRequest429DoesNotRestTheKeys(t *testing.T) {
	s := &isoServer{status: 429, h: http.Header{"Retry-After": {"86400"}}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	keys, _ := ParseKeys("k1,k2")
	c, clk := newTestClient(Config{Keys: keys})
	st, h, err := isoDo(t, c, as("attacker"), srv.URL, "attack", nil)
	if err != nil || st != 429 {
		t.Fatalf("attack: %d %v", st, err)
	}
	if ra, _ := RetryAfter(h, clk.now()); ra > 60*time.Second {
		t.Fatalf("the attacker is told to wait %v, more than the 60s cap", ra)
	}
	if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err != nil || st != 200 {
		t.Fatalf("victim: %d %v", st, err)
	}
	for _, k := range c.Health(clk.now()).Keys {
		if !k.RestUntil.IsZero() {
			t.Fatalf("key %s rests until %v after a 429 about one request", k.Name, k.RestUntil)
		}
	}
}

// Why 1, a 429 about the key: the keys rest, at most the cap, and the
// victim is told to wait at most the cap.
func TestIsolationKey429RestsAtMostTheCap(t *testing.T) {
	s := &isoServer{status: 429, h: http.Header{"Retry-After": {"86400"}, "X-Ratelimit-Remaining-Requests": {"0"}}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	keys, _ := ParseKeys("k1,k2")
	c, clk := newTestClient(Config{Keys: keys, KeyRestMax: 30 * time.Second})
	if st, _, err := isoDo(t, c, as("attacker"), srv.URL, "attack", nil); err != nil || st != 429 {
		t.Fatalf("attack: %d %v", st, err)
	}
	for _, k := range c.Health(clk.now()).Keys {
		if k.RestUntil.Sub(clk.now()) > 30*time.Second {
			t.Fatalf("key %s rests %v, over the 30s cap", k.Name, k.RestUntil.Sub(clk.now()))
		}
	}
	_, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil)
	if e := gw.AsError(err); err != nil && (e.Code != gw.CodeRateLimited || e.RetryAfter > 30*time.Second) {
		t.Fatalf("victim: %v (Retry-After %v)", err, e.RetryAfter)
	}
	clk.add(31 * time.Second)
	if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err != nil || st != 200 {
		t.Fatalf("victim after the cap: %d %v", st, err)
	}
}

// Why 2: one request answered 401 took both pooled keys out for good.
func TestIsolationRequest401KeepsTheKeys(t *testing.T) {
	s := &isoServer{status: 401}
	srv := httptest.NewServer(s)
	defer srv.Close()
	keys, _ := ParseKeys("k1,k2")
	c, clk := newTestClient(Config{Keys: keys, Probe: &Probe{URL: srv.URL, Auth: bearerAuth}})
	if st, _, err := isoDo(t, c, as("attacker"), srv.URL, "attack", nil); err != nil || st != 401 {
		t.Fatalf("attack: %d %v", st, err)
	}
	if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err != nil || st != 200 {
		t.Fatalf("victim: %d %v", st, err)
	}
	for _, k := range c.Health(clk.now()).Keys {
		if k.Out {
			t.Fatalf("key %s out: %s", k.Name, k.Reason)
		}
	}
	// A key the gateway's own probe finds refused is taken out.
	s.probeStatus.Store(401)
	clk.add(time.Minute)
	_, _, _ = isoDo(t, c, as("victim"), srv.URL, "attack", nil)
	out := 0
	for _, k := range c.Health(clk.now()).Keys {
		if k.Out {
			out++
		}
	}
	if out == 0 {
		t.Fatal("no key taken out though the probe is refused")
	}
}

// Why 2: a caller's forwarded OpenAI-Organization header provokes 401.
func TestIsolationForwardedHeader401KeepsTheKeys(t *testing.T) {
	s := &isoServer{refuseOrg: true}
	srv := httptest.NewServer(s)
	defer srv.Close()
	keys, _ := ParseKeys("k1,k2")
	c, clk := newTestClient(Config{Keys: keys, Probe: &Probe{URL: srv.URL, Auth: bearerAuth}, CallerHeaders: []string{"OpenAI-Organization"}})
	_, _, err := isoDo(t, c, as("attacker"), srv.URL, "hello", http.Header{"Openai-Organization": {"org-bogus"}})
	if e := gw.AsError(err); e.Code != gw.CodeInvalidRequest || !strings.Contains(e.Message, "Openai-Organization") {
		t.Fatalf("attack: %v", err)
	}
	if s.probes.Load() != 0 {
		t.Fatalf("%d probes for a refusal of the caller's own header", s.probes.Load())
	}
	if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err != nil || st != 200 {
		t.Fatalf("victim: %d %v", st, err)
	}
	for _, k := range c.Health(clk.now()).Keys {
		if k.Out {
			t.Fatalf("key %s out: %s", k.Name, k.Reason)
		}
	}
}

// Why 3: one account's failing requests opened the vendor's breaker (and
// the keys'); another account's requests then failed.
func TestIsolationOneAccountCannotOpenTheBreakers(t *testing.T) {
	s := &isoServer{status: 503}
	srv := httptest.NewServer(s)
	defer srv.Close()
	keys, _ := ParseKeys("k1,k2")
	c, clk := newTestClient(Config{Keys: keys, BreakerFailures: 3, Probe: &Probe{URL: srv.URL, Auth: bearerAuth}})
	for i := 0; i < 20; i++ {
		_, _, _ = isoDo(t, c, as("attacker"), srv.URL, "attack", nil)
	}
	// The attacker is slowed on its own: its breaker answers at once.
	before := s.calls.Load()
	_, _, err := isoDo(t, c, as("attacker"), srv.URL, "attack", nil)
	if gw.ErrorCode(err) != gw.CodeOverloaded || s.calls.Load() != before {
		t.Fatalf("the attacker's own breaker did not open: %v, %d calls", err, s.calls.Load()-before)
	}
	for i := 0; i < 20; i++ {
		if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err != nil || st != 200 {
			t.Fatalf("victim request %d: %d %v", i, st, err)
		}
	}
	h := c.Health(clk.now())
	if h.Breaker != gw.BreakerClosed {
		t.Fatalf("vendor breaker %s", h.Breaker)
	}
	for _, k := range h.Keys {
		if k.Breaker != gw.BreakerClosed {
			t.Fatalf("key %s breaker %s", k.Name, k.Breaker)
		}
	}
}

// The vendor really down: failures from 3 accounts open the breaker.
func TestBreakerOpensOnFailuresFromThreeAccounts(t *testing.T) {
	s := &isoServer{status: 503}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 3})
	for _, a := range []string{"a1", "a2"} {
		for i := 0; i < 2; i++ {
			_, _, _ = isoDo(t, c, as(a), srv.URL, "attack", nil)
		}
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed {
		t.Fatalf("open after failures from 2 accounts: %+v", h)
	}
	_, _, _ = isoDo(t, c, as("a3"), srv.URL, "attack", nil)
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerOpen {
		t.Fatalf("not open after failures from 3 accounts: %+v", h)
	}
	before := s.calls.Load()
	if _, _, err := isoDo(t, c, as("a4"), srv.URL, "hello", nil); gw.ErrorCode(err) != gw.CodeOverloaded || s.calls.Load() != before {
		t.Fatalf("open breaker let a call through: %v", err)
	}
}

// The vendor really down, one account using it: the gateway's own probe
// confirms and the breaker opens.
func TestBreakerOpensWhenTheGatewaysProbeFails(t *testing.T) {
	s := &isoServer{status: 503}
	s.probeStatus.Store(503)
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 3, Probe: &Probe{URL: srv.URL}})
	for i := 0; i < 3; i++ {
		_, _, _ = isoDo(t, c, as("only"), srv.URL, "attack", nil)
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerOpen || s.probes.Load() != 1 {
		t.Fatalf("breaker %s after %d probes", h.Breaker, s.probes.Load())
	}
}

// Failures a caller's input causes (4xx) never count.
func TestBreakerIgnoresCallerErrors(t *testing.T) {
	for _, st := range []int{400, 408, 413, 422} {
		s := &isoServer{status: st}
		srv := httptest.NewServer(s)
		c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 2, BreakerAccounts: 1})
		for i := 0; i < 10; i++ {
			_, _, _ = isoDo(t, c, as("a"), srv.URL, "attack", nil)
		}
		if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed || h.Failures != 0 {
			t.Fatalf("%d counted: %+v", st, h)
		}
		srv.Close()
	}
}

// Why 4 (the vendor side): the attempt budget bounds the calls and the
// time before the first byte, retries included.
func TestAttemptBudgetBoundsCalls(t *testing.T) {
	s := &isoServer{status: 503}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, clk := newTestClient(Config{MaxRetries: 10, BreakerFailures: -1})
	bud := gw.NewAttemptBudget(2, time.Minute, clk.now)
	ctx := gw.WithCallScope(context.Background(), gw.CallScope{Account: "a", Budget: bud})
	if st, _, err := isoDo(t, c, ctx, srv.URL, "attack", nil); err != nil || st != 503 {
		t.Fatalf("%d %v", st, err)
	}
	if s.calls.Load() != 2 {
		t.Fatalf("%d calls, budget 2", s.calls.Load())
	}
	if _, _, err := isoDo(t, c, ctx, srv.URL, "attack", nil); gw.ErrorCode(err) != gw.CodeUpstreamTimeout || s.calls.Load() != 2 {
		t.Fatalf("spent budget: %v, %d calls", err, s.calls.Load())
	}
}

// A wait the request's own time budget ended says nothing of the vendor:
// it counts toward no breaker; the vendor's own first-byte limit does.
func TestBudgetCutIsNotAVendorFailure(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 1, BreakerAccounts: 1, FirstByteTimeout: time.Minute})
	ctx := gw.WithCallScope(context.Background(), gw.CallScope{Account: "a", Budget: gw.NewAttemptBudget(6, 50*time.Millisecond, nil)})
	_, _, err := isoDo(t, c, ctx, srv.URL, "hello", nil)
	if gw.ErrorCode(err) != gw.CodeUpstreamTimeout || !strings.Contains(err.Error(), "time budget") {
		t.Fatalf("err %v", err)
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed || h.Failures != 0 {
		t.Fatalf("a budget cut counted: %+v", h)
	}
}
