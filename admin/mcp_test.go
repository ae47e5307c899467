package admin_test

import (
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/sqlite"
)

// TestMCPGrantsOverTheAPI: a key's and an account's (by name) MCP allow
// lists are set, read and removed over the admin API, reach the store
// as /mcp reads them, and bad entries and unknown subjects are refused.
func TestMCPGrantsOverTheAPI(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: db}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &admin.Client{BaseURL: srv.URL, Token: token}
	acct, err := c.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.CreateKey(ctx, admin.KeyRequest{Account: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.MCPGrant(ctx, "key", k.ID)
	if err != nil || g.Set || len(g.Allow) != 0 {
		t.Fatalf("no list yet: %+v %v", g, err)
	}
	g, err = c.SetMCPGrant(ctx, "key", k.ID, &admin.MCPGrantRequest{Allow: []string{"github__create_issue", "files"}, ToolRPM: 30})
	if err != nil || !g.Set || !slices.Equal(g.Allow, []string{"github__create_issue", "files"}) || g.ToolRPM != 30 {
		t.Fatalf("set: %+v %v", g, err)
	}
	if g, err = c.SetMCPGrant(ctx, "account", "acme", &admin.MCPGrantRequest{Allow: []string{}}); err != nil || !g.Set || g.ID != acct.ID || len(g.Allow) != 0 {
		t.Fatalf("an account's empty list by name: %+v %v", g, err)
	}
	kg, ag, err := db.MCPGrants(ctx, k.ID, acct.ID)
	if err != nil || kg == nil || ag == nil || !kg.Allows("github", "create_issue") || kg.Allows("github", "delete_repo") || ag.Allows("files", "read") {
		t.Fatalf("stored lists %+v %+v %v", kg, ag, err)
	}
	if g, err = c.SetMCPGrant(ctx, "key", k.ID, nil); err != nil || g.Set {
		t.Fatalf("removed: %+v %v", g, err)
	}
	for _, bad := range []struct {
		subject, id string
		req         *admin.MCPGrantRequest
		code        gw.Code
	}{
		{"key", "key_nope", &admin.MCPGrantRequest{Allow: []string{"x"}}, gw.CodeNotFound},
		{"account", "nobody", &admin.MCPGrantRequest{Allow: []string{"x"}}, gw.CodeNotFound},
		{"team", "x", &admin.MCPGrantRequest{Allow: []string{"x"}}, gw.CodeInvalidRequest},
		{"key", k.ID, &admin.MCPGrantRequest{Allow: []string{"a b"}}, gw.CodeInvalidRequest},
		{"key", k.ID, &admin.MCPGrantRequest{Allow: []string{""}}, gw.CodeInvalidRequest},
		{"key", k.ID, &admin.MCPGrantRequest{Allow: []string{"x"}, ToolRPM: -1}, gw.CodeInvalidRequest},
	} {
		if _, err := c.SetMCPGrant(ctx, bad.subject, bad.id, bad.req); gw.ErrorCode(err) != bad.code {
			t.Errorf("%s %s %+v: %v, want %s", bad.subject, bad.id, bad.req, err, bad.code)
		}
	}
}

// TestMCPCallsOverTheAPI: the admin API lists /mcp's calls from their
// records, an account's alone by name, and never a chat request's.
func TestMCPCallsOverTheAPI(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: db}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &admin.Client{BaseURL: srv.URL, Token: token}
	a, _ := db.EnsureAccount(ctx, "acme")
	b, _ := db.EnsureAccount(ctx, "other")
	now := time.Now().UTC()
	for i, r := range []gw.Record{
		{RequestID: "req_1", AccountID: a.ID, KeyID: "key_a", Endpoint: "mcp", Vendor: "github", Model: "create_issue", Status: 200, Charge: 1000, Note: "mcp bytes in=10 out=20", CreatedAt: now},
		{RequestID: "req_2", AccountID: a.ID, KeyID: "key_a", Endpoint: gw.ShapeM, Vendor: "anthropic", Model: "claude", Status: 200, CreatedAt: now},
		{RequestID: "req_3", AccountID: b.ID, KeyID: "key_b", Endpoint: "mcp", Vendor: "files", Model: "read", Status: 403, ErrorCode: gw.CodeRequestBlocked, Guard: "flagged:injection", CreatedAt: now},
	} {
		if err := db.Log(ctx, &r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	all, err := c.MCPCalls(ctx, "", "", 0)
	if err != nil || len(all) != 2 {
		t.Fatalf("all calls: %+v %v", all, err)
	}
	mine, err := c.MCPCalls(ctx, "acme", "", 10)
	if err != nil || len(mine) != 1 || mine[0].Server != "github" || mine[0].Tool != "create_issue" || mine[0].ChargeUSD != "0.00001000" || mine[0].Note == "" {
		t.Fatalf("acme's calls: %+v %v", mine, err)
	}
	if _, err := c.MCPCalls(ctx, "nobody", "", 10); gw.ErrorCode(err) != gw.CodeNotFound {
		t.Fatalf("unknown account: %v", err)
	}
}
