package mcp_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwlabs/gateway/mcp"
)

// TestExpiredSessions: the two expiries the spec speaks of. An upstream
// server that forgets the gateway's session (a restart: it answers 404)
// is re-initialised and the call that met the 404 is tried again, so
// the caller never sees it; a caller's session unused past the idle
// time is answered 404 (the spec's "initialize again"), and a new one
// works.
func TestExpiredSessions(t *testing.T) {
	e := newEnv(t, options{config: func(c *mcp.Config) { c.SessionIdle = time.Hour }})
	// Count the upstream's 404s and initializations.
	up := e.up["alpha"]
	var missing, inits atomic.Int64
	wrap := func() {
		inner := *up.h.Load()
		h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				if strings.Contains(string(body), `"method":"initialize"`) {
					inits.Add(1)
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			rec := &statusRecorder{ResponseWriter: w}
			inner.ServeHTTP(rec, r)
			if rec.status == http.StatusNotFound {
				missing.Add(1)
			}
		}))
		up.h.Store(&h)
	}
	wrap()
	cs := e.connect(e.key)
	if got := resultText(e.call(cs, "alpha__echo", map[string]any{"text": "one"})); got != "alpha: one" {
		t.Fatalf("first call = %q", got)
	}
	before := inits.Load()
	up.forget() // the upstream restarts: the gateway's session there is gone
	wrap()
	res := e.call(cs, "alpha__echo", map[string]any{"text": "two"})
	if res.IsError || resultText(res) != "alpha: two" {
		t.Fatalf("the call after the upstream forgot the session = %v %q, want it re-initialised and answered", res.IsError, resultText(res))
	}
	if missing.Load() == 0 || inits.Load() != before+1 {
		t.Fatalf("upstream saw %d 404s and %d new initializations, want at least one 404 and one initialization", missing.Load(), inits.Load()-before)
	}
	if rs := e.records(); len(rs) != 2 || rs[0].Status != 200 {
		t.Fatalf("records %+v, want two successful calls", rs)
	}

	// The caller's own session, unused past the idle time: 404.
	sid := e.rawSession(e.key)
	e.advance(2 * time.Hour)
	resp, body := e.raw("POST", e.key, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "initialize a new one") {
		t.Fatalf("an expired session: %d %s, want 404 asking to initialize again", resp.StatusCode, body)
	}
	sid2 := e.rawSession(e.key)
	if resp, body := e.raw("POST", e.key, sid2, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(string(body), "alpha__echo") {
		t.Fatalf("a new session after the expiry: %d %s", resp.StatusCode, body)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
