package dashboard

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// TestMCPServersPanel: the accounts page lists the MCP servers of the
// configuration file and those added at run time, with their state from
// the health report (down with its reason, not served with why) and
// their credentials by name only.
func TestMCPServersPanel(t *testing.T) {
	rows := mcpServerRows([]admin.MCPServer{
		{Name: "files", Source: admin.SourceConfig, Command: []string{"npx", "server-filesystem"}},
		{Name: "local", Source: admin.SourceStore, Command: []string{"mcp-local"}, Note: "not started: stdio servers added at run time run only with mcp.admin_stdio = true"},
		{Name: "web", Source: admin.SourceStore, URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": admin.Redacted}},
	}, []gw.VendorHealth{
		{Vendor: "mcp:files", Breaker: gw.BreakerClosed},
		{Vendor: "mcp:web", Breaker: gw.BreakerClosed, Keys: []gw.KeyHealth{{Name: "session", Out: true, Reason: "connect: 503"}}},
	})
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := pages["accounts"].ExecuteTemplate(&b, "mcpservers", rows); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<td class="mono">files</td>`, `configuration file`, `stdio: npx server-filesystem`,
		`<td class="mono">web</td>`, `admin API`, `https://mcp.example.com/mcp`, `title="values never shown">Authorization</span>`,
		`>down</span> <span class="muted">connect: 503</span>`,
		`>not served</span>`, `mcp.admin_stdio = true`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("panel lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, admin.Redacted) {
		t.Errorf("panel shows the redaction placeholder as a value:\n%s", html)
	}
}
