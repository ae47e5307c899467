package upstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// outageServer fails every call (and the gateway's probe, GET) with 503
// while down; once up, it fails only the calls whose body says "attack"
// (the attacker's prompt makes the vendor fail).
type outageServer struct {
	down          atomic.Bool
	calls, probes atomic.Int32
}

func (s *outageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet {
		s.probes.Add(1)
	} else {
		s.calls.Add(1)
	}
	if s.down.Load() || r.Method != http.MethodGet && strings.Contains(string(b), "attack") {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// openByOutage opens c's vendor breaker with a real outage: failures
// from three accounts.
func openByOutage(t *testing.T, c *Client, clk *fakeClock, s *outageServer, url string) {
	t.Helper()
	s.down.Store(true)
	for _, a := range []string{"o1", "o2", "o3"} {
		_, _, _ = isoDo(t, c, as(a), url, "hello", nil)
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerOpen {
		t.Fatalf("the outage did not open the breaker: %+v", h)
	}
	s.down.Store(false)
}

// Break 1: after a real outage opened the shared breaker, A timed
// requests that fail (its own prompt makes the vendor answer 503) to
// land as the half-open trial; each failed trial reopened the breaker,
// so B was refused as long as A went on. Now the trial is the
// gateway's own probe: A's failures land after it, as one account's.
func TestIsolationTrialIsTheGatewaysProbe(t *testing.T) {
	s := &outageServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, pooled := range []bool{false, true} {
		cfg := Config{MaxRetries: -1, BreakerFailures: 3, BreakerInterval: 10 * time.Second, Probe: &Probe{URL: srv.URL, Auth: bearerAuth}}
		if pooled {
			cfg.Keys, _ = ParseKeys("k1,k2")
		}
		c, clk := newTestClient(cfg)
		openByOutage(t, c, clk, s, srv.URL)
		served := 0
		for round := 0; round < 5; round++ {
			clk.add(cfg.BreakerInterval) // the breaker's interval ends
			// A's request arrives first, to be the trial.
			_, _, _ = isoDo(t, c, as("attacker"), srv.URL, "attack", nil)
			for i := 0; i < 3; i++ {
				if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err == nil && st == 200 {
					served++
				}
			}
		}
		if served != 15 {
			t.Fatalf("pooled=%v: B served %d of 15 requests while A timed its failures as the trial", pooled, served)
		}
		if h := c.Health(clk.now()); h.Breaker != gw.BreakerClosed {
			t.Fatalf("pooled=%v: breaker %s", pooled, h.Breaker)
		}
	}
}

// Break 1 without a probe: a caller's failed trial is one account's
// failure and does not reopen the shared breaker alone.
func TestIsolationFailedCallerTrialDoesNotReopen(t *testing.T) {
	s := &outageServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, clk := newTestClient(Config{MaxRetries: -1, BreakerFailures: 3, BreakerInterval: 10 * time.Second})
	openByOutage(t, c, clk, s, srv.URL)
	served := 0
	for round := 0; round < 5; round++ {
		clk.add(10 * time.Second)
		_, _, _ = isoDo(t, c, as("attacker"), srv.URL, "attack", nil)
		for i := 0; i < 3; i++ {
			if st, _, err := isoDo(t, c, as("victim"), srv.URL, "hello", nil); err == nil && st == 200 {
				served++
			}
		}
	}
	if served != 15 {
		t.Fatalf("B served %d of 15 requests while A's failures were the trial", served)
	}
	// The vendor really down again: failures from three accounts reopen it.
	s.down.Store(true)
	for _, a := range []string{"o1", "o2", "o3"} {
		_, _, _ = isoDo(t, c, as(a), srv.URL, "hello", nil)
	}
	if h := c.Health(clk.now()); h.Breaker != gw.BreakerOpen {
		t.Fatalf("a real outage after the trials did not reopen the breaker: %+v", h)
	}
}
