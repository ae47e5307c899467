package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/mcp"
)

// TestReadMCPAdminStdio: an [mcp] table without servers is kept (the
// store may hold some), admin_stdio is read (off by default), and the
// admin service sees the file's servers with their secrets redacted.
func TestReadMCPAdminStdio(t *testing.T) {
	p := filepath.Join(t.TempDir(), "g.toml")
	if err := os.WriteFile(p, []byte("[mcp]\nadmin_stdio = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := readMCP(p, os.Getenv)
	if err != nil || c == nil || !c.AdminStdio || len(c.Servers) != 0 {
		t.Fatalf("[mcp] with admin_stdio only: %+v %v", c, err)
	}
	if err := os.WriteFile(p, []byte("[mcp]\ntool_rpm = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = readMCP(p, os.Getenv); err != nil || c == nil || c.AdminStdio {
		t.Fatalf("admin_stdio is off by default: %+v %v", c, err)
	}
	servers, stdio := MCPAdmin(&MCPConfig{AdminStdio: true, Servers: []mcp.ServerConfig{
		{Name: "gh", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
		{Name: "files", Command: []string{"files"}, Env: []string{"TOKEN=t0k"}},
	}})
	if !stdio || len(servers) != 2 || servers[0].Headers["Authorization"] != admin.Redacted || servers[1].Env["TOKEN"] != admin.Redacted || servers[0].Source != admin.SourceConfig {
		t.Fatalf("MCPAdmin = %+v %v", servers, stdio)
	}
}
