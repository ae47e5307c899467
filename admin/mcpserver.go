package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// MCPServer is an upstream MCP server behind /mcp as the admin API shows
// it: one of the configuration file's (Source "config", changed only
// there) or one added at run time (Source "store"). Header and
// environment values are never shown: each reads Redacted.
type MCPServer struct {
	Name    string            `json:"name"`
	Source  string            `json:"source"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	// TimeoutSeconds bounds one call (0: the gateway's default, 60).
	TimeoutSeconds int64             `json:"timeout_seconds,omitempty"`
	PriceUSD       string            `json:"price_usd,omitempty"`
	ToolPricesUSD  map[string]string `json:"tool_prices_usd,omitempty"`
	// Note says why a stored server is not served, when it is not.
	Note      string     `json:"note,omitempty"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// MCPServerRequest adds or replaces a stored MCP server: URL (streamable
// HTTP, with Headers the gateway sends and callers never see) or
// Command (stdio, with Env and Dir; only on a gateway whose operator
// allows it: see Local.MCPAdminStdio). Name is the path's on a replace.
type MCPServerRequest struct {
	Name           string            `json:"name,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Command        []string          `json:"command,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Dir            string            `json:"dir,omitempty"`
	TimeoutSeconds int64             `json:"timeout_seconds,omitempty"`
	PriceUSD       string            `json:"price_usd,omitempty"`
	ToolPricesUSD  map[string]string `json:"tool_prices_usd,omitempty"`
}

// Redacted stands for a header's or an environment variable's value in
// what the API shows (and for the query's values and password of a URL).
const Redacted = "[redacted]"

// Bounds of a stored MCP server.
const (
	MaxMCPHeaders      = 50
	MaxMCPValueLen     = 8 << 10
	MaxMCPArgs         = 100
	MaxMCPToolPrices   = 1000
	MaxMCPTimeoutSecs  = 3600
	SourceConfig       = "config"
	SourceStore        = "store"
	mcpServerStoreNote = "the store cannot keep MCP servers"
)

// MCPServerKeeper is the part of Service that keeps the MCP servers
// added at run time. Running gateways serve a change within their key
// watch interval.
type MCPServerKeeper interface {
	// MCPServers lists the configuration file's servers and the
	// store's, by name.
	MCPServers(ctx context.Context) ([]MCPServer, error)
	// AddMCPServer stores a new server: a name taken (in the store or
	// the configuration file) is CodeConflict.
	AddMCPServer(ctx context.Context, req MCPServerRequest) (*MCPServer, error)
	// PutMCPServer stores the server name, replacing the stored one; a
	// name of the configuration file's is CodeConflict.
	PutMCPServer(ctx context.Context, name string, req MCPServerRequest) (*MCPServer, error)
	// RemoveMCPServer removes a stored server and returns it; one of
	// the configuration file's is CodeConflict.
	RemoveMCPServer(ctx context.Context, name string) (*MCPServer, error)
}

// headerName is an HTTP header's name (RFC 9110 token); envName an
// environment variable's.
var (
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$")
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,199}$`)
)

func (l *Local) mcpStore() (gw.MCPServerStore, error) {
	ms, ok := l.Store.(gw.MCPServerStore)
	if !ok {
		return nil, &gw.Error{Code: gw.CodeInternal, Message: mcpServerStoreNote, Err: errors.New(mcpServerStoreNote)}
	}
	return ms, nil
}

// configServer returns the configuration file's server name, or nil.
func (l *Local) configServer(name string) *MCPServer {
	for i := range l.MCPConfigServers {
		if strings.EqualFold(l.MCPConfigServers[i].Name, name) {
			s := l.MCPConfigServers[i]
			s.Source = SourceConfig
			return &s
		}
	}
	return nil
}

// MCPServers lists the configuration file's MCP servers and the store's,
// by name, with their secrets redacted.
func (l *Local) MCPServers(ctx context.Context) ([]MCPServer, error) {
	ms, err := l.mcpStore()
	if err != nil {
		return nil, err
	}
	stored, err := ms.MCPServers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]MCPServer, 0, len(l.MCPConfigServers)+len(stored))
	for _, c := range l.MCPConfigServers {
		out = append(out, *l.configServer(c.Name))
	}
	for _, s := range stored {
		out = append(out, l.shown(s))
	}
	slices.SortStableFunc(out, func(a, b MCPServer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// shown is a stored server as the API shows it.
func (l *Local) shown(s gw.MCPServer) MCPServer {
	out := MCPServer{Name: s.Name, Source: SourceStore, URL: s.URL, Command: s.Command, Dir: s.Dir, TimeoutSeconds: int64(s.Timeout / time.Second),
		Headers: RedactValues(s.Headers), Env: RedactValues(s.Env)}
	if s.Price != 0 {
		out.PriceUSD = s.Price.USDString()
	}
	for t, p := range s.ToolPrices {
		if out.ToolPricesUSD == nil {
			out.ToolPricesUSD = map[string]string{}
		}
		out.ToolPricesUSD[t] = p.USDString()
	}
	if s.URL != "" {
		out.URL = RedactURL(s.URL)
	}
	c, u := s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	out.CreatedAt, out.UpdatedAt = &c, &u
	switch {
	case l.configServer(s.Name) != nil:
		out.Note = "not served: the configuration file has a server of this name"
	case len(s.Command) > 0 && !l.MCPAdminStdio:
		out.Note = "not started: stdio servers added at run time run only with mcp.admin_stdio = true"
	}
	return out
}

// RedactValues is m with every value replaced by Redacted (nil when m is
// empty).
func RedactValues(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Redacted
	}
	return out
}

// mcpServer checks a request and returns the server to store.
func (l *Local) mcpServer(name string, req MCPServerRequest) (*gw.MCPServer, error) {
	if err := gw.CheckMCPServerName(name); err != nil {
		return nil, invalid("%v", err)
	}
	if c := l.configServer(name); c != nil {
		return nil, gw.Errorf(gw.CodeConflict, "MCP server %q is configured in the configuration file; change or remove it there, or choose another name", c.Name)
	}
	s := &gw.MCPServer{Name: name, URL: strings.TrimSpace(req.URL), Command: req.Command, Dir: req.Dir}
	if len(req.Headers) > MaxMCPHeaders {
		return nil, invalid("headers: at most %d", MaxMCPHeaders)
	}
	for k, v := range req.Headers {
		switch {
		case !headerName.MatchString(k):
			return nil, invalid("headers: %q is not a header name", clipText(k))
		case v == Redacted:
			return nil, invalid("headers.%s is %q, what the API shows instead of a value; send the value itself", k, Redacted)
		case len(v) > MaxMCPValueLen || strings.ContainsAny(v, "\r\n\x00"):
			return nil, invalid("headers.%s: a value is one line of at most %d bytes", k, MaxMCPValueLen)
		}
	}
	if len(req.Headers) > 0 {
		s.Headers = req.Headers
	}
	if len(req.Command) > 0 || len(req.Env) > 0 || req.Dir != "" {
		if !l.MCPAdminStdio {
			return nil, invalid("stdio servers (command, env, dir) cannot be added through the admin API of this gateway: it would run commands on the gateway's host; the operator allows it with mcp.admin_stdio = true in the configuration file, or configures the server there")
		}
		if len(req.Command) > MaxMCPArgs {
			return nil, invalid("command: at most %d words", MaxMCPArgs)
		}
		for _, a := range req.Command {
			if len(a) > MaxMCPValueLen || strings.ContainsRune(a, 0) {
				return nil, invalid("command: a word is at most %d bytes, without NUL", MaxMCPValueLen)
			}
		}
		if len(req.Env) > MaxMCPHeaders {
			return nil, invalid("env: at most %d variables", MaxMCPHeaders)
		}
		for k, v := range req.Env {
			switch {
			case !envName.MatchString(k):
				return nil, invalid("env: %q is not a variable name", clipText(k))
			case v == Redacted:
				return nil, invalid("env.%s is %q, what the API shows instead of a value; send the value itself", k, Redacted)
			case len(v) > MaxMCPValueLen || strings.ContainsRune(v, 0):
				return nil, invalid("env.%s: a value is at most %d bytes, without NUL", k, MaxMCPValueLen)
			}
		}
		if len(req.Env) > 0 {
			s.Env = req.Env
		}
		if len(req.Dir) > MaxMCPValueLen || strings.ContainsRune(req.Dir, 0) {
			return nil, invalid("dir: at most %d bytes, without NUL", MaxMCPValueLen)
		}
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > MaxMCPTimeoutSecs {
		return nil, invalid("timeout_seconds must be between 0 (the default, 60) and %d", MaxMCPTimeoutSecs)
	}
	s.Timeout = time.Duration(req.TimeoutSeconds) * time.Second
	var err error
	if req.PriceUSD != "" {
		if s.Price, err = parseUSD("price_usd", req.PriceUSD); err != nil {
			return nil, err
		}
	}
	if len(req.ToolPricesUSD) > MaxMCPToolPrices {
		return nil, invalid("tool_prices_usd: at most %d tools", MaxMCPToolPrices)
	}
	for t, p := range req.ToolPricesUSD {
		if t == "" || len(t) > MaxMCPEntryLen {
			return nil, invalid("tool_prices_usd: a tool's name is 1 to %d bytes", MaxMCPEntryLen)
		}
		m, err := parseUSD("tool_prices_usd."+t, p)
		if err != nil {
			return nil, err
		}
		if s.ToolPrices == nil {
			s.ToolPrices = map[string]gw.Money{}
		}
		s.ToolPrices[t] = m
	}
	if err := s.Validate(); err != nil {
		return nil, invalid("%v", err)
	}
	return s, nil
}

func parseUSD(field, v string) (gw.Money, error) {
	m, err := gw.ParseUSD(v)
	if err != nil || m < 0 {
		return 0, invalid("%s must be a non-negative decimal number of US dollars such as \"0.001\", not %q", field, clipText(v))
	}
	return m, nil
}

func clipText(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// stored reads back the stored server name.
func (l *Local) storedServer(ctx context.Context, ms gw.MCPServerStore, name string) (*MCPServer, error) {
	list, err := ms.MCPServers(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Name == name {
			out := l.shown(s)
			return &out, nil
		}
	}
	return nil, notFound("MCP server", name)
}

// caseClash refuses a name that differs from a stored server's only in
// case: allow lists compare names without case, so the two could not be
// granted apart.
func (l *Local) caseClash(ctx context.Context, ms gw.MCPServerStore, name string) error {
	list, err := ms.MCPServers(ctx)
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.Name != name && strings.EqualFold(s.Name, name) {
			return gw.Errorf(gw.CodeConflict, "an MCP server named %q exists; names differing only in case cannot be told apart by allow lists", s.Name)
		}
	}
	return nil
}

// AddMCPServer stores a new MCP server.
func (l *Local) AddMCPServer(ctx context.Context, req MCPServerRequest) (*MCPServer, error) {
	ms, err := l.mcpStore()
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, invalid("name is required")
	}
	s, err := l.mcpServer(req.Name, req)
	if err != nil {
		return nil, err
	}
	if err := l.caseClash(ctx, ms, s.Name); err != nil {
		return nil, err
	}
	if err := ms.AddMCPServer(ctx, s); err != nil {
		if errors.Is(err, gw.ErrMCPServerExists) {
			return nil, gw.Errorf(gw.CodeConflict, "an MCP server named %q exists; replace it with PUT /admin/v1/mcp/servers/%s, or choose another name", s.Name, s.Name)
		}
		return nil, err
	}
	return l.storedServer(ctx, ms, s.Name)
}

// PutMCPServer stores the MCP server name, replacing the stored one.
func (l *Local) PutMCPServer(ctx context.Context, name string, req MCPServerRequest) (*MCPServer, error) {
	ms, err := l.mcpStore()
	if err != nil {
		return nil, err
	}
	if req.Name != "" && req.Name != name {
		return nil, invalid("name %q differs from the path's %q; a server is renamed by adding the new one and removing the old", clipText(req.Name), clipText(name))
	}
	s, err := l.mcpServer(name, req)
	if err != nil {
		return nil, err
	}
	if err := l.caseClash(ctx, ms, s.Name); err != nil {
		return nil, err
	}
	if err := ms.PutMCPServer(ctx, s); err != nil {
		return nil, err
	}
	return l.storedServer(ctx, ms, s.Name)
}

// RemoveMCPServer removes a stored MCP server.
func (l *Local) RemoveMCPServer(ctx context.Context, name string) (*MCPServer, error) {
	ms, err := l.mcpStore()
	if err != nil {
		return nil, err
	}
	if c := l.configServer(name); c != nil {
		return nil, gw.Errorf(gw.CodeConflict, "MCP server %q is configured in the configuration file; remove it there", c.Name)
	}
	s, err := l.storedServer(ctx, ms, name)
	if err != nil {
		return nil, err
	}
	if err := ms.DeleteMCPServer(ctx, name); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("MCP server", name)
		}
		return nil, err
	}
	return s, nil
}

// mcpServerRoutes are the MCP servers' endpoints.
var mcpServerRoutes = []string{
	"GET /admin/v1/mcp/servers", "POST /admin/v1/mcp/servers",
	"GET /admin/v1/mcp/servers/{name}", "PUT /admin/v1/mcp/servers/{name}", "DELETE /admin/v1/mcp/servers/{name}",
}

func (h *Handler) handleMCPServers(m *http.ServeMux) {
	m.HandleFunc(mcpServerRoutes[0], func(w http.ResponseWriter, r *http.Request) {
		list, err := h.svc.MCPServers(r.Context())
		reply(w, http.StatusOK, map[string]any{"data": list}, err)
	})
	m.HandleFunc(mcpServerRoutes[1], func(w http.ResponseWriter, r *http.Request) {
		var req MCPServerRequest
		if err := decode(r, &req); err != nil {
			writeError(w, err)
			return
		}
		s, err := h.svc.AddMCPServer(r.Context(), req)
		reply(w, http.StatusCreated, s, err)
	})
	m.HandleFunc(mcpServerRoutes[2], func(w http.ResponseWriter, r *http.Request) {
		list, err := h.svc.MCPServers(r.Context())
		if err != nil {
			writeError(w, err)
			return
		}
		for _, s := range list {
			if s.Name == r.PathValue("name") {
				writeJSON(w, http.StatusOK, s)
				return
			}
		}
		writeError(w, notFound("MCP server", r.PathValue("name")))
	})
	m.HandleFunc(mcpServerRoutes[3], func(w http.ResponseWriter, r *http.Request) {
		var req MCPServerRequest
		if err := decode(r, &req); err != nil {
			writeError(w, err)
			return
		}
		s, err := h.svc.PutMCPServer(r.Context(), r.PathValue("name"), req)
		reply(w, http.StatusOK, s, err)
	})
	m.HandleFunc(mcpServerRoutes[4], func(w http.ResponseWriter, r *http.Request) {
		s, err := h.svc.RemoveMCPServer(r.Context(), r.PathValue("name"))
		reply(w, http.StatusOK, s, err)
	})
}

// MCPServers is the admin API's list of MCP servers.
func (c *Client) MCPServers(ctx context.Context) ([]MCPServer, error) {
	return list[MCPServer](ctx, c, "/admin/v1/mcp/servers", nil)
}

// AddMCPServer is the admin API's POST of an MCP server.
func (c *Client) AddMCPServer(ctx context.Context, req MCPServerRequest) (*MCPServer, error) {
	return call[MCPServer](ctx, c, http.MethodPost, "/admin/v1/mcp/servers", nil, req)
}

// PutMCPServer is the admin API's PUT of an MCP server.
func (c *Client) PutMCPServer(ctx context.Context, name string, req MCPServerRequest) (*MCPServer, error) {
	return call[MCPServer](ctx, c, http.MethodPut, "/admin/v1/mcp/servers/"+esc(name), nil, req)
}

// RemoveMCPServer is the admin API's DELETE of an MCP server.
func (c *Client) RemoveMCPServer(ctx context.Context, name string) (*MCPServer, error) {
	return call[MCPServer](ctx, c, http.MethodDelete, "/admin/v1/mcp/servers/"+esc(name), nil, nil)
}

// RedactURL is a server's URL as the API shows it: a password and the
// query's values (where some servers take their keys) read Redacted.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Redacted}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
