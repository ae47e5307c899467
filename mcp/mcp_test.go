package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/mcp"
)

// TestListAndCallAcrossServers: the tools of an HTTP and a stdio server
// are listed under SERVER__name, two servers' tools of the same name are
// told apart, and each call reaches its own server and is recorded with
// its server, tool, status and bytes.
func TestListAndCallAcrossServers(t *testing.T) {
	e := newEnv(t, options{servers: func(e *env) []mcp.ServerConfig {
		return []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL}, {Name: "beta", URL: e.up["beta"].http.URL}, stdioServer(t, "local")}
	}})
	cs := e.connect(e.key)
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", v)
	}
	names := toolNames(t, cs)
	for _, want := range []string{"alpha__echo", "beta__echo", "local__echo", "alpha__add", "local__poison"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, srv := range []string{"alpha", "beta", "local"} {
		got := resultText(e.call(cs, srv+"__echo", map[string]any{"text": "hi"}))
		if got != srv+": hi" {
			t.Errorf("%s__echo = %q, want %q", srv, got, srv+": hi")
		}
	}
	if got := resultText(e.call(cs, "alpha__add", map[string]any{"a": 2, "b": 3})); got != "5" {
		t.Errorf("alpha__add = %q", got)
	}
	img := e.call(cs, "beta__image", map[string]any{})
	if ic, ok := img.Content[0].(*sdk.ImageContent); !ok || ic.MIMEType != "image/png" || len(ic.Data) == 0 {
		t.Errorf("image content not passed on: %#v", img.Content)
	}
	recs := e.records()
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5: %+v", len(recs), recs)
	}
	byTool := map[string]gw.Record{}
	for _, r := range recs {
		byTool[r.Vendor+"/"+r.Model] = r
	}
	for _, k := range []string{"alpha/echo", "beta/echo", "local/echo", "alpha/add", "beta/image"} {
		r, ok := byTool[k]
		if !ok {
			t.Errorf("no record for %s", k)
			continue
		}
		if r.Status != 200 || r.KeyID != e.keyID || r.AccountID != e.acct.ID || !strings.Contains(r.Note, "mcp bytes in=") || r.Latency <= 0 {
			t.Errorf("record %s = %+v", k, r)
		}
	}
}

// TestAllowListsAgreeOnListAndCall: what tools/list shows is exactly
// what tools/call admits, for a key's list naming one tool of a server
// (never its whole server) and a whole other server, on two servers
// with the same tool names; a denied call is refused and recorded.
func TestAllowListsAgreeOnListAndCall(t *testing.T) {
	e := newEnv(t, options{})
	ctx := context.Background()
	if err := e.store.SetMCPGrant(ctx, "key", e.keyID, &gw.MCPGrant{Allow: []string{"alpha__echo", "beta"}}); err != nil {
		t.Fatal(err)
	}
	cs := e.connect(e.key)
	listed := toolNames(t, cs)
	all := []string{"alpha__echo", "alpha__add", "alpha__image", "alpha__poison", "alpha__big", "alpha__slow", "alpha__fail",
		"beta__echo", "beta__add", "beta__image", "beta__poison", "beta__big", "beta__slow", "beta__fail"}
	for _, name := range all {
		want := name == "alpha__echo" || strings.HasPrefix(name, "beta__")
		if got := slices.Contains(listed, name); got != want {
			t.Errorf("%s listed = %v, want %v", name, got, want)
		}
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: argsFor(name)})
		var jerr *jsonrpc.Error
		denied := errors.As(err, &jerr) && jerr.Code == mcp.CodeNotAllowed
		if denied == want || (!denied && err != nil) {
			t.Errorf("%s: call error %v, want allowed=%v", name, err, want)
		}
	}
	// The account's list narrows the key's: both must admit a tool.
	if err := e.store.SetMCPGrant(ctx, "account", e.acct.ID, &gw.MCPGrant{Allow: []string{"beta__echo", "alpha"}}); err != nil {
		t.Fatal(err)
	}
	e.ep.Recheck(ctx)
	listed = toolNames(t, cs)
	if !slices.Equal(listed, []string{"alpha__echo", "beta__echo"}) {
		t.Errorf("after the account's list, tools/list = %v, want [alpha__echo beta__echo]", listed)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "beta__add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
		t.Error("beta__add allowed past the account's list")
	}
	denied := 0
	for _, r := range e.records() {
		if r.ErrorCode == gw.CodeInvalidRequest && r.Status == 400 {
			denied++
			if r.KeyID != e.keyID || r.Vendor == "" {
				t.Errorf("denied record %+v lacks its key or server", r)
			}
		}
	}
	if denied != 7 {
		t.Errorf("%d denied calls recorded, want 7", denied)
	}
	if e.up["alpha"].srv.Calls.Load() != 1 {
		t.Errorf("alpha took %d calls, want 1 (denied calls must not reach it)", e.up["alpha"].srv.Calls.Load())
	}
}

// TestKeyAllowedNoToolGetsAnError: an empty allow list is an error
// saying so, not an empty tools list.
func TestKeyAllowedNoToolGetsAnError(t *testing.T) {
	e := newEnv(t, options{})
	if err := e.store.SetMCPGrant(context.Background(), "key", e.keyID, &gw.MCPGrant{Allow: []string{}}); err != nil {
		t.Fatal(err)
	}
	cs := e.connect(e.key)
	_, err := cs.ListTools(context.Background(), nil)
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != mcp.CodeNotAllowed || !strings.Contains(jerr.Message, "allowed no MCP tools") {
		t.Fatalf("tools/list = %v, want the no-tools error", err)
	}
	// A list naming only tools that do not exist is the same.
	if err := e.store.SetMCPGrant(context.Background(), "key", e.keyID, &gw.MCPGrant{Allow: []string{"alpha__nope"}}); err != nil {
		t.Fatal(err)
	}
	e.ep.Recheck(context.Background())
	if _, err := cs.ListTools(context.Background(), nil); !errors.As(err, &jerr) || jerr.Code != mcp.CodeNotAllowed {
		t.Fatalf("tools/list with only unknown tools = %v, want the no-tools error", err)
	}
}

// TestPoisonedResultReplaced: a tool result that carries an injection is
// replaced by a tool error naming the incident, the incident is stored,
// nothing is charged, and it never cools the caller down.
func TestPoisonedResultReplaced(t *testing.T) {
	e := newEnv(t, options{servers: func(e *env) []mcp.ServerConfig {
		return []mcp.ServerConfig{{Name: "alpha", URL: e.up["alpha"].http.URL, Price: gw.USD / 100}}
	}})
	cs := e.connect(e.key)
	for range 6 {
		res := e.call(cs, "alpha__poison", map[string]any{})
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "incident inc_") || strings.Contains(text, "Ignore all previous") {
			t.Fatalf("poisoned result = %v %q", res.IsError, text)
		}
	}
	incs, err := e.store.IncidentsOf(context.Background(), e.acct.ID, 10)
	if err != nil || len(incs) != 6 {
		t.Fatalf("incidents = %d, %v; want 6", len(incs), err)
	}
	for _, r := range e.records() {
		if r.Status != http.StatusForbidden || r.Charge != 0 || !strings.HasPrefix(r.Guard, "flagged:") {
			t.Errorf("blocked call's record = %+v", r)
		}
	}
	// No cool-down: a clean call right after goes through and is charged.
	if got := resultText(e.call(cs, "alpha__echo", map[string]any{"text": "ok"})); got != "alpha: ok" {
		t.Fatalf("call after blocked results = %q", got)
	}
	bal, _ := e.store.Balance(context.Background(), e.acct.ID)
	if bal.Balance != gw.USD-gw.USD/100 || bal.Held != 0 {
		t.Errorf("balance %v held %v, want one call charged", bal.Balance, bal.Held)
	}
}

// TestRevokedKeyCutMidSession: revoking a key ends its sessions at once:
// the open session is gone (404 even to another key of the account),
// and its calls fail.
func TestRevokedKeyCutMidSession(t *testing.T) {
	e := newEnv(t, options{})
	cs := e.connect(e.key)
	e.call(cs, "alpha__echo", map[string]any{"text": "before"})
	sid := cs.ID()
	if err := e.store.RevokeKey(context.Background(), e.keyID); err != nil {
		t.Fatal(err)
	}
	e.ep.Recheck(context.Background())
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "after"}}); err == nil {
		t.Fatal("a revoked key's session still calls tools")
	}
	other, _ := e.newKey(e.acct.ID)
	resp, body := e.raw("POST", other, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the revoked key's session, with another key: %d %s, want 404", resp.StatusCode, body)
	}
	resp, _ = e.raw("POST", e.key, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked key: %d, want 401", resp.StatusCode)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("the client's session did not end")
	}
}

// argsFor is a valid argument object for each mcptest tool.
func argsFor(name string) map[string]any {
	_, tool, _ := strings.Cut(name, "__")
	switch tool {
	case "echo":
		return map[string]any{"text": "x"}
	case "add":
		return map[string]any{"a": 1, "b": 2}
	case "big":
		return map[string]any{"bytes": 1}
	case "slow":
		return map[string]any{"millis": 1}
	}
	return map[string]any{}
}
