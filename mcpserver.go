package gw

import (
	"context"
	"errors"
	"time"
)

// MCPServer is an upstream MCP server the operator added at run time
// (the admin API or the command line), kept in the store so that every
// instance serves it. It is a streamable HTTP server (URL, with Headers
// the gateway sends and callers never see) or a stdio server (Command,
// which the gateway starts), the same settings as a configuration file's
// [mcp.servers.NAME] table.
type MCPServer struct {
	Name    string
	URL     string
	Headers map[string]string
	Command []string
	Env     map[string]string
	Dir     string
	// Timeout bounds one call (0: the gateway's default).
	Timeout time.Duration
	// Price is charged per tool call; ToolPrices per tool (unprefixed).
	Price      Money
	ToolPrices map[string]Money
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ErrMCPServerExists is AddMCPServer's error for a name already stored.
var ErrMCPServerExists = errors.New("an MCP server of this name exists")

// MCPServerStore keeps the MCP servers added at run time. Every change
// moves the key generation, so running gateways pick it up within their
// watch interval. Both stores implement it (see storetest).
type MCPServerStore interface {
	// AddMCPServer stores a new server; a name already stored is
	// ErrMCPServerExists.
	AddMCPServer(ctx context.Context, s *MCPServer) error
	// PutMCPServer stores s, replacing a server of its name (keeping
	// its CreatedAt).
	PutMCPServer(ctx context.Context, s *MCPServer) error
	// MCPServers lists the stored servers by name.
	MCPServers(ctx context.Context) ([]MCPServer, error)
	// DeleteMCPServer removes a server; an unknown name is ErrNotFound.
	DeleteMCPServer(ctx context.Context, name string) error
}
