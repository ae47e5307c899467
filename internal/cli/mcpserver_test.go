package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIMCPServer: "mcp server add" stores an HTTP server (its header
// never printed), "list" shows it, a second add of the name is refused,
// a stdio server is refused without mcp.admin_stdio, "--replace"
// replaces it, "remove" removes it and a second remove is refused.
func TestCLIMCPServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if _, _, err := cliRun(t, db, "accounts", "create", "acme"); err != nil {
		t.Fatal(err)
	}
	out, _, err := cliRun(t, db, "mcp", "server", "add", "web", "--url", "https://mcp.example.com/mcp", "--header", "Authorization=Bearer s3cret;x", "--price-usd", "0.001")
	if err != nil || !strings.Contains(out, "MCP server web added: https://mcp.example.com/mcp; headers Authorization (values redacted)") || strings.Contains(out, "s3cret") {
		t.Fatalf("add: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "server", "list"); err != nil || !strings.Contains(out, "web (store): https://mcp.example.com/mcp") || strings.Contains(out, "s3cret") {
		t.Fatalf("list: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "server", "list", "--json"); err != nil || !strings.Contains(out, `"[redacted]"`) || strings.Contains(out, "s3cret") {
		t.Fatalf("list --json: %q %v", out, err)
	}
	if _, _, err = cliRun(t, db, "mcp", "server", "add", "web", "--url", "https://other.example.com/mcp"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a second add: %v", err)
	}
	if _, _, err = cliRun(t, db, "mcp", "server", "add", "local", "--command", "sh -c id"); err == nil || !strings.Contains(err.Error(), "admin_stdio") {
		t.Fatalf("a stdio server without the opt-in: %v", err)
	}
	if out, _, err = cliRun(t, db, "mcp", "server", "add", "web", "--url", "https://mcp2.example.com/mcp", "--replace"); err != nil || !strings.Contains(out, "mcp2.example.com") {
		t.Fatalf("replace: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "server", "remove", "web"); err != nil || !strings.Contains(out, "MCP server web removed") {
		t.Fatalf("remove: %q %v", out, err)
	}
	if _, _, err = cliRun(t, db, "mcp", "server", "remove", "web"); err == nil || !strings.Contains(err.Error(), "no MCP server") {
		t.Fatalf("a second remove: %v", err)
	}
}
