package app

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/proxy"
)

// MCPConfig is the [mcp] table of the configuration file: the upstream
// MCP servers behind /mcp and the endpoint's bounds. Nil: no table.
// Servers added through the admin API are served beside Servers.
type MCPConfig struct {
	Servers        []mcp.ServerConfig
	ToolRPM        int64
	SessionIdle    time.Duration
	MaxResultBytes int
	AllowedOrigins []string
	// AdminStdio allows stdio servers (a command the gateway runs) to be
	// added through the admin API and the command line, and runs them.
	AdminStdio bool
}

// mcpFile is the [mcp] table as the file writes it:
//
//	[mcp]
//	tool_rpm = 120                 # a key's tool calls a minute (default 600)
//	session_idle = "1h"            # a session unused this long ends
//	max_result_bytes = 4194304     # a tool's result, at most
//	allowed_origins = ["https://app.example.com"]
//	admin_stdio = false            # stdio servers added through the admin API may run
//
//	[mcp.servers.github]           # tools listed as github__NAME
//	url = "https://mcp.example.com/mcp"
//	headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
//	timeout = "60s"
//	price_usd = "0.001"            # per call (default 0)
//	tool_prices_usd = { create_issue = "0.01" }
//
//	[mcp.servers.files]            # a stdio server the gateway starts
//	command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//	env = { NODE_ENV = "production" }
//
// ${NAME} in headers and env values is read from the gateway's
// environment, so credentials need not sit in the file.
type mcpFile struct {
	ToolRPM        int64                    `toml:"tool_rpm"`
	SessionIdle    string                   `toml:"session_idle"`
	MaxResultBytes int                      `toml:"max_result_bytes"`
	AllowedOrigins []string                 `toml:"allowed_origins"`
	AdminStdio     bool                     `toml:"admin_stdio"`
	Servers        map[string]mcpServerFile `toml:"servers"`
}

type mcpServerFile struct {
	URL           string            `toml:"url"`
	Headers       map[string]string `toml:"headers"`
	Command       []string          `toml:"command"`
	Env           map[string]string `toml:"env"`
	Dir           string            `toml:"dir"`
	Timeout       string            `toml:"timeout"`
	PriceUSD      string            `toml:"price_usd"`
	ToolPricesUSD map[string]string `toml:"tool_prices_usd"`
}

// readMCP reads the [mcp] table of the TOML file at path (nil without a
// file, or without the table).
func readMCP(path string, getenv func(string) string) (*MCPConfig, error) {
	if path == "" {
		return nil, nil
	}
	var f struct {
		MCP *mcpFile `toml:"mcp"`
	}
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", path, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "mcp" {
			return nil, fmt.Errorf("configuration file %s: unknown MCP setting %q", path, k.String())
		}
	}
	if f.MCP == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("configuration file %s: %s", path, fmt.Sprintf(format, args...))
	}
	c := &MCPConfig{ToolRPM: f.MCP.ToolRPM, MaxResultBytes: f.MCP.MaxResultBytes, AllowedOrigins: f.MCP.AllowedOrigins, AdminStdio: f.MCP.AdminStdio}
	if f.MCP.SessionIdle != "" {
		if c.SessionIdle, err = time.ParseDuration(f.MCP.SessionIdle); err != nil || c.SessionIdle <= 0 {
			return nil, bad("mcp.session_idle %q is not a positive duration", f.MCP.SessionIdle)
		}
	}
	expand := func(s string) string { return os.Expand(s, getenv) }
	names := make([]string, 0, len(f.MCP.Servers))
	for n := range f.MCP.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		sf := f.MCP.Servers[name]
		sc := mcp.ServerConfig{Name: name, URL: sf.URL, Command: sf.Command, Dir: sf.Dir}
		if len(sf.Headers) > 0 {
			sc.Headers = map[string]string{}
			for k, v := range sf.Headers {
				sc.Headers[k] = expand(v)
			}
		}
		for k, v := range sf.Env {
			sc.Env = append(sc.Env, k+"="+expand(v))
		}
		slices.Sort(sc.Env)
		if sf.Timeout != "" {
			if sc.Timeout, err = time.ParseDuration(sf.Timeout); err != nil || sc.Timeout <= 0 {
				return nil, bad("mcp.servers.%s.timeout %q is not a positive duration", name, sf.Timeout)
			}
		}
		if sf.PriceUSD != "" {
			if sc.Price, err = gw.ParseUSD(sf.PriceUSD); err != nil {
				return nil, bad("mcp.servers.%s.price_usd: %v", name, err)
			}
		}
		for tool, p := range sf.ToolPricesUSD {
			m, err := gw.ParseUSD(p)
			if err != nil {
				return nil, bad("mcp.servers.%s.tool_prices_usd.%s: %v", name, tool, err)
			}
			if sc.ToolPrices == nil {
				sc.ToolPrices = map[string]gw.Money{}
			}
			sc.ToolPrices[tool] = m
		}
		if err := sc.Validate(); err != nil {
			return nil, bad("%v", err)
		}
		c.Servers = append(c.Servers, sc)
	}
	return c, nil
}

// openMCP builds the /mcp endpoint over the operator's servers: the
// configuration file's and the store's (those added through the admin
// API, read again whenever the key watch sees a change). Nil when there
// can be none: no server in the file and a store that keeps none.
// Sessions are kept in the store, so any instance serves any session.
func (m *Main) openMCP(gwy *proxy.Gateway) (*mcp.Endpoint, error) {
	c := m.Config.MCP
	if c == nil {
		c = &MCPConfig{}
	}
	stored, _ := m.store.(gw.MCPServerStore)
	if len(c.Servers) == 0 && stored == nil {
		return nil, nil
	}
	sessions, ok := m.store.(mcp.SessionStore)
	if !ok {
		return nil, fmt.Errorf("store %T cannot keep MCP sessions", m.store)
	}
	var source mcp.ServerSource
	if stored != nil {
		source = stored
	}
	ep, err := mcp.New(mcp.Config{
		Gateway:        gwy,
		Servers:        c.Servers,
		Stored:         source,
		StoredStdio:    c.AdminStdio,
		Sessions:       sessions,
		ToolRPM:        c.ToolRPM,
		SessionIdle:    c.SessionIdle,
		MaxResultBytes: c.MaxResultBytes,
		AllowedOrigins: c.AllowedOrigins,
		// The vendors' breaker settings (GATEWAY_BREAKER_*) apply to the
		// MCP servers too.
		BreakerFailures: m.Config.HTTP.BreakerFailures,
		BreakerInterval: m.Config.HTTP.BreakerInterval,
		BreakerAccounts: m.Config.HTTP.BreakerAccounts,
		// Tool calls naming a run (X-Gateway-Run) are its steps.
		Runs:   proxy.ToolRuns{G: gwy},
		Logger: m.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	m.closers = append(m.closers, func() error { ep.Close(); return nil })
	return ep, nil
}

// mcpRecheck is the key watch's hook for the MCP endpoint: a revoked
// key's sessions end, changed allow lists apply.
func (m *Main) mcpRecheck() {
	if m.mcp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.mcp.Recheck(ctx)
}

// mcpNames lists the configured MCP servers, for the start-up lines.
func mcpNames(c *MCPConfig) string {
	if c == nil {
		return ""
	}
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// mcpHandler is /mcp's handler, nil when the endpoint is off.
func (m *Main) mcpHandler() http.Handler {
	if m.mcp == nil {
		return nil
	}
	return m.mcp
}

// withMCPHealth adds the MCP servers' state to the vendors' for /readyz.
func (m *Main) withMCPHealth(vendors func() []gw.VendorHealth) func() []gw.VendorHealth {
	if m.mcp == nil {
		return vendors
	}
	return func() []gw.VendorHealth {
		var out []gw.VendorHealth
		if vendors != nil {
			out = vendors()
		}
		return append(out, m.mcp.Health()...)
	}
}

// MCPAdmin is what the admin service knows of the configuration file's
// MCP settings: its servers (secrets redacted), named apart from the
// stored ones, and whether stdio servers may be added.
func MCPAdmin(c *MCPConfig) (servers []admin.MCPServer, stdio bool) {
	if c == nil {
		return nil, false
	}
	for _, s := range c.Servers {
		var u string
		if s.URL != "" {
			u = admin.RedactURL(s.URL)
		}
		a := admin.MCPServer{Name: s.Name, Source: admin.SourceConfig, URL: u, Command: s.Command, Dir: s.Dir,
			Headers: admin.RedactValues(s.Headers), TimeoutSeconds: int64(s.Timeout / time.Second)}
		if len(s.Env) > 0 {
			env := map[string]string{}
			for _, kv := range s.Env {
				k, _, _ := strings.Cut(kv, "=")
				env[k] = admin.Redacted
			}
			a.Env = env
		}
		if s.Price != 0 {
			a.PriceUSD = s.Price.USDString()
		}
		for t, p := range s.ToolPrices {
			if a.ToolPricesUSD == nil {
				a.ToolPricesUSD = map[string]string{}
			}
			a.ToolPricesUSD[t] = p.USDString()
		}
		servers = append(servers, a)
	}
	return servers, c.AdminStdio
}
