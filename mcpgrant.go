package gw

import (
	"context"
	"strings"
)

// MCPGrant is an allow list of the operator's MCP servers and tools, set
// on a key or an account. Each entry of Allow is a server's name (every
// tool, prompt and resource of that server), a tool's gateway name
// ("SERVER__tool", that tool only: naming a tool never grants the rest
// of its server), a prefix ending in "*" ("github__get_*") or "*" (every
// server). An empty Allow grants nothing. ToolRPM, when positive, is the
// subject's tool calls per minute (else the gateway's default).
type MCPGrant struct {
	Allow   []string
	ToolRPM int64
}

// MCPSeparator joins a server's name and a tool, prompt or resource
// name into the name the gateway lists ("github__create_issue").
const MCPSeparator = "__"

// Allows reports whether the grant admits the item name (a tool or
// prompt, unprefixed) of server. A nil grant admits everything.
func (g *MCPGrant) Allows(server, name string) bool {
	if g == nil {
		return true
	}
	full := strings.ToLower(server + MCPSeparator + name)
	for _, a := range g.Allow {
		a = strings.ToLower(a)
		switch {
		case a == "*", a == strings.ToLower(server), a == full:
			return true
		case strings.HasSuffix(a, "*") && strings.HasPrefix(full, strings.TrimSuffix(a, "*")):
			return true
		}
	}
	return false
}

// AllowsServer reports whether the grant admits anything of server: the
// server itself, or at least one entry within it.
func (g *MCPGrant) AllowsServer(server string) bool {
	if g == nil {
		return true
	}
	s := strings.ToLower(server)
	for _, a := range g.Allow {
		a = strings.ToLower(a)
		if a == "*" || a == s || strings.HasPrefix(a, s+MCPSeparator) || strings.HasSuffix(a, "*") && strings.HasPrefix(s+MCPSeparator, strings.TrimSuffix(a, "*")) {
			return true
		}
	}
	return false
}

// MCPGrantStore is part of Store: the MCP allow lists of keys and
// accounts. Every change moves the key generation, so running gateways
// read the new lists within their watch interval.
type MCPGrantStore interface {
	// SetMCPGrant stores the grant of a key ("key", id) or an account
	// ("account", id), replacing any; nil removes it. An unknown key or
	// account is ErrNotFound.
	SetMCPGrant(ctx context.Context, subject, id string, g *MCPGrant) error
	// MCPGrants returns the key's and the account's grants, nil where
	// none is set.
	MCPGrants(ctx context.Context, keyID, accountID string) (key, account *MCPGrant, err error)
}
