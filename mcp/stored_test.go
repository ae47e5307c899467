package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/mcp"
)

// adminClient serves the admin API over e's store, with the file's
// servers named as the gateway names them.
func (e *env) adminClient(stdio bool, fileServers ...string) *admin.Client {
	e.t.Helper()
	token := strings.Repeat("t", admin.MinTokenLen)
	local := &admin.Local{Store: e.store, MCPAdminStdio: stdio}
	for _, n := range fileServers {
		local.MCPConfigServers = append(local.MCPConfigServers, admin.MCPServer{Name: n})
	}
	h, err := admin.NewHandler(local, token, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	e.t.Cleanup(srv.Close)
	return &admin.Client{BaseURL: srv.URL, Token: token}
}

// TestServerAddedAndRemovedThroughTheAdminAPI: a server added through
// the admin API is served (its tools listed under its prefix and
// called, with the credentials it was given) once the endpoint reads
// the store again, as the key watch makes it; the list of the admin API
// never shows those credentials; open sessions hear that the tools
// changed; removed, its tools leave the list and
// an open session's call of one answers that it was removed, while the
// file's servers are served throughout; bad input is refused before the
// store.
func TestServerAddedAndRemovedThroughTheAdminAPI(t *testing.T) {
	e := newEnv(t, options{
		servers: func(e *env) []mcp.ServerConfig {
			return []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL}}
		},
		config: func(c *mcp.Config) {
			c.ListTTL = 1
			c.Stored = c.Sessions.(mcp.ServerSource)
		},
	})
	ctx := context.Background()
	ac := e.adminClient(false, "alpha")

	var toolsChanged atomic.Int64
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { toolsChanged.Add(1) },
	})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.http.URL, HTTPClient: &http.Client{Transport: bearer{e.key, http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if names := toolNames(t, cs); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "web__") }) {
		t.Fatalf("web listed before it is added: %v", names)
	}
	// Credentials the upstream requires: it sees them, callers never.
	var mu sync.Mutex
	var seen []string
	up := e.up["beta"]
	inner := *up.h.Load()
	wrapped := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Upstream-Token"))
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	up.h.Store(&wrapped)
	added, err := ac.AddMCPServer(ctx, admin.MCPServerRequest{Name: "web", URL: up.http.URL, Headers: map[string]string{"X-Upstream-Token": "tok-123456"}})
	if err != nil {
		t.Fatal(err)
	}
	if added.Headers["X-Upstream-Token"] != admin.Redacted {
		t.Fatalf("the added server shows its header: %+v", added)
	}
	e.ep.Recheck(ctx) // what the key watch does when the store's generation moves
	// The open session hears that the tools changed (on its GET stream).
	for start := time.Now(); toolsChanged.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatal("no notifications/tools/list_changed after the add")
		}
	}
	names := toolNames(t, cs)
	for _, want := range []string{"web__echo", "web__add", "alpha__echo"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list after the add lacks %s: %v", want, names)
		}
	}
	if got := resultText(e.call(cs, "web__echo", map[string]any{"text": "hi"})); got != "beta: hi" {
		t.Fatalf("web__echo = %q", got)
	}
	mu.Lock()
	if len(seen) == 0 || seen[len(seen)-1] != "tok-123456" {
		t.Errorf("the upstream did not get the stored header: %q", seen)
	}
	mu.Unlock()
	if got := e.ep.Servers(); got["web"] != "store" || got["alpha"] != "config" {
		t.Fatalf("Servers() = %v", got)
	}
	list, err := ac.MCPServers(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("admin list: %+v %v", list, err)
	}
	for _, s := range list {
		for _, v := range s.Headers {
			if v != admin.Redacted {
				t.Fatalf("admin list shows a header value: %+v", s)
			}
		}
	}
	// Bad input: a clear 4xx, nothing stored.
	for _, bad := range []struct {
		req  admin.MCPServerRequest
		code gw.Code
	}{
		{admin.MCPServerRequest{Name: "web", URL: up.http.URL}, gw.CodeConflict},
		{admin.MCPServerRequest{Name: "alpha", URL: up.http.URL}, gw.CodeConflict},
		{admin.MCPServerRequest{Name: "bad__name", URL: up.http.URL}, gw.CodeInvalidRequest},
		{admin.MCPServerRequest{Name: "x", URL: "not a url"}, gw.CodeInvalidRequest},
		{admin.MCPServerRequest{Name: "sh", Command: []string{"sh"}}, gw.CodeInvalidRequest},
	} {
		if _, err := ac.AddMCPServer(ctx, bad.req); gw.ErrorCode(err) != bad.code {
			t.Errorf("add %+v: %v, want %s", bad.req, err, bad.code)
		}
	}

	// Replaced: the same name now reaches another upstream.
	if _, err := ac.PutMCPServer(ctx, "web", admin.MCPServerRequest{URL: e.up["alpha"].http.URL}); err != nil {
		t.Fatal(err)
	}
	e.ep.Recheck(ctx)
	if got := resultText(e.call(cs, "web__echo", map[string]any{"text": "moved"})); got != "alpha: moved" {
		t.Fatalf("web__echo after the replace = %q, want the new upstream's answer", got)
	}

	// Removed: gone from the list; the open session's call says so.
	if _, err := ac.RemoveMCPServer(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	e.ep.Recheck(ctx)
	names = toolNames(t, cs)
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "web__") }) || !slices.Contains(names, "alpha__echo") {
		t.Fatalf("tools/list after the removal: %v", names)
	}
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "web__echo", Arguments: map[string]any{"text": "hi"}})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != mcp.CodeUnavailable || !strings.Contains(jerr.Message, "web was removed") {
		t.Fatalf("a call of a removed server's tool: %v, want -32011 saying it was removed", err)
	}
	if got := resultText(e.call(cs, "alpha__echo", map[string]any{"text": "still"})); got != "alpha: still" {
		t.Fatalf("the file's server after the removal: %q", got)
	}
	var refused int
	for _, r := range e.records() {
		if r.Status == 400 {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused calls recorded, want 1 (the removed server's)", refused)
	}
}

// TestStoredServersThatCannotBeServed: a stored stdio server is not
// started without the operator's opt-in (and is with it), and a stored
// server named like one of the file's is left out; both say why in the
// health report, and the file's server is served.
func TestStoredServersThatCannotBeServed(t *testing.T) {
	e := newEnv(t, options{servers: func(e *env) []mcp.ServerConfig {
		return []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL}}
	}})
	ctx := context.Background()
	local := stdioServer(t, "local")
	env := map[string]string{}
	for _, kv := range local.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, s := range []*gw.MCPServer{
		{Name: "local", Command: local.Command, Env: env},
		{Name: "alpha", URL: e.up["beta"].http.URL},
	} {
		if err := e.store.AddMCPServer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, stdio := range []bool{false, true} {
		ep, err := mcp.New(mcp.Config{Gateway: e.gwy, Servers: []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL}}, Stored: e.store, StoredStdio: stdio})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ep.Close)
		reasons := map[string]string{}
		for _, h := range ep.Health() {
			if len(h.Keys) > 0 {
				reasons[h.Vendor] = h.Keys[0].Reason
			}
		}
		if !strings.Contains(reasons["mcp:alpha"], "configuration file has a server of this name") {
			t.Errorf("stdio %v: the shadowed server's health: %v", stdio, reasons)
		}
		servers := ep.Servers()
		if servers["alpha"] != "config" {
			t.Errorf("stdio %v: alpha is %q, want the file's", stdio, servers["alpha"])
		}
		if !stdio && (servers["local"] != "" || !strings.Contains(reasons["mcp:local"], "admin_stdio")) {
			t.Errorf("a stored stdio server without the opt-in: served %q, health %q", servers["local"], reasons["mcp:local"])
		}
		if stdio && servers["local"] != "store" {
			t.Errorf("a stored stdio server with the opt-in is not served: %v %v", servers, reasons)
		}
	}
}
