package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/mcp"
)

// TestBadInputClearErrors: malformed JSON-RPC, batches, oversized
// bodies, wrong methods, versions, missing sessions and unknown ones are
// each answered with a clear error; the endpoint keeps serving.
func TestBadInputClearErrors(t *testing.T) {
	e := newEnv(t, options{config: func(c *mcp.Config) { c.MaxBodyBytes = 64 << 10 }})
	sid := e.rawSession(e.key)
	cases := []struct {
		name, method, key, session, body string
		hdr                              []string
		status                           int
		code                             int64  // JSON-RPC error code (0: none expected)
		errType                          string // the gateway's envelope type
		want                             string // in the body
	}{
		{"not JSON", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,`, nil, 400, -32700, "", "malformed"},
		{"not JSON-RPC", "POST", e.key, sid, `{"hello":"world"}`, nil, 400, -32600, "", "malformed"},
		{"a batch", "POST", e.key, sid, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, nil, 400, -32600, "", "batches"},
		{"a huge batch", "POST", e.key, sid, "[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"tools/list"},`, 500) + `{"jsonrpc":"2.0","id":2,"method":"ping"}]`, nil, 400, -32600, "", "batches"},
		{"a huge body", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"` + strings.Repeat("a", 70<<10) + `"}}}`, nil, 413, 0, "request_too_large", "over"},
		{"no key", "POST", "", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, 401, 0, "authentication_error", "Authorization"},
		{"a wrong key", "POST", "gwk_" + strings.Repeat("x", 43), sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, 401, 0, "authentication_error", ""},
		{"PUT", "PUT", e.key, sid, `{}`, nil, 405, 0, "method_not_allowed", "POST, GET or DELETE"},
		{"an old version", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Mcp-Protocol-Version", "1999-01-01"}, 400, 0, "invalid_request", "2025-11-25"},
		{"no session, not initialize", "POST", e.key, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400, -32600, "", "initialize"},
		{"an unknown session", "POST", e.key, "nosuchsession", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 404, -32600, "", "session not found"},
		{"GET without a session", "GET", e.key, "", ``, nil, 400, 0, "invalid_request", "Mcp-Session-Id"},
		{"text/plain", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Content-Type", "text/plain"}, 415, -32600, "", "Content-Type"},
		{"arguments not an object", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":[1,2]}}`, nil, 200, -32602, "", "object"},
		{"no tool name", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, nil, 200, -32602, "", "tool name"},
		{"an unknown tool", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nosuch__tool"}}`, nil, 200, mcp.CodeNotAllowed, "", "SERVER__name"},
		{"a browser origin", "POST", e.key, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Origin", "http://evil.example.com"}, 403, 0, "invalid_request", "origin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.raw(c.method, c.key, c.session, c.body, c.hdr...)
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, body, c.status, c.want)
			}
			if resp.Header.Get("X-Gateway-Request-Id") == "" {
				t.Error("no request id")
			}
			switch {
			case c.code != 0:
				r := decodeRPC(t, body)
				if r.Error == nil || r.Error.Code != c.code {
					t.Errorf("JSON-RPC error %+v, want code %d", r.Error, c.code)
				}
			case c.errType != "":
				var env struct {
					Error struct {
						Type      string `json:"type"`
						RequestID string `json:"request_id"`
					} `json:"error"`
				}
				if err := json.Unmarshal(body, &env); err != nil || env.Error.Type != c.errType || env.Error.RequestID == "" {
					t.Errorf("envelope %s, want type %s", body, c.errType)
				}
			}
		})
	}
	// Still serving.
	resp, body := e.raw("POST", e.key, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"still"}}}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "alpha: still") {
		t.Fatalf("after the bad input: %d %s", resp.StatusCode, body)
	}
}

// TestHugeResultsAndSlowServers: a result over the bound becomes a tool
// error (nothing charged, the record says why); a server slower than
// its time-out becomes a timeout tool error; both are recorded, and the
// endpoint answers the next call.
func TestHugeResultsAndSlowServers(t *testing.T) {
	e := newEnv(t, options{
		servers: func(e *env) []mcp.ServerConfig {
			return []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL, Timeout: 20 * time.Second, Price: 1000},
				{Name: "beta", URL: e.up["beta"].http.URL, Timeout: 300 * time.Millisecond, Price: 1000}}
		},
		config: func(c *mcp.Config) { c.MaxResultBytes = 1 << 20 },
	})
	cs := e.connect(e.key)
	res := e.call(cs, "alpha__big", map[string]any{"bytes": 3 << 19})
	if !res.IsError || !strings.Contains(resultText(res), "over this gateway's limit") {
		t.Fatalf("huge result = %v %.200q", res.IsError, resultText(res))
	}
	res = e.call(cs, "beta__slow", map[string]any{"millis": 5000})
	if !res.IsError || !strings.Contains(resultText(res), "did not answer within") {
		t.Fatalf("slow server = %v %q", res.IsError, resultText(res))
	}
	if got := resultText(e.call(cs, "alpha__big", map[string]any{"bytes": 10})); got != strings.Repeat("x", 10) {
		t.Fatalf("small result = %q", got)
	}
	var tooLarge, timedOut, ok int
	for _, r := range e.records() {
		switch {
		case strings.Contains(r.Note, "result_too_large") && r.Status == 502 && r.Charge == 0:
			tooLarge++
		case r.ErrorCode == gw.CodeUpstreamTimeout && r.Status == 504 && r.Charge == 0:
			timedOut++
		case r.Status == 200 && r.Charge == 1000:
			ok++
		default:
			t.Errorf("unexpected record %+v", r)
		}
	}
	if tooLarge != 1 || timedOut != 1 || ok != 1 {
		t.Errorf("records: %d too large, %d timed out, %d ok", tooLarge, timedOut, ok)
	}
	bal, _ := e.store.Balance(context.Background(), e.acct.ID)
	if bal.Charged != 1000 || bal.Held != 0 {
		t.Errorf("charged %d held %d, want 1000 and 0", bal.Charged, bal.Held)
	}
}

// TestToolRateLimit: past its tool calls per minute a key gets HTTP 429
// with Retry-After and MCP's error form; its chat bucket is untouched.
func TestToolRateLimit(t *testing.T) {
	e := newEnv(t, options{})
	if err := e.store.SetMCPGrant(context.Background(), "key", e.keyID, &gw.MCPGrant{Allow: []string{"*"}, ToolRPM: 2}); err != nil {
		t.Fatal(err)
	}
	sid := e.rawSession(e.key)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"x"}}}`
	for i := range 2 {
		if resp, body := e.raw("POST", e.key, sid, call); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := e.raw("POST", e.key, sid, call)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third call: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	r := decodeRPC(t, body)
	if r.Error == nil || r.Error.Code != mcp.CodeRateLimited || !strings.Contains(string(r.Error.Data), `"retry_after"`) || !strings.Contains(string(body), `"id":7`) {
		t.Fatalf("429 body %s", body)
	}
	d, err := e.limits.Allow(context.Background(), e.keyID, gw.Limit{RPM: 1}, 0)
	if err != nil || !d.Allowed {
		t.Errorf("the key's chat bucket was used by tool calls: %+v %v", d, err)
	}
	limited := 0
	for _, rec := range e.records() {
		if rec.ErrorCode == gw.CodeRateLimited {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("%d rate-limited calls recorded, want 1", limited)
	}
}

// TestUpstreamDownAndBack: a server that goes down is left out of the
// list (the other's tools stay), its calls become tool errors, /readyz
// health says why; when it is back (even having forgotten its sessions)
// the gateway re-initialises and calls go through again.
func TestUpstreamDownAndBack(t *testing.T) {
	e := newEnv(t, options{config: func(c *mcp.Config) { c.ListTTL = time.Nanosecond }})
	cs := e.connect(e.key)
	e.call(cs, "alpha__echo", map[string]any{"text": "up"})
	e.up["alpha"].down.Store(true)
	names := toolNames(t, cs)
	if len(names) == 0 || strings.Contains(strings.Join(names, ","), "alpha__") || !strings.Contains(strings.Join(names, ","), "beta__echo") {
		t.Fatalf("with alpha down, tools/list = %v", names)
	}
	res := e.call(cs, "alpha__echo", map[string]any{"text": "down"})
	if !res.IsError || !strings.Contains(resultText(res), "alpha is unavailable") {
		t.Fatalf("call while down = %v %q", res.IsError, resultText(res))
	}
	var reason string
	for _, h := range e.ep.Health() {
		if h.Vendor == "mcp:alpha" && len(h.Keys) > 0 {
			reason = h.Keys[0].Reason
		}
	}
	if reason == "" {
		t.Errorf("health gives no reason for alpha: %+v", e.ep.Health())
	}
	// Back, with its sessions forgotten (a restart).
	e.up["alpha"].forget()
	e.up["alpha"].down.Store(false)
	e.advance(2 * time.Second) // past the redial spacing
	if got := resultText(e.call(cs, "alpha__echo", map[string]any{"text": "back"})); got != "alpha: back" {
		t.Fatalf("after restart = %q", got)
	}
	if names := toolNames(t, cs); !strings.Contains(strings.Join(names, ","), "alpha__echo") {
		t.Fatalf("alpha not listed again: %v", names)
	}
}

// TestBreakerIsolatedByAccount: one account's failing calls open its own
// breaker for the server (its next calls fail at once) and not the
// server's for another account.
func TestBreakerIsolatedByAccount(t *testing.T) {
	e := newEnv(t, options{config: func(c *mcp.Config) { c.BreakerFailures = 2; c.BreakerInterval = time.Minute }})
	cs := e.connect(e.key)
	e.call(cs, "alpha__add", map[string]any{"a": 1, "b": 1}) // alpha's session is open
	e.up["alpha"].down.Store(true)
	for range 2 {
		if res := e.call(cs, "alpha__echo", map[string]any{"text": "x"}); !res.IsError {
			t.Fatal("a call to a server that is down succeeded")
		}
	}
	e.up["alpha"].down.Store(false)
	res := e.call(cs, "alpha__echo", map[string]any{"text": "x"})
	if !res.IsError || !strings.Contains(resultText(res), "keeps failing") || e.up["alpha"].srv.Echoes.Load() != 0 {
		t.Fatalf("after two failures, = %v %q (echoes %d)", res.IsError, resultText(res), e.up["alpha"].srv.Echoes.Load())
	}
	other, err := e.store.EnsureAccount(context.Background(), "other")
	if err != nil {
		t.Fatal(err)
	}
	key2, _ := e.newKey(other.ID)
	cs2 := e.connect(key2)
	e.advance(2 * time.Second) // past a redial's spacing, should a call have dropped the session
	if got := resultText(e.call(cs2, "alpha__echo", map[string]any{"text": "x"})); got != "alpha: x" {
		t.Fatalf("another account's call = %q", got)
	}
	if got := resultText(e.call(cs2, "beta__echo", map[string]any{"text": "y"})); got != "beta: y" {
		t.Fatalf("the first account's breaker reached another server: %q", got)
	}
}

// TestRedactArguments: credentials never reach the log, by name or by
// look, and the arguments logged are bounded.
func TestRedactArguments(t *testing.T) {
	for _, c := range []struct{ in, want, not string }{
		{`{"query":"weather","api_key":"abc"}`, `"api_key":"[redacted]"`, "abc"},
		{`{"headers":{"Authorization":"Bearer xyz123"}}`, `[redacted]`, "xyz123"},
		{`{"note":"use gwk_ABCDEFGHIJKLMNOPQRSTUV please"}`, `[redacted]`, "gwk_ABC"},
		{`{"list":[{"password":"p"}]}`, `"password":"[redacted]"`, `"p"`},
		{`{"text":"` + strings.Repeat("z", 5000) + `"}`, `zzz`, strings.Repeat("z", 300)},
	} {
		got := mcp.RedactArguments(json.RawMessage(c.in), 512)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) || len(got) > 515 {
			t.Errorf("RedactArguments(%.60s) = %.200s", c.in, got)
		}
	}
}

// TestHugeClientInfoStaysLocal: a session whose initialize parameters
// are too large for the store is still served (by this instance) after
// the store would have been asked again.
func TestHugeClientInfoStaysLocal(t *testing.T) {
	e := newEnv(t, options{})
	big := strings.Repeat("x", 20<<10)
	resp, body := e.raw("POST", e.key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"blob":"`+big+`"}},"clientInfo":{"name":"big","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %.200s", resp.StatusCode, body)
	}
	e.advance(time.Minute)
	if resp, body := e.raw("POST", e.key, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(string(body), "alpha__echo") {
		t.Fatalf("later: %d %.300s", resp.StatusCode, body)
	}
}
