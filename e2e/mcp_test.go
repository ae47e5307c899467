package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/mcp/mcptest"
)

type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPThroughTheGateway: the gateway as wired (the real guard, the
// store, the dashboard's records) in front of an MCP server: a priced
// tool call is charged and recorded, and a result carrying an injection
// is withheld by the real guard, its incident stored, nothing charged.
func TestMCPThroughTheGateway(t *testing.T) {
	up := httptest.NewServer(mcptest.New("docs").Handler())
	t.Cleanup(up.Close)
	e := newEnv(t, func(c *app.Config) {
		c.MCP = &app.MCPConfig{Servers: []mcp.ServerConfig{{Name: "docs", URL: up.URL, Price: gw.USD / 1000}}}
	})
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{e.key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	before, _ := e.m.Store().Balance(ctx, e.acct)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "docs: hello" {
		t.Fatalf("docs__echo: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__poison", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "incident inc_") {
		t.Fatalf("docs__poison through the real guard: %+v %v", res, err)
	}
	after, _ := e.m.Store().Balance(ctx, e.acct)
	if before.Balance-after.Balance != gw.USD/1000 || after.Held != 0 {
		t.Errorf("charged %d (held %d), want exactly one call's price %d", before.Balance-after.Balance, after.Held, gw.USD/1000)
	}
	recs, err := e.m.Store().Records(ctx, gw.RecordFilter{AccountID: e.acct, Endpoint: "mcp"})
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %+v %v", recs, err)
	}
	if r := recs[0]; r.Model != "poison" || r.Status != 403 || r.Charge != 0 || !strings.HasPrefix(r.Guard, "flagged:") {
		t.Errorf("blocked call's record %+v", r)
	}
	if r := recs[1]; r.Model != "echo" || r.Status != 200 || r.Charge != gw.USD/1000 || r.Vendor != "docs" {
		t.Errorf("call's record %+v", r)
	}
	incs, err := e.m.Store().IncidentsOf(ctx, e.acct, 5)
	if err != nil || len(incs) != 1 || incs[0].RequestID != recs[0].RequestID {
		t.Errorf("incidents %+v %v", incs, err)
	}
}
