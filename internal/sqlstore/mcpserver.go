package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// mcpSpec is a stored MCP server's settings, the mcp_servers.spec JSON.
type mcpSpec struct {
	URL        string              `json:"url,omitempty"`
	Headers    map[string]string   `json:"headers,omitempty"`
	Command    []string            `json:"command,omitempty"`
	Env        map[string]string   `json:"env,omitempty"`
	Dir        string              `json:"dir,omitempty"`
	TimeoutMS  int64               `json:"timeout_ms,omitempty"`
	Price      gw.Money            `json:"price,omitempty"`
	ToolPrices map[string]gw.Money `json:"tool_prices,omitempty"`
}

func encodeMCPSpec(s *gw.MCPServer) (string, error) {
	if s.Name == "" {
		return "", fmt.Errorf("mcp server: the name is empty")
	}
	b, err := json.Marshal(mcpSpec{URL: s.URL, Headers: s.Headers, Command: s.Command, Env: s.Env, Dir: s.Dir,
		TimeoutMS: s.Timeout.Milliseconds(), Price: s.Price, ToolPrices: s.ToolPrices})
	return string(b), err
}

// AddMCPServer stores a new MCP server; a name already stored is
// gw.ErrMCPServerExists.
func (q Queries) AddMCPServer(ctx context.Context, s *gw.MCPServer) error {
	spec, err := encodeMCPSpec(s)
	if err != nil {
		return fmt.Errorf("add mcp server: %w", err)
	}
	now := q.d.Time(q.now())
	n, err := q.w.Exec(ctx, `INSERT INTO mcp_servers (name, spec, created_at, updated_at) VALUES ($1, $2, $3, $3)
		ON CONFLICT (name) DO NOTHING`, s.Name, spec, now)
	if err != nil {
		return fmt.Errorf("add mcp server: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("add mcp server %q: %w", s.Name, gw.ErrMCPServerExists)
	}
	return nil
}

// PutMCPServer stores an MCP server, replacing one of its name.
func (q Queries) PutMCPServer(ctx context.Context, s *gw.MCPServer) error {
	spec, err := encodeMCPSpec(s)
	if err != nil {
		return fmt.Errorf("put mcp server: %w", err)
	}
	if _, err := q.w.Exec(ctx, `INSERT INTO mcp_servers (name, spec, created_at, updated_at) VALUES ($1, $2, $3, $3)
		ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at`, s.Name, spec, q.d.Time(q.now())); err != nil {
		return fmt.Errorf("put mcp server: %w", err)
	}
	return nil
}

// MCPServers lists the stored MCP servers by name.
func (q Queries) MCPServers(ctx context.Context) ([]gw.MCPServer, error) {
	rows, err := q.r.Query(ctx, `SELECT name, spec, created_at, updated_at FROM mcp_servers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("mcp servers: %w", err)
	}
	defer rows.Close()
	var out []gw.MCPServer
	for rows.Next() {
		var s gw.MCPServer
		var spec string
		if err := rows.Scan(&s.Name, &spec, When(&s.CreatedAt), When(&s.UpdatedAt)); err != nil {
			return nil, fmt.Errorf("mcp servers: %w", err)
		}
		var m mcpSpec
		if err := json.Unmarshal([]byte(spec), &m); err != nil {
			return nil, fmt.Errorf("mcp servers: %s: %w", s.Name, err)
		}
		s.URL, s.Headers, s.Command, s.Env, s.Dir = m.URL, m.Headers, m.Command, m.Env, m.Dir
		s.Timeout, s.Price, s.ToolPrices = time.Duration(m.TimeoutMS)*time.Millisecond, m.Price, m.ToolPrices
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mcp servers: %w", err)
	}
	return out, nil
}

// DeleteMCPServer removes a stored MCP server; an unknown name is
// gw.ErrNotFound.
func (q Queries) DeleteMCPServer(ctx context.Context, name string) error {
	n, err := q.w.Exec(ctx, `DELETE FROM mcp_servers WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("delete mcp server: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete mcp server %q: %w", name, gw.ErrNotFound)
	}
	return nil
}
