package gw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
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

// mcpServerName is an MCP server's name: it prefixes the server's tools
// ("NAME__tool"), so it has no MCPSeparator.
var mcpServerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$`)

// CheckMCPServerName reports a name that cannot be a server's: 1 to 48
// letters, digits, '-' and '_', starting with a letter or digit, without
// MCPSeparator.
func CheckMCPServerName(name string) error {
	if !mcpServerName.MatchString(name) || strings.Contains(name, MCPSeparator) {
		return fmt.Errorf("mcp server %q: a name is 1 to 48 letters, digits, '-' or '_', starting with a letter or digit, without %q", clipName(name), MCPSeparator)
	}
	return nil
}

func clipName(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Validate reports a server that cannot be served: a bad name, neither
// or both of URL and Command, a URL that is not an absolute http(s) one,
// a negative time-out or price.
func (s *MCPServer) Validate() error {
	if err := CheckMCPServerName(s.Name); err != nil {
		return err
	}
	switch {
	case s.URL == "" && len(s.Command) == 0:
		return fmt.Errorf("mcp server %q: set url (streamable HTTP) or command (stdio)", s.Name)
	case s.URL != "" && len(s.Command) > 0:
		return fmt.Errorf("mcp server %q: set url or command, not both", s.Name)
	case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
		return fmt.Errorf("mcp server %q: the command's first word (the program) is empty", s.Name)
	case s.Timeout < 0:
		return fmt.Errorf("mcp server %q: the time-out must not be negative", s.Name)
	case s.Price < 0:
		return fmt.Errorf("mcp server %q: the price must not be negative", s.Name)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return fmt.Errorf("mcp server %q: url %q is not an absolute http:// or https:// URL without credentials (send those as headers)", s.Name, clipName(s.URL))
		}
	}
	for t, p := range s.ToolPrices {
		if p < 0 {
			return fmt.Errorf("mcp server %q: tool %q: the price must not be negative", s.Name, t)
		}
	}
	return nil
}
