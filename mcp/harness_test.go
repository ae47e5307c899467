package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/mcp/mcptest"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratelimit"
	"github.com/gwlabs/gateway/sqlite"
)

// TestMain serves mcptest over stdio when the test binary is started as
// an upstream stdio server.
func TestMain(m *testing.M) {
	if name := os.Getenv("MCPTEST_STDIO"); name != "" {
		if err := mcptest.New(name).ServeStdio(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// injectionGuard flags text that carries mcptest.Injection, wherever
// it comes from.
type injectionGuard struct{ checked atomic.Int64 }

func (g *injectionGuard) Check(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
	return proxy.Verdict{}, nil
}

func (g *injectionGuard) CheckText(ctx context.Context, p *gw.Principal, text []gw.Text) (proxy.Verdict, error) {
	g.checked.Add(1)
	for _, t := range text {
		if strings.Contains(t.Text, "Ignore all previous instructions") {
			return proxy.Verdict{Flagged: true, Kind: "injection", Score: 0.99, Reason: "injection in tool text", Excerpt: t.Text[:20], Text: t.Text, ThirdParty: t.Source != gw.TextUser}, nil
		}
	}
	return proxy.Verdict{}, nil
}

// upstream is an mcptest server over HTTP that can be taken down (it
// answers 503) and brought back, or made to forget its sessions.
type upstream struct {
	srv  *mcptest.Server
	down atomic.Bool
	h    atomic.Pointer[http.Handler]
	http *httptest.Server
}

func newUpstream(t *testing.T, name string) *upstream {
	u := &upstream{srv: mcptest.New(name)}
	h := u.srv.Handler()
	u.h.Store(&h)
	u.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		(*u.h.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(u.http.Close)
	return u
}

// forget drops every session the upstream had (a restart).
func (u *upstream) forget() {
	h := u.srv.Handler()
	u.h.Store(&h)
}

type env struct {
	t      *testing.T
	store  *sqlite.DB
	gwy    *proxy.Gateway
	ep     *mcp.Endpoint
	http   *httptest.Server
	guard  *injectionGuard
	acct   *gw.Account
	key    string // the funded key's secret
	keyID  string
	up     map[string]*upstream
	now    atomic.Pointer[time.Time]
	limits *ratelimit.Memory
}

type options struct {
	servers func(e *env) []mcp.ServerConfig
	config  func(c *mcp.Config)
	balance gw.Money
}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{t: t, store: st, guard: &injectionGuard{}, up: map[string]*upstream{}}
	e.acct, err = st.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if o.balance == 0 {
		o.balance = gw.USD
	}
	if err := st.TopUp(ctx, e.acct.ID, o.balance, "test"); err != nil {
		t.Fatal(err)
	}
	e.key, e.keyID = e.newKey(e.acct.ID)
	e.limits = ratelimit.NewMemory(ratelimit.MemoryOptions{})
	t.Cleanup(func() { e.limits.Close() })
	e.gwy, err = proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: st}, Providers: map[string]gw.Provider{}, Limiter: e.limits, Guard: e.guard})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alpha", "beta"} {
		e.up[n] = newUpstream(t, n)
	}
	var servers []mcp.ServerConfig
	if o.servers != nil {
		servers = o.servers(e)
	} else {
		servers = []mcp.ServerConfig{
			{Name: "alpha", URL: e.up["alpha"].http.URL, Headers: map[string]string{"X-Upstream-Secret": "s3cret"}},
			{Name: "beta", URL: e.up["beta"].http.URL},
		}
	}
	cfg := mcp.Config{Gateway: e.gwy, Servers: servers, Sessions: st, Now: e.clock}
	if o.config != nil {
		o.config(&cfg)
	}
	e.ep, err = mcp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.ep.Close)
	e.http = httptest.NewServer(e.ep)
	t.Cleanup(e.http.Close)
	return e
}

func (e *env) clock() time.Time {
	if p := e.now.Load(); p != nil {
		return *p
	}
	return time.Now()
}

// advance moves the endpoint's clock forward by d.
func (e *env) advance(d time.Duration) {
	t := e.clock().Add(d)
	e.now.Store(&t)
}

func (e *env) newKey(accountID string) (secret, id string) {
	e.t.Helper()
	secret, id, hash, err := auth.NewKey()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.CreateKey(context.Background(), &gw.Key{ID: id, AccountID: accountID, Hint: auth.Hint(secret)}, hash); err != nil {
		e.t.Fatal(err)
	}
	return secret, id
}

// stdioServer is a server config that starts this test binary as an
// mcptest stdio server named name.
func stdioServer(t *testing.T, name string) mcp.ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.ServerConfig{Name: name, Command: []string{exe, "-test.run=^$"}, Env: []string{"MCPTEST_STDIO=" + name}}
}

type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session through the gateway with the official
// Go client.
func (e *env) connect(key string) *sdk.ClientSession {
	e.t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.http.URL, HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func (e *env) call(cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	e.t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func resultText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// records returns the account's records of MCP calls, newest first.
func (e *env) records() []gw.Record {
	e.t.Helper()
	rs, err := e.store.Records(context.Background(), gw.RecordFilter{AccountID: e.acct.ID, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []gw.Record
	for _, r := range rs {
		if r.Endpoint == proxy.EndpointMCP {
			out = append(out, r)
		}
	}
	return out
}

// raw sends one JSON-RPC body to /mcp with key and session (either may
// be empty) and returns the answer.
func (e *env) raw(method, key, session string, body string, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.http.URL, bytes.NewBufferString(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// rawSession initialises a session by hand and returns its id.
func (e *env) rawSession(key string) string {
	e.t.Helper()
	resp, b := e.raw("POST", key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		e.t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	e.raw("POST", key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// rpc is a JSON-RPC answer, read from JSON or from an SSE body.
type rpc struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeRPC(t *testing.T, b []byte) rpc {
	t.Helper()
	if i := bytes.Index(b, []byte("data: ")); bytes.HasPrefix(bytes.TrimSpace(b), []byte("event:")) || i == 0 {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "data: ") && len(line) > 7 {
				b = []byte(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	var r rpc
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("not a JSON-RPC answer: %v: %s", err, b)
	}
	return r
}
