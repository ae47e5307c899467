package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// TestReadMCP: the [mcp] table becomes the endpoint's servers (headers
// and env read from the environment), and mistakes are refused naming
// the setting.
func TestReadMCP(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "g.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(name string) string {
		if name == "GH_TOKEN" {
			return "s3cret"
		}
		return ""
	}
	c, err := readMCP(write(`
[mcp]
tool_rpm = 120
session_idle = "30m"

[mcp.servers.github]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer ${GH_TOKEN}" }
timeout = "20s"
price_usd = "0.001"
tool_prices_usd = { create_issue = "0.01" }

[mcp.servers.files]
command = ["mcp-files", "/srv"]
env = { MODE = "ro" }
`), env)
	if err != nil {
		t.Fatal(err)
	}
	if c.ToolRPM != 120 || c.SessionIdle != 30*time.Minute || len(c.Servers) != 2 {
		t.Fatalf("config %+v", c)
	}
	files, gh := c.Servers[0], c.Servers[1]
	if gh.Name != "github" || gh.Headers["Authorization"] != "Bearer s3cret" || gh.Timeout != 20*time.Second || gh.Price != gw.USD/1000 || gh.ToolPrices["create_issue"] != gw.USD/100 {
		t.Errorf("github %+v", gh)
	}
	if files.Name != "files" || strings.Join(files.Command, " ") != "mcp-files /srv" || strings.Join(files.Env, ",") != "MODE=ro" {
		t.Errorf("files %+v", files)
	}
	if c, err := readMCP(write("[routes.\"gw/x\"]\nmodels = [\"openai/a\"]\n"), env); err != nil || c != nil {
		t.Errorf("no [mcp]: %+v %v", c, err)
	}
	for body, want := range map[string]string{
		"[mcp.servers.a]\nurl = \"http://x\"\nbogus = 1\n": "unknown MCP setting",
		"[mcp.servers.a]\n":                                                     "set url",
		"[mcp.servers.a__b]\nurl = \"http://x\"\n":                              "a name is",
		"[mcp.servers.a]\nurl = \"ftp://x\"\n":                                  "http",
		"[mcp.servers.a]\nurl = \"http://x\"\nprice_usd = \"x\"\n":              "price_usd",
		"[mcp.servers.a]\nurl = \"http://x\"\ntimeout = \"-1s\"\n":              "timeout",
		"[mcp]\nsession_idle = \"soon\"\n[mcp.servers.a]\nurl = \"http://x\"\n": "session_idle",
	} {
		if _, err := readMCP(write(body), env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", body, err, want)
		}
	}
}
