package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// mcpText is a key's or an account's MCP allow list in a line: "every
// server and tool" (none set), "nothing", or its entries and tool calls
// a minute.
func (d *Dashboard) mcpText(ctx context.Context, subject, id string) string {
	g, err := d.admin.MCPGrant(ctx, subject, id)
	if err != nil {
		return "unknown"
	}
	return grantText(g)
}

func grantText(g *admin.MCPGrant) string {
	switch {
	case !g.Set:
		return "every server and tool"
	case len(g.Allow) == 0:
		return "nothing"
	}
	s := strings.Join(g.Allow, ", ")
	if g.ToolRPM > 0 {
		s += fmt.Sprintf(" (%d calls/min)", g.ToolRPM)
	}
	return s
}

// setMCPGrant sets the MCP allow list of an account, or of one of its
// keys (the form's key field), from the accounts page: entries comma or
// space separated ("" with clear unticked allows nothing), tool calls a
// minute, or clear to remove the list.
func (d *Dashboard) setMCPGrant(ctx context.Context, r *http.Request, p *accountsPage) error {
	subject, id := "account", r.PathValue("id")
	if k := strings.TrimSpace(r.PostFormValue("key")); k != "" {
		key, err := d.admin.Key(ctx, k)
		if err != nil {
			return err
		}
		if key.AccountID != id {
			return gw.Errorf(gw.CodeInvalidRequest, "key %s is not this account's", k)
		}
		subject, id = "key", k
	}
	var req *admin.MCPGrantRequest
	if r.PostFormValue("clear") == "" {
		req = &admin.MCPGrantRequest{Allow: strings.FieldsFunc(r.PostFormValue("allow"), func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })}
		if req.Allow == nil {
			req.Allow = []string{}
		}
		if s := strings.TrimSpace(r.PostFormValue("tool_rpm")); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return gw.Errorf(gw.CodeInvalidRequest, "tool calls a minute must be a whole number, not %q", s)
			}
			req.ToolRPM = n
		}
	}
	g, err := d.admin.SetMCPGrant(ctx, subject, id, req)
	if err != nil {
		return err
	}
	p.Done = fmt.Sprintf("MCP allow list of %s %s: %s.", subject, g.ID, grantText(g))
	return nil
}
