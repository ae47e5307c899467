package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gwlabs/gateway/admin"
)

// mcpServerCmd keeps the MCP servers added at run time (kept in the
// store; every running gateway serves a change within its key watch
// interval).
type mcpServerCmd struct {
	Add    mcpServerAddCmd    `cmd:"" help:"Add an MCP server behind /mcp (--replace: replace a stored one)."`
	List   mcpServerListCmd   `cmd:"" help:"List the MCP servers behind /mcp: the configuration file's and the stored ones (credentials redacted)."`
	Remove mcpServerRemoveCmd `cmd:"" help:"Remove a stored MCP server."`
}

type mcpServerAddCmd struct {
	Name         string            `arg:"" help:"The server's name: it prefixes its tools (NAME__tool)."`
	URL          string            `name:"url" help:"A streamable HTTP server's URL." xor:"kind"`
	Command      string            `name:"command" help:"A stdio server's command line, split at spaces (needs mcp.admin_stdio = true)." xor:"kind"`
	Header       map[string]string `name:"header" mapsep:"none" placeholder:"NAME=VALUE" help:"A header sent to the server (its credentials); repeatable. Never shown back."`
	Env          map[string]string `name:"env" mapsep:"none" placeholder:"NAME=VALUE" help:"A stdio server's environment variable; repeatable. Never shown back."`
	Dir          string            `name:"dir" help:"A stdio server's working folder."`
	TimeoutSecs  int64             `name:"timeout-seconds" help:"One call's time-out (0: 60)."`
	PriceUSD     string            `name:"price-usd" help:"Charged per tool call, in US dollars (default 0)."`
	ToolPriceUSD map[string]string `name:"tool-price-usd" mapsep:"none" placeholder:"TOOL=USD" help:"A tool's own price (its unprefixed name); repeatable."`
	Replace      bool              `name:"replace" help:"Replace the stored server of this name (or add it)."`
	JSON         bool              `name:"json" help:"Print JSON."`
}

func (c *mcpServerAddCmd) Run(rc *runCtx) error {
	req := admin.MCPServerRequest{URL: c.URL, Headers: c.Header, Env: c.Env, Dir: c.Dir, TimeoutSeconds: c.TimeoutSecs, PriceUSD: c.PriceUSD, ToolPricesUSD: c.ToolPriceUSD}
	if c.Command != "" {
		req.Command = strings.Fields(c.Command)
	}
	if c.URL == "" && c.Command == "" {
		return usagef("name the server's --url (streamable HTTP) or --command (stdio)")
	}
	return withService(rc, func(svc admin.Service) error {
		var s *admin.MCPServer
		var err error
		if c.Replace {
			s, err = svc.PutMCPServer(rc.ctx, c.Name, req)
		} else {
			req.Name = c.Name
			s, err = svc.AddMCPServer(rc.ctx, req)
		}
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, s)
		}
		verb := "added"
		if c.Replace {
			verb = "stored"
		}
		fmt.Fprintf(rc.stdout, "MCP server %s %s: %s; running gateways serve it within their key watch interval\n", s.Name, verb, serverLine(*s))
		return nil
	})
}

type mcpServerListCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *mcpServerListCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		list, err := svc.MCPServers(rc.ctx)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, list)
		}
		if len(list) == 0 {
			fmt.Fprintln(rc.stdout, "no MCP server")
			return nil
		}
		for _, s := range list {
			fmt.Fprintf(rc.stdout, "%s (%s): %s\n", s.Name, s.Source, serverLine(s))
		}
		return nil
	})
}

type mcpServerRemoveCmd struct {
	Name string `arg:"" help:"The stored server's name."`
	JSON bool   `name:"json" help:"Print JSON."`
}

func (c *mcpServerRemoveCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		s, err := svc.RemoveMCPServer(rc.ctx, c.Name)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, s)
		}
		fmt.Fprintf(rc.stdout, "MCP server %s removed\n", s.Name)
		return nil
	})
}

// serverLine is a server in a line, its credentials' names only.
func serverLine(s admin.MCPServer) string {
	var b strings.Builder
	if s.URL != "" {
		b.WriteString(s.URL)
	} else {
		b.WriteString("stdio: " + strings.Join(s.Command, " "))
	}
	names := func(m map[string]string) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ", ")
	}
	if len(s.Headers) > 0 {
		b.WriteString("; headers " + names(s.Headers) + " (values redacted)")
	}
	if len(s.Env) > 0 {
		b.WriteString("; env " + names(s.Env) + " (values redacted)")
	}
	if s.PriceUSD != "" {
		b.WriteString("; $" + s.PriceUSD + " a call")
	}
	if s.Note != "" {
		b.WriteString("; " + s.Note)
	}
	return b.String()
}
