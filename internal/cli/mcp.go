package cli

import (
	"fmt"
	"strings"

	"github.com/gwlabs/gateway/admin"
)

// mcpCmd keeps the MCP allow lists of keys and accounts: which of the
// operator's MCP servers and tools /mcp lists and calls for them.
type mcpCmd struct {
	Allow mcpAllowCmd `cmd:"" help:"Set a key's or an account's MCP allow list (replacing it)."`
	Show  mcpShowCmd  `cmd:"" help:"Show a key's or an account's MCP allow list."`
	Clear mcpClearCmd `cmd:"" help:"Remove a key's or an account's MCP allow list (everything is allowed again)."`
	// Server keeps the MCP servers added at run time (mcpserver.go).
	Server mcpServerCmd `cmd:"" help:"Add, list and remove the MCP servers behind /mcp."`
}

// mcpSubject is --key or --account, exactly one.
type mcpSubject struct {
	Key     string `help:"The key's id (key_...)." xor:"subject"`
	Account string `help:"The account's name or id." xor:"subject"`
}

func (s mcpSubject) resolve() (subject, id string, err error) {
	switch {
	case s.Key != "":
		return "key", s.Key, nil
	case s.Account != "":
		return "account", s.Account, nil
	}
	return "", "", usagef("name a key (--key) or an account (--account)")
}

type mcpAllowCmd struct {
	mcpSubject
	Entries []string `arg:"" optional:"" name:"entry" help:"A server (all its tools), SERVER__tool (that tool alone) or a prefix ending in *; none: nothing is allowed."`
	ToolRPM int64    `name:"tool-rpm" help:"Tool calls per minute (0: the gateway's default)."`
	JSON    bool     `name:"json" help:"Print JSON."`
}

func (c *mcpAllowCmd) Run(rc *runCtx) error {
	subject, id, err := c.resolve()
	if err != nil {
		return err
	}
	entries := []string{}
	for _, e := range c.Entries {
		for _, part := range strings.Split(e, ",") {
			if part = strings.TrimSpace(part); part != "" {
				entries = append(entries, part)
			}
		}
	}
	return withService(rc, func(svc admin.Service) error {
		g, err := svc.SetMCPGrant(rc.ctx, subject, id, &admin.MCPGrantRequest{Allow: entries, ToolRPM: c.ToolRPM})
		if err != nil {
			return err
		}
		return printGrant(rc, g, c.JSON)
	})
}

type mcpShowCmd struct {
	mcpSubject
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *mcpShowCmd) Run(rc *runCtx) error {
	subject, id, err := c.resolve()
	if err != nil {
		return err
	}
	return withService(rc, func(svc admin.Service) error {
		g, err := svc.MCPGrant(rc.ctx, subject, id)
		if err != nil {
			return err
		}
		return printGrant(rc, g, c.JSON)
	})
}

type mcpClearCmd struct {
	mcpSubject
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *mcpClearCmd) Run(rc *runCtx) error {
	subject, id, err := c.resolve()
	if err != nil {
		return err
	}
	return withService(rc, func(svc admin.Service) error {
		g, err := svc.SetMCPGrant(rc.ctx, subject, id, nil)
		if err != nil {
			return err
		}
		return printGrant(rc, g, c.JSON)
	})
}

func printGrant(rc *runCtx, g *admin.MCPGrant, asJSON bool) error {
	if asJSON {
		return printJSON(rc.stdout, g)
	}
	rpm := "the gateway's default"
	if g.ToolRPM > 0 {
		rpm = fmt.Sprint(g.ToolRPM)
	}
	switch {
	case !g.Set:
		fmt.Fprintf(rc.stdout, "%s %s: no MCP allow list (every server and tool /mcp serves)\n", g.Subject, g.ID)
	case len(g.Allow) == 0:
		fmt.Fprintf(rc.stdout, "%s %s: allowed no MCP tool\n", g.Subject, g.ID)
	default:
		fmt.Fprintf(rc.stdout, "%s %s: allowed %s; tool calls a minute: %s\n", g.Subject, g.ID, strings.Join(g.Allow, ", "), rpm)
	}
	return nil
}
