package mcp_test

import (
	"context"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratelimit"
)

// TestServerAddedOnOneInstanceServedByTheOther: two gateways on one
// PostgreSQL, each watching the store's key generation as the gateway
// does: a server added through one's admin API is listed and called on
// the other within the watch interval, and removed, leaves it. The
// endpoints' own poll is off, so only the watch can carry the change.
func TestServerAddedOnOneInstanceServedByTheOther(t *testing.T) {
	pgURL := os.Getenv("GATEWAY_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Skip("GATEWAY_TEST_POSTGRES_URL is not set: skipping the two-instance MCP server test")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, _, secret := sharedPostgres(t, pgURL)
	alpha, web := newUpstream(t, "alpha"), newUpstream(t, "beta")
	limits := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	t.Cleanup(func() { limits.Close() })
	open := func() *httptest.Server {
		keys := auth.NewCache(st, 0)
		gwy, err := proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: keys}, Providers: map[string]gw.Provider{}, Limiter: limits})
		if err != nil {
			t.Fatal(err)
		}
		ep, err := mcp.New(mcp.Config{Gateway: gwy, Servers: []mcp.ServerConfig{{Name: "alpha", URL: alpha.http.URL}}, Sessions: st, Stored: st,
			ServerPoll: time.Hour, ListTTL: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ep.Close)
		go keys.Watch(ctx, 0, func() { ep.Recheck(ctx) })
		srv := httptest.NewServer(ep)
		t.Cleanup(srv.Close)
		return srv
	}
	_, other := open(), open()
	ec := &env{t: t, http: other}
	cs := ec.connect(secret)
	if names := toolNames(t, cs); slices.Contains(names, "web__echo") {
		t.Fatalf("web listed before it is added: %v", names)
	}
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: st, MCPConfigServers: []admin.MCPServer{{Name: "alpha"}}}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	adm := httptest.NewServer(h) // the first instance's admin API
	t.Cleanup(adm.Close)
	ac := &admin.Client{BaseURL: adm.URL, Token: token}
	added := time.Now()
	if _, err := ac.AddMCPServer(ctx, admin.MCPServerRequest{Name: "web", URL: web.http.URL}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func([]string) bool) {
		t.Helper()
		for {
			names := toolNames(t, cs)
			if ok(names) {
				t.Logf("%s after %s", what, time.Since(added).Round(time.Millisecond))
				return
			}
			if time.Since(added) > time.Minute {
				t.Fatalf("%s: not within a minute: %v", what, names)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("web served on the other instance", func(n []string) bool { return slices.Contains(n, "web__echo") })
	if got := resultText(ec.call(cs, "web__echo", map[string]any{"text": "across"})); got != "beta: across" {
		t.Fatalf("web__echo on the other instance = %q", got)
	}
	added = time.Now()
	if _, err := ac.RemoveMCPServer(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	waitFor("web gone from the other instance", func(n []string) bool { return !slices.Contains(n, "web__echo") && slices.Contains(n, "alpha__echo") })
}
