package admin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/sqlite"
)

// TestMCPServersOverTheAPI: MCP servers are added, listed (the
// configuration file's beside the store's, credentials never shown),
// replaced and removed over the admin API; bad input is a clear 4xx: a
// bad URL, name or header, a name taken (409, in the store or the file),
// a file server changed (409), a stdio server without the operator's
// opt-in (400), an unknown one removed (404).
func TestMCPServersOverTheAPI(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	token := strings.Repeat("t", admin.MinTokenLen)
	local := &admin.Local{Store: db, MCPConfigServers: []admin.MCPServer{{Name: "files", Command: []string{"npx", "server-filesystem"}, Env: admin.RedactValues(map[string]string{"TOKEN": "x"})}}}
	h, err := admin.NewHandler(local, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &admin.Client{BaseURL: srv.URL, Token: token}

	s, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "web", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret-token"},
		TimeoutSeconds: 20, PriceUSD: "0.001", ToolPricesUSD: map[string]string{"search": "0.01"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "store" || s.Headers["Authorization"] != admin.Redacted || s.PriceUSD != "0.00100000" || s.TimeoutSeconds != 20 || s.CreatedAt == nil {
		t.Fatalf("added: %+v", s)
	}
	stored, _ := db.MCPServers(ctx)
	if len(stored) != 1 || stored[0].Headers["Authorization"] != "Bearer s3cret-token" || stored[0].Price != 1000*100 {
		t.Fatalf("stored: %+v", stored)
	}
	// The list never shows a credential, in any form.
	resp := get(t, srv.URL+"/admin/v1/mcp/servers", token)
	if strings.Contains(resp, "s3cret") || !strings.Contains(resp, `"files"`) || !strings.Contains(resp, `"source":"config"`) || !strings.Contains(resp, `"source":"store"`) {
		t.Fatalf("list: %s", resp)
	}
	if one := get(t, srv.URL+"/admin/v1/mcp/servers/web", token); !strings.Contains(one, `"name":"web"`) || strings.Contains(one, "s3cret") {
		t.Fatalf("GET one: %s", one)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/v1/mcp/servers/nope", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET an unknown server: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}
	list, err := c.MCPServers(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "files" || list[1].Name != "web" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if s, err = c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "keyed", URL: "https://h.example.com/mcp?api_key=k-123456&v=2"}); err != nil ||
		strings.Contains(s.URL, "k-123456") || !strings.Contains(s.URL, "api_key=%5Bredacted%5D") {
		t.Fatalf("a key in the URL's query is shown: %+v %v", s, err)
	}
	if _, err := c.RemoveMCPServer(ctx, "keyed"); err != nil {
		t.Fatal(err)
	}
	if s, err = c.PutMCPServer(ctx, "web", admin.MCPServerRequest{URL: "http://127.0.0.1:9/mcp"}); err != nil || s.URL != "http://127.0.0.1:9/mcp" || s.Headers != nil {
		t.Fatalf("replaced: %+v %v", s, err)
	}
	for _, bad := range []struct {
		name string
		do   func() error
		code gw.Code
	}{
		{"a relative URL", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x", URL: "mcp.example.com/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"a ftp URL", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x", URL: "ftp://h/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"a URL with credentials", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x", URL: "https://u:p@h/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"no URL nor command", func() error { _, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x"}); return err }, gw.CodeInvalidRequest},
		{"no name", func() error { _, err := c.AddMCPServer(ctx, admin.MCPServerRequest{URL: "https://h/mcp"}); return err }, gw.CodeInvalidRequest},
		{"a name with __", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "a__b", URL: "https://h/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"a name with a space", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "a b", URL: "https://h/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"a name too long", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: strings.Repeat("a", 49), URL: "https://h/mcp"})
			return err
		}, gw.CodeInvalidRequest},
		{"a header with a newline", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x", URL: "https://h/mcp", Headers: map[string]string{"X-A": "a\r\nb"}})
			return err
		}, gw.CodeInvalidRequest},
		{"the redacted placeholder sent back", func() error {
			_, err := c.PutMCPServer(ctx, "web", admin.MCPServerRequest{URL: "https://h/mcp", Headers: map[string]string{"Authorization": admin.Redacted}})
			return err
		}, gw.CodeInvalidRequest},
		{"a negative price", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "x", URL: "https://h/mcp", PriceUSD: "-1"})
			return err
		}, gw.CodeInvalidRequest},
		{"a duplicate name", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "web", URL: "https://h/mcp"})
			return err
		}, gw.CodeConflict},
		{"a name differing only in case", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "WEB", URL: "https://h/mcp"})
			return err
		}, gw.CodeConflict},
		{"the file's name in another case", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "Files", URL: "https://h/mcp"})
			return err
		}, gw.CodeConflict},
		{"the file's name", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "files", URL: "https://h/mcp"})
			return err
		}, gw.CodeConflict},
		{"the file's server replaced", func() error {
			_, err := c.PutMCPServer(ctx, "files", admin.MCPServerRequest{URL: "https://h/mcp"})
			return err
		}, gw.CodeConflict},
		{"the file's server removed", func() error { _, err := c.RemoveMCPServer(ctx, "files"); return err }, gw.CodeConflict},
		{"a stdio server without the opt-in", func() error {
			_, err := c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "sh", Command: []string{"sh", "-c", "id"}})
			return err
		}, gw.CodeInvalidRequest},
		{"an unknown server removed", func() error { _, err := c.RemoveMCPServer(ctx, "nope"); return err }, gw.CodeNotFound},
	} {
		if err := bad.do(); gw.ErrorCode(err) != bad.code {
			t.Errorf("%s: %v, want %s", bad.name, err, bad.code)
		}
	}
	if list, _ := db.MCPServers(ctx); len(list) != 1 || list[0].Name != "web" {
		t.Fatalf("a refused call changed the store: %+v", list)
	}
	// With the operator's opt-in, a stdio server is added; its
	// environment is never shown.
	local.MCPAdminStdio = true
	s, err = c.AddMCPServer(ctx, admin.MCPServerRequest{Name: "local", Command: []string{"mcp-server", "--stdio"}, Env: map[string]string{"API_KEY": "k-secret"}})
	if err != nil || s.Env["API_KEY"] != admin.Redacted || len(s.Command) != 2 {
		t.Fatalf("stdio with the opt-in: %+v %v", s, err)
	}
	if s, err = c.RemoveMCPServer(ctx, "web"); err != nil || s.Name != "web" {
		t.Fatalf("removed: %+v %v", s, err)
	}
	if list, _ := c.MCPServers(ctx); len(list) != 2 || list[0].Name != "files" || list[1].Name != "local" {
		t.Fatalf("after removal: %+v", list)
	}
}

func get(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}
