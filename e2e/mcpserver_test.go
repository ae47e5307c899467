package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/mcp/mcptest"
)

// TestMCPServerAddedThroughTheAdminAPI: the gateway as wired, with no
// MCP server in its configuration: /mcp refuses to initialize (404)
// until a server is added through the admin API; the key watch then
// serves it (its tools under its prefix, a call answered); removed, its
// tools leave the list and the open session's call says it was removed.
func TestMCPServerAddedThroughTheAdminAPI(t *testing.T) {
	up := httptest.NewServer(mcptest.New("docs").Handler())
	t.Cleanup(up.Close)
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	ctx := context.Background()
	connect := func() (*sdk.ClientSession, error) {
		c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
		return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{e.key}}, MaxRetries: -1}, nil)
	}
	if _, err := connect(); err == nil {
		t.Fatal("initialize with no MCP server succeeded")
	}
	ac := &admin.Client{BaseURL: e.url, Token: testAdminToken}
	if _, err := ac.AddMCPServer(ctx, admin.MCPServerRequest{Name: "docs", URL: up.URL, PriceUSD: "0.001"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.AddMCPServer(ctx, admin.MCPServerRequest{Name: "docs", URL: up.URL}); gw.ErrorCode(err) != gw.CodeConflict {
		t.Fatalf("a duplicate add: %v, want conflict", err)
	}
	var cs *sdk.ClientSession
	start := time.Now()
	for {
		var err error
		if cs, err = connect(); err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the added server is not served within a minute: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer cs.Close()
	t.Logf("served after %s", time.Since(start).Round(time.Millisecond))
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "docs__echo") {
		t.Fatalf("tools/list = %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "docs: hi" {
		t.Fatalf("docs__echo: %+v %v", res, err)
	}
	if _, err := ac.RemoveMCPServer(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__echo", Arguments: map[string]any{"text": "again"}})
		var jerr *jsonrpc.Error
		if errors.As(err, &jerr) && strings.Contains(jerr.Message, "docs was removed") {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the removed server's call: %v, want an error saying it was removed", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
