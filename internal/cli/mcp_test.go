package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIMCPAllow: "mcp allow" sets a key's list (comma or space
// separated), "mcp show" prints it, an account's list by name, "mcp
// allow" with no entry allows nothing, "mcp clear" removes it; a key and
// an account together are refused.
func TestCLIMCPAllow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	out, _, err := cliRun(t, db, "keys", "create", "--account", "acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var k CreatedKeyJSON
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatal(err)
	}
	if out, _, err = cliRun(t, db, "mcp", "allow", "--key", k.ID, "github__create_issue,files", "docs__*", "--tool-rpm", "30"); err != nil ||
		!strings.Contains(out, "allowed github__create_issue, files, docs__*; tool calls a minute: 30") {
		t.Fatalf("mcp allow: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "show", "--key", k.ID, "--json"); err != nil || !strings.Contains(out, `"set": true`) || !strings.Contains(out, `"docs__*"`) {
		t.Fatalf("mcp show --json: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "allow", "--account", "acme"); err != nil || !strings.Contains(out, "allowed no MCP tool") {
		t.Fatalf("mcp allow with nothing: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "mcp", "clear", "--key", k.ID); err != nil || !strings.Contains(out, "no MCP allow list") {
		t.Fatalf("mcp clear: %q %v", out, err)
	}
	if _, _, err = cliRun(t, db, "mcp", "show", "--key", k.ID, "--account", "acme"); err == nil {
		t.Fatal("--key with --account accepted")
	}
	if _, _, err = cliRun(t, db, "mcp", "show"); err == nil {
		t.Fatal("no subject accepted")
	}
}
