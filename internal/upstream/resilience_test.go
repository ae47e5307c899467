package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// fakeClock is a settable clock for the breakers and the budget.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestClient(cfg Config) (*Client, *fakeClock) {
	c := New("acme", cfg)
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	c.now = clk.now
	c.sleep = func(ctx context.Context, d time.Duration) error { clk.add(d); return ctx.Err() }
	return c, clk
}

func bearerAuth(h http.Header, k string) { h.Set("Authorization", "Bearer "+k) }

func TestRetriedStatuses(t *testing.T) {
	for _, tt := range []struct {
		status int
		calls  int32
	}{{408, 3}, {429, 3}, {500, 3}, {502, 3}, {503, 3}, {504, 3}, {529, 3}, {501, 1}, {505, 1}, {400, 1}, {403, 1}, {404, 1}, {413, 1}, {422, 1}} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(tt.status)
		}))
		c, _ := newTestClient(Config{BreakerFailures: -1})
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		if calls.Load() != tt.calls || resp.StatusCode != tt.status {
			t.Errorf("status %d: %d calls, answered %d; want %d calls", tt.status, calls.Load(), resp.StatusCode, tt.calls)
		}
	}
}

func TestRetryAfterMsHonouredWithinBudget(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1500")
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c, clk := newTestClient(Config{BreakerFailures: -1})
	var waited []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error { waited = append(waited, d); clk.add(d); return nil }
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if len(waited) != 1 || waited[0] != 1500*time.Millisecond {
		t.Fatalf("waited %v, want [1.5s]", waited)
	}

	// A wait past the request's budget is not taken: the answer comes
	// back at once.
	calls.Store(0)
	c2, _ := newTestClient(Config{BreakerFailures: -1, RetryBudget: time.Second})
	resp, err = c2.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
	if err != nil || resp.StatusCode != 503 || calls.Load() != 1 {
		t.Fatalf("over budget: status %v after %d calls (%v)", resp.StatusCode, calls.Load(), err)
	}
	resp.Body.Close()
}

func TestBudgetCountsFromArrival(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); w.WriteHeader(503) }))
	defer srv.Close()
	c, clk := newTestClient(Config{BreakerFailures: -1, RetryBudget: 30 * time.Second, MaxRetries: 5})
	// The request arrived 29.99 s ago (an earlier model used the time).
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Start: clk.now().Add(-30*time.Second + time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls.Load() != 1 {
		t.Fatalf("%d calls, want 1: no retry fits the budget", calls.Load())
	}
}

func TestSilentVendorIsAFailedAttempt(t *testing.T) {
	for _, headers := range []bool{false, true} {
		var calls atomic.Int32
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := calls.Add(1)
			if n == 1 {
				if headers {
					w.WriteHeader(200)
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
			w.WriteHeader(200)
			_, _ = w.Write([]byte(`{"ok":true}`))
		}))
		c, _ := newTestClient(Config{BreakerFailures: -1, FirstByteTimeout: 50 * time.Millisecond})
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
		if err != nil {
			t.Fatalf("headers=%v: %v", headers, err)
		}
		b := make([]byte, 64)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		if calls.Load() != 2 || string(b[:n]) != `{"ok":true}` {
			t.Fatalf("headers=%v: %d calls, body %q", headers, calls.Load(), b[:n])
		}
		close(release)
		srv.Close()
	}
	// Without retries the caller gets upstream_timeout.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	c, _ := newTestClient(Config{BreakerFailures: -1, FirstByteTimeout: 20 * time.Millisecond, MaxRetries: -1})
	_, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
	if gw.ErrorCode(err) != gw.CodeUpstreamTimeout {
		t.Fatalf("err %v, want upstream_timeout", err)
	}
}

func TestConnectionResetIsRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, _ := http.NewResponseController(w).Hijack()
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	c, _ := newTestClient(Config{BreakerFailures: -1})
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
	if err != nil || resp.StatusCode != 200 || calls.Load() != 2 {
		t.Fatalf("%v %v after %d calls", resp, err, calls.Load())
	}
	resp.Body.Close()
}

// keyServer answers per key: status[key] (200 when absent), and counts
// the calls each key made.
type keyServer struct {
	mu     sync.Mutex
	status map[string]int
	calls  map[string]int
	probes map[string]int
	ra     string
}

func (k *keyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	k.mu.Lock()
	if r.Method == http.MethodGet {
		k.probes[key]++ // the gateway's own probe, not a call
	} else {
		k.calls[key]++
	}
	st := k.status[key]
	k.mu.Unlock()
	if st == 0 {
		st = 200
	}
	if k.ra != "" {
		w.Header().Set("Retry-After", k.ra)
	}
	if st == http.StatusTooManyRequests {
		// The key's own limit: its requests for the minute are spent.
		w.Header().Set("X-Ratelimit-Remaining-Requests", "0")
	}
	w.WriteHeader(st)
}

func (k *keyServer) count(key string) int { k.mu.Lock(); defer k.mu.Unlock(); return k.calls[key] }

func TestPoolSpreadsByWeight(t *testing.T) {
	ks := &keyServer{status: map[string]int{}, calls: map[string]int{}, probes: map[string]int{}}
	srv := httptest.NewServer(ks)
	defer srv.Close()
	keys, err := ParseKeys("a@3, b@1")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestClient(Config{Keys: keys})
	for i := 0; i < 400; i++ {
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Auth: bearerAuth})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	a, b := ks.count("a"), ks.count("b")
	if a+b != 400 || a < 240 || a > 360 {
		t.Fatalf("a=%d b=%d: want about 3:1", a, b)
	}
}

func TestPoolLeastInFlight(t *testing.T) {
	p := newPool([]Key{{Secret: "a"}, {Secret: "b"}}, SpreadLeastInFlight, 5, time.Second, 1)
	now := time.Now()
	l1, _ := p.pick(now, "acme", nil)
	l2, _ := p.pick(now, "acme", nil)
	if l1.k == l2.k {
		t.Fatalf("both calls on key %s", l1.k.Name)
	}
	p.release(now, l1, outcomeOK, "")
	l3, _ := p.pick(now, "acme", nil)
	if l3.k != l1.k {
		t.Fatalf("third call on %s, want the idle key %s", l3.k.Name, l1.k.Name)
	}
}

func TestPoolRestsA429KeyAndTakesOutA401Key(t *testing.T) {
	ks := &keyServer{status: map[string]int{"a": 429, "b": 401}, calls: map[string]int{}, probes: map[string]int{}, ra: "20"}
	srv := httptest.NewServer(ks)
	defer srv.Close()
	keys, _ := ParseKeys("a,b,c")
	c, clk := newTestClient(Config{Keys: keys, Spread: SpreadLeastInFlight, Probe: &Probe{URL: srv.URL, Auth: bearerAuth}})
	for i := 0; i < 10; i++ {
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Auth: bearerAuth})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d answered %d", i, resp.StatusCode)
		}
	}
	if ks.count("a") != 1 || ks.count("b") != 1 || ks.count("c") != 10 {
		t.Fatalf("calls a=%d b=%d c=%d, want 1, 1, 10", ks.count("a"), ks.count("b"), ks.count("c"))
	}
	h := c.Health(clk.now())
	if !h.Keys[1].Out || h.Keys[0].RestUntil.IsZero() || h.Keys[2].Out {
		t.Fatalf("health %+v", h.Keys)
	}
	// After its rest the 429 key is used again.
	clk.add(21 * time.Second)
	ks.mu.Lock()
	ks.status["a"] = 200
	ks.mu.Unlock()
	for i := 0; i < 4; i++ {
		resp, _ := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Auth: bearerAuth})
		resp.Body.Close()
	}
	if ks.count("a") < 2 || ks.count("b") != 1 {
		t.Fatalf("after the rest: a=%d b=%d", ks.count("a"), ks.count("b"))
	}
	// Every key out: vendor_unavailable, without calling.
	ks.mu.Lock()
	ks.status["a"], ks.status["c"] = 401, 401
	ks.mu.Unlock()
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Auth: bearerAuth})
	if err == nil {
		if resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		resp.Body.Close()
	}
	before := ks.count("a") + ks.count("b") + ks.count("c")
	_, err = c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Auth: bearerAuth})
	if gw.ErrorCode(err) != gw.CodeVendorUnavailable || ks.count("a")+ks.count("b")+ks.count("c") != before {
		t.Fatalf("err %v; calls went out", err)
	}
}

func TestBreakerOpensProbesOncePerIntervalAndCloses(t *testing.T) {
	var calls atomic.Int32
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if healthy.Load() {
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 3, BreakerInterval: 10 * time.Second, BreakerAccounts: 1})
	do := func() (int, error) {
		resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i := 0; i < 3; i++ {
		if st, err := do(); st != 503 || err != nil {
			t.Fatalf("call %d: %d %v", i, st, err)
		}
	}
	// Open: 100 calls fail at once, none reaches the vendor.
	for i := 0; i < 100; i++ {
		_, err := do()
		if e := gw.AsError(err); e.Code != gw.CodeOverloaded || e.RetryAfter <= 0 {
			t.Fatalf("open: err %v", err)
		}
	}
	if calls.Load() != 3 {
		t.Fatalf("%d calls reached the vendor while open", calls.Load())
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerOpen || h.Opened != 1 {
		t.Fatalf("health %+v", h)
	}
	// Each interval: one probe; it fails and the breaker stays open.
	for round := 0; round < 6; round++ {
		clk.add(10 * time.Second)
		for i := 0; i < 20; i++ {
			_, _ = do()
		}
		if got := calls.Load(); got != int32(4+round) {
			t.Fatalf("round %d: %d calls, want one probe per interval", round, got)
		}
	}
	// Recovery: the next probe succeeds and traffic returns.
	healthy.Store(true)
	clk.add(10 * time.Second)
	for i := 0; i < 20; i++ {
		if st, err := do(); st != 200 || err != nil {
			t.Fatalf("after recovery: %d %v", st, err)
		}
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed {
		t.Fatalf("health %+v", h)
	}
}

func TestBreakerHalfOpenLetsOneProbeAtATime(t *testing.T) {
	b := newBreaker(1, time.Second)
	now := time.Now()
	b.done(now, false, outcomeFailure, "")
	if ok, _, _ := b.allow(now); ok {
		t.Fatal("open breaker let a call through")
	}
	later := now.Add(time.Second)
	ok, probe, _ := b.allow(later)
	if !ok || !probe {
		t.Fatal("no probe after the interval")
	}
	if ok, _, _ := b.allow(later); ok {
		t.Fatal("a second call went while the probe was in flight")
	}
	// A probe that says nothing (cancelled) lets the next call probe.
	b.done(later, true, outcomeNone, "")
	if ok, probe, _ := b.allow(later); !ok || !probe {
		t.Fatal("no new probe after a cancelled one")
	}
	b.done(later, true, outcomeOK, "")
	if ok, probe, _ := b.allow(later); !ok || probe {
		t.Fatal("not closed after a good probe")
	}
}

func TestCancelledCallIsNotAFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	c, clk := newTestClient(Config{BreakerFailures: 1, BreakerAccounts: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err := c.Do(ctx, &Request{Method: "POST", URL: srv.URL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed {
		t.Fatalf("a cancelled call opened the breaker: %+v", h)
	}
}

func TestParseKeys(t *testing.T) {
	keys, err := ParseKeys(" k1 , k2@5,,k@3@2")
	if err != nil || len(keys) != 3 || keys[0].Secret != "k1" || keys[1].Weight != 5 || keys[2].Secret != "k@3" || keys[2].Weight != 2 || keys[2].Name != "3" {
		t.Fatalf("%+v %v", keys, err)
	}
	for _, bad := range []string{"k@0", "k@x", "k@-1"} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
