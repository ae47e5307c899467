package dashboard

import (
	"context"
	"sort"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// mcpServerRow is one MCP server behind /mcp on the accounts page: the
// configuration file's and those added at run time (admin API, command
// line), with their state; credentials by name only.
type mcpServerRow struct {
	Name, Source, Address, Credentials, State, Class, Detail string
}

// mcpServers lists the MCP servers for the accounts page (none when the
// service cannot say).
func (d *Dashboard) mcpServers(ctx context.Context, health []gw.VendorHealth) []mcpServerRow {
	if d.admin == nil {
		return nil
	}
	list, err := d.admin.MCPServers(ctx)
	if err != nil {
		d.log.Warn("dashboard: MCP servers not listed", "err", err)
		return nil
	}
	return mcpServerRows(list, health)
}

// mcpServerRows joins the servers with their health ("mcp:NAME").
func mcpServerRows(list []admin.MCPServer, health []gw.VendorHealth) []mcpServerRow {
	byName := map[string]gw.VendorHealth{}
	for _, h := range health {
		if n, ok := strings.CutPrefix(h.Vendor, "mcp:"); ok {
			byName[n] = h
		}
	}
	out := make([]mcpServerRow, 0, len(list))
	for _, s := range list {
		row := mcpServerRow{Name: s.Name, Source: "configuration file", Address: s.URL, State: "ok", Class: "ok"}
		if s.Source == admin.SourceStore {
			row.Source = "admin API"
		}
		if s.URL == "" {
			row.Address = "stdio: " + strings.Join(s.Command, " ")
		}
		var names []string
		for k := range s.Headers {
			names = append(names, k)
		}
		for k := range s.Env {
			names = append(names, k)
		}
		sort.Strings(names)
		row.Credentials = strings.Join(names, ", ")
		h, ok := byName[s.Name]
		switch {
		case s.Note != "":
			row.State, row.Class, row.Detail = "not served", "bad", s.Note
		case ok && h.Breaker == gw.BreakerOpen:
			row.State, row.Class = "open", "bad"
		case ok && len(h.Keys) > 0 && h.Keys[0].Out:
			row.State, row.Class, row.Detail = "down", "bad", h.Keys[0].Reason
		case !ok:
			row.State, row.Class, row.Detail = "pending", "warn", "not yet served by this instance"
		}
		out = append(out, row)
	}
	return out
}
