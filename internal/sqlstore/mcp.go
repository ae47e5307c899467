package sqlstore

import (
	"context"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// SetMCPGrant stores (or, with g nil, removes) the MCP allow list of a
// key or an account.
func (q Queries) SetMCPGrant(ctx context.Context, subject, id string, g *gw.MCPGrant) error {
	var table string
	switch subject {
	case "key":
		table = "api_keys"
	case "account":
		table = "accounts"
	default:
		return fmt.Errorf("set mcp grant: subject %q: want key or account", subject)
	}
	var exists int64
	if err := q.r.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&exists); err != nil {
		return fmt.Errorf("set mcp grant: %w", err)
	}
	if exists == 0 {
		return fmt.Errorf("set mcp grant: %s %q: %w", subject, id, gw.ErrNotFound)
	}
	if g == nil {
		if _, err := q.w.Exec(ctx, `DELETE FROM mcp_grants WHERE subject = $1 AND id = $2`, subject, id); err != nil {
			return fmt.Errorf("set mcp grant: %w", err)
		}
		return nil
	}
	for _, a := range g.Allow {
		if a == "" || strings.ContainsAny(a, "\n\r") {
			return fmt.Errorf("set mcp grant: entry %q: want a server, SERVER__tool or a prefix ending in *", a)
		}
	}
	if _, err := q.w.Exec(ctx, `INSERT INTO mcp_grants (subject, id, allow, tool_rpm, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (subject, id) DO UPDATE SET allow = excluded.allow, tool_rpm = excluded.tool_rpm, updated_at = excluded.updated_at`,
		subject, id, strings.Join(g.Allow, "\n"), max(g.ToolRPM, 0), q.d.Time(q.now())); err != nil {
		return fmt.Errorf("set mcp grant: %w", err)
	}
	return nil
}

// MCPGrants returns the key's and the account's MCP allow lists.
func (q Queries) MCPGrants(ctx context.Context, keyID, accountID string) (key, account *gw.MCPGrant, err error) {
	rows, err := q.r.Query(ctx, `SELECT subject, allow, tool_rpm FROM mcp_grants
		WHERE subject = 'key' AND id = $1 OR subject = 'account' AND id = $2`, keyID, accountID)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp grants: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var subject, allow string
		g := &gw.MCPGrant{}
		if err := rows.Scan(&subject, &allow, &g.ToolRPM); err != nil {
			return nil, nil, fmt.Errorf("mcp grants: %w", err)
		}
		if allow != "" {
			g.Allow = strings.Split(allow, "\n")
		} else {
			g.Allow = []string{}
		}
		if subject == "key" {
			key = g
		} else {
			account = g
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("mcp grants: %w", err)
	}
	return key, account, nil
}
