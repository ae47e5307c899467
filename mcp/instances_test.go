package mcp_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/postgres"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/redis"
)

// TestTwoInstancesShareSessions: two gateways on one PostgreSQL and one
// Redis, behind a balancer without affinity: a session opened on one is
// served by the other, their tool calls share one rate limit, and a
// session ended on one is gone on the other.
func TestTwoInstancesShareSessions(t *testing.T) {
	pgURL, redisURL := os.Getenv("GATEWAY_TEST_POSTGRES_URL"), os.Getenv("GATEWAY_TEST_REDIS_URL")
	if pgURL == "" || redisURL == "" {
		t.Skip("GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL are not both set: skipping the two-instance MCP test")
	}
	ctx := context.Background()
	st, acctID, secret := sharedPostgres(t, pgURL)
	ropts, err := goredis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rc := goredis.NewClient(ropts)
	t.Cleanup(func() { rc.Close() })
	var b [6]byte
	rand.Read(b[:])
	prefix := "gwtest:mcp:" + hex.EncodeToString(b[:]) + ":"
	if err := st.SetMCPGrant(ctx, "account", acctID, &gw.MCPGrant{Allow: []string{"alpha"}, ToolRPM: 3}); err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, "alpha")
	type instance struct {
		ep   *mcp.Endpoint
		http *httptest.Server
		now  atomic.Pointer[time.Time]
	}
	start := time.Now()
	open := func() *instance {
		in := &instance{}
		in.now.Store(&start)
		gwy, err := proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: st}, Providers: map[string]gw.Provider{},
			Limiter: redis.New(rc, redis.Options{Prefix: prefix})})
		if err != nil {
			t.Fatal(err)
		}
		in.ep, err = mcp.New(mcp.Config{Gateway: gwy, Servers: []mcp.ServerConfig{{Name: "alpha", URL: up.http.URL}}, Sessions: st,
			Now: func() time.Time { return *in.now.Load() }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(in.ep.Close)
		in.http = httptest.NewServer(in.ep)
		t.Cleanup(in.http.Close)
		return in
	}
	a, bb := open(), open()
	e := &env{t: t, http: a.http}
	sid := e.rawSession(secret)

	call := func(in *instance, id string) (*http.Response, []byte) {
		e.http = in.http
		return e.raw("POST", secret, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hop"}}}`)
	}
	for i, in := range []*instance{bb, a, bb} {
		resp, body := call(in, "1"+string(rune('0'+i)))
		if resp.StatusCode != 200 || !strings.Contains(string(body), "alpha: hop") {
			t.Fatalf("call %d (instance %p): %d %s", i, in, resp.StatusCode, body)
		}
	}
	e.http = bb.http
	if resp, body := e.raw("POST", secret, sid, `{"jsonrpc":"2.0","id":20,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(string(body), "alpha__echo") {
		t.Fatalf("tools/list on the other instance: %d %s", resp.StatusCode, body)
	}
	// The fourth call, on either instance, is over the shared limit.
	if resp, body := call(a, "30"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("fourth call across instances: %d %s, want 429", resp.StatusCode, body)
	}
	// Ended on one, gone on the other once it asks the store again.
	e.http = bb.http
	if resp, body := e.raw("DELETE", secret, sid, ``); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	later := start.Add(10 * time.Second)
	a.now.Store(&later)
	e.http = a.http
	if resp, body := e.raw("POST", secret, sid, `{"jsonrpc":"2.0","id":40,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a session ended on the other instance: %d %s, want 404", resp.StatusCode, body)
	}
}

// sharedPostgres is a store in a schema of its own on pgURL (dropped at
// the test's end), as the instances of a test share it, with an account
// holding $1 and a key of it: the account's id and the key's secret.
func sharedPostgres(t *testing.T, pgURL string) (st *postgres.DB, acctID, secret string) {
	t.Helper()
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	schema := "gwtest_mcp_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), pgURL)
		if err == nil {
			conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			conn.Close(context.Background())
		}
	})
	st, err := postgres.OpenWith(ctx, pgURL, postgres.Options{Schema: schema})
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
	secret, keyID, hash, _ := auth.NewKey()
	if err := st.CreateKey(ctx, &gw.Key{ID: keyID, AccountID: acct.ID, Hint: auth.Hint(secret)}, hash); err != nil {
		t.Fatal(err)
	}
	return st, acct.ID, secret
}
