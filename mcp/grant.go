package mcp

import (
	"context"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// access is what a caller may reach: its key's and its account's allow
// lists (both must admit an item; a missing list admits everything) and
// its tool calls per minute.
type access struct {
	key, account *gw.MCPGrant
	rpm          int64
}

// allows reports whether the caller may list and call item of server.
func (a access) allows(server, item string) bool {
	return a.key.Allows(server, item) && a.account.Allows(server, item)
}

// allowsServer reports whether anything of server may be reached.
func (a access) allowsServer(server string) bool {
	return a.key.AllowsServer(server) && a.account.AllowsServer(server)
}

// grantCache keeps each key's grants for grantTTL, and forgets them all
// when keys or grants change (Endpoint.Recheck).
type grantCache struct {
	store gw.MCPGrantStore
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]grantEntry // by key id
}

type grantEntry struct {
	key, account *gw.MCPGrant
	at           time.Time
}

// grantTTL bounds how long a grant changed on the store directly (not
// through a running gateway) takes to apply.
const grantTTL = 5 * time.Second

// maxGrantEntries bounds the cache.
const maxGrantEntries = 100_000

func (c *grantCache) get(ctx context.Context, p *gw.Principal) (key, account *gw.MCPGrant, err error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[p.KeyID]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < grantTTL {
		return e.key, e.account, nil
	}
	key, account, err = c.store.MCPGrants(ctx, p.KeyID, p.AccountID)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxGrantEntries {
		clear(c.entries)
	}
	c.entries[p.KeyID] = grantEntry{key: key, account: account, at: now}
	c.mu.Unlock()
	return key, account, nil
}

func (c *grantCache) forgetAll() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

// access returns the caller's access; a store that cannot answer is
// overloaded (never "everything allowed").
func (e *Endpoint) access(ctx context.Context, p *gw.Principal) (access, error) {
	k, a, err := e.grants.get(ctx, p)
	if err != nil {
		return access{}, &gw.Error{Code: gw.CodeOverloaded, Message: "the MCP allow lists cannot be read right now; retry", RetryAfter: time.Second, Err: err}
	}
	rpm := e.cfg.ToolRPM
	switch {
	case k != nil && k.ToolRPM > 0:
		rpm = k.ToolRPM
	case a != nil && a.ToolRPM > 0:
		rpm = a.ToolRPM
	}
	return access{key: k, account: a, rpm: rpm}, nil
}

// split cuts a listed name into its server and the server's own name
// ("github__create_issue" -> "github", "create_issue").
func split(name string) (server, item string, ok bool) {
	server, item, ok = strings.Cut(name, gw.MCPSeparator)
	return server, item, ok && server != "" && item != ""
}
