package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// ServerConfig is one upstream MCP server of the operator's: a
// streamable HTTP server (URL, with Headers the gateway sends and callers
// never see) or a local stdio server (Command, which the gateway starts
// and restarts when it exits).
type ServerConfig struct {
	// Name prefixes the server's tools, prompts and resources
	// ("NAME__tool"): letters, digits, '-' and '_', no "__".
	Name    string
	URL     string
	Headers map[string]string
	Command []string
	Env     []string // NAME=value pairs added to the gateway's environment
	Dir     string
	// Timeout bounds one call to the server (default 60s).
	Timeout time.Duration
	// Price is charged per tool call (default 0: free); ToolPrices
	// override it per tool (the tool's own name, unprefixed).
	Price      gw.Money
	ToolPrices map[string]gw.Money
}

// Validate reports a server that cannot be served.
func (c ServerConfig) Validate() error {
	if err := gw.CheckMCPServerName(c.Name); err != nil {
		return err
	}
	switch {
	case c.URL == "" && len(c.Command) == 0:
		return fmt.Errorf("mcp server %q: set url (streamable HTTP) or command (stdio)", c.Name)
	case c.URL != "" && len(c.Command) > 0:
		return fmt.Errorf("mcp server %q: set url or command, not both", c.Name)
	case c.URL != "" && !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://"):
		return fmt.Errorf("mcp server %q: url must be http:// or https://", c.Name)
	case c.Price < 0:
		return fmt.Errorf("mcp server %q: price must not be negative", c.Name)
	}
	for t, p := range c.ToolPrices {
		if p < 0 {
			return fmt.Errorf("mcp server %q: tool %q: price must not be negative", c.Name, t)
		}
	}
	return nil
}

// price is what one call of tool costs the caller.
func (c ServerConfig) price(tool string) gw.Money {
	if p, ok := c.ToolPrices[tool]; ok {
		return p
	}
	return c.Price
}

// ServerSource lists the servers added at run time (the store's; see
// gw.MCPServerStore).
type ServerSource interface {
	MCPServers(ctx context.Context) ([]gw.MCPServer, error)
}

// SessionStore keeps the gateway's MCP sessions for every instance: the
// client state store (both stores implement it; see convstate.Store).
type SessionStore interface {
	PutState(ctx context.Context, kind, accountID, key string, value []byte, expiresAt time.Time) error
	GetState(ctx context.Context, kind, accountID, key string, now time.Time) ([]byte, error)
}

// Runs counts tool calls toward a caller's run (the X-Gateway-Run
// header): Admit may refuse a call before it starts (a spent run), Count
// sees its record once written. Nil: runs are not counted.
type Runs interface {
	Admit(ctx context.Context, run string, p *gw.Principal) error
	Count(ctx context.Context, run string, r *gw.Record)
}

// Config assembles an Endpoint. Gateway is required.
type Config struct {
	Gateway *proxy.Gateway
	Servers []ServerConfig
	// Stored are the servers added at run time (the admin API), served
	// beside Servers: read at start, on Refresh (the gateway calls it
	// when the store's key generation moves) and every ServerPoll. A
	// stored server named like one of Servers is left out: the file's
	// wins.
	Stored ServerSource
	// StoredStdio lets stored stdio servers run. Off (the default), a
	// stored server with a command is never started: whoever reaches the
	// admin API could otherwise run commands on the gateway's host.
	StoredStdio bool
	// ServerPoll is how often Stored is read besides Refresh (default
	// 10s).
	ServerPoll time.Duration
	// Sessions keeps sessions for every instance; nil: in this
	// instance's memory only (one instance, or a balancer with
	// affinity).
	Sessions SessionStore
	// Grants are the allow lists; nil: Gateway's store.
	Grants gw.MCPGrantStore
	// ToolRPM is a key's tool calls per minute without a grant saying
	// otherwise (default 600; negative: unlimited).
	ToolRPM int64
	// SessionIdle ends a session unused this long (default 1h).
	SessionIdle time.Duration
	// MaxSessions bounds the sessions one instance serves (default
	// 10,000).
	MaxSessions int
	// MaxBodyBytes bounds a POST body (default 4 MiB); MaxResultBytes a
	// tool's result (default 4 MiB); MaxArgumentLog the arguments kept
	// in the access log (default 1 KiB).
	MaxBodyBytes   int64
	MaxResultBytes int
	MaxArgumentLog int
	// ListTTL is how long a server's lists are kept before asking again
	// (default 30s; a list-changed notification drops them at once).
	ListTTL time.Duration
	// Breakers, per server, isolated by account (see
	// upstream.Breakers): failures in a row (default 5; negative: off),
	// open interval (default 30s), distinct accounts (default 3).
	BreakerFailures int
	BreakerInterval time.Duration
	BreakerAccounts int
	// AllowedOrigins are the browser origins whose requests are served
	// (besides loopback ones): a request with any other Origin header is
	// refused with 403, so a web page cannot reach the endpoint through
	// DNS rebinding. MCP clients that are not browsers send no Origin.
	AllowedOrigins []string
	// HTTPClient reaches the streamable HTTP servers (default: a client
	// of its own).
	HTTPClient *http.Client
	Runs       Runs
	Now        func() time.Time
	Logger     *slog.Logger
}

func (c *Config) defaults() {
	if c.ToolRPM == 0 {
		c.ToolRPM = 600
	}
	if c.SessionIdle <= 0 {
		c.SessionIdle = time.Hour
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 10_000
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 4 << 20
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 4 << 20
	}
	if c.MaxArgumentLog <= 0 {
		c.MaxArgumentLog = 1 << 10
	}
	if c.ListTTL <= 0 {
		c.ListTTL = 30 * time.Second
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = 5
	}
	if c.BreakerInterval <= 0 {
		c.BreakerInterval = 30 * time.Second
	}
	if c.BreakerAccounts <= 0 {
		c.BreakerAccounts = 3
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if c.ServerPoll <= 0 {
		c.ServerPoll = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
