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
	"github.com/gwlabs/gateway/runs"
)

// runTransport sends the key and the run header on every MCP request.
type runTransport struct{ key, run string }

func (b runTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	r.Header.Set(runs.HeaderRun, b.run)
	return http.DefaultTransport.RoundTrip(r)
}

// TestRunCountsToolCalls: an agent's model call and its MCP tool calls
// are steps of one run: with a cap of 3 steps, one model call and two
// tool calls are served, the third tool call is refused before the MCP
// server with the run's step limit, and the run's spend holds the tool
// calls' price.
func TestRunCountsToolCalls(t *testing.T) {
	up := httptest.NewServer(mcptest.New("docs").Handler())
	t.Cleanup(up.Close)
	e := newEnv(t, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		c.MCP = &app.MCPConfig{Servers: []mcp.ServerConfig{{Name: "docs", URL: up.URL, Price: gw.USD / 1000}}}
	})
	ctx := context.Background()
	const run = "agent-with-tools"
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`),
		runs.HeaderRun, run, runs.HeaderMaxRequests, "3")
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("model call: %d", resp.StatusCode)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: runTransport{e.key, run}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 2 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__echo", Arguments: map[string]any{"text": "hello"}})
		if err != nil || res.IsError {
			t.Fatalf("tool call %d: %+v %v", i, res, err)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "docs__echo", Arguments: map[string]any{"text": "hello"}})
	if err == nil && !res.IsError || err != nil && !strings.Contains(err.Error(), "step limit") {
		t.Fatalf("fourth step: %+v %v, want the run's step limit", res, err)
	}
	r, err := e.m.Store().(gw.RunStore).Run(ctx, e.acct, run)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := e.m.Store().Records(ctx, gw.RecordFilter{AccountID: e.acct, Endpoint: "mcp"})
	served := 0
	for _, rec := range recs {
		if rec.Status == 200 {
			served++
		}
	}
	if r.Requests != 3 || r.InFlight != 0 || served != 2 {
		t.Fatalf("run %+v, %d tool calls served", r, served)
	}
	steps, _ := e.m.Store().(gw.RunStore).RunSteps(ctx, e.acct, run, 0)
	var tools gw.Money
	for _, s := range steps {
		if s.Endpoint == "mcp" {
			tools += s.Charge
		}
	}
	if tools != 2*gw.USD/1000 || r.Spend <= tools {
		t.Errorf("tool steps charged %d, run spend %d", tools, r.Spend)
	}
}
