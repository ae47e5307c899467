package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// MCPGrant is a key's or an account's MCP allow list (see gw.MCPGrant):
// entries are a server's name (all of it), "SERVER__tool" (that tool
// alone) or a prefix ending in "*"; an empty list grants nothing.
// ToolRPM is the subject's tool calls a minute (0: the gateway's
// default). Set says whether a list is set at all (none: everything the
// gateway serves is allowed).
type MCPGrant struct {
	Subject string   `json:"subject"` // "key" or "account"
	ID      string   `json:"id"`
	Set     bool     `json:"set"`
	Allow   []string `json:"allow"`
	ToolRPM int64    `json:"tool_rpm"`
}

// MCPGrantRequest replaces a subject's allow list.
type MCPGrantRequest struct {
	Allow   []string `json:"allow"`
	ToolRPM int64    `json:"tool_rpm"`
}

// Bounds of an allow list.
const (
	MaxMCPEntries  = 1000
	MaxMCPEntryLen = 200
	MaxMCPToolRPM  = 1_000_000
)

// MCPGranter is the part of Service that keeps MCP allow lists.
type MCPGranter interface {
	// MCPGrant returns the subject's allow list ("key" with a key id, or
	// "account" with an account id or name).
	MCPGrant(ctx context.Context, subject, id string) (*MCPGrant, error)
	// SetMCPGrant replaces it; req nil removes it.
	SetMCPGrant(ctx context.Context, subject, id string, req *MCPGrantRequest) (*MCPGrant, error)
	// MCPCalls lists the calls made through /mcp, newest first.
	MCPCalls(ctx context.Context, account, before string, limit int) ([]MCPCall, error)
}

// mcpSubject resolves a subject to its stored id: an account's name
// becomes its id.
func (l *Local) mcpSubject(ctx context.Context, subject, id string) (string, error) {
	switch subject {
	case "key":
		return id, nil
	case "account":
		a, err := l.Account(ctx, id)
		if err != nil {
			return "", err
		}
		return a.ID, nil
	}
	return "", invalid("the subject is key or account, not %q", subject)
}

// MCPGrant returns the subject's MCP allow list.
func (l *Local) MCPGrant(ctx context.Context, subject, id string) (*MCPGrant, error) {
	sid, err := l.mcpSubject(ctx, subject, id)
	if err != nil {
		return nil, err
	}
	if subject == "key" {
		if _, err := l.Key(ctx, id); err != nil {
			return nil, err
		}
	}
	var g *gw.MCPGrant
	if subject == "key" {
		g, _, err = l.Store.MCPGrants(ctx, sid, "")
	} else {
		_, g, err = l.Store.MCPGrants(ctx, "", sid)
	}
	if err != nil {
		return nil, err
	}
	out := &MCPGrant{Subject: subject, ID: sid, Allow: []string{}}
	if g != nil {
		out.Set, out.Allow, out.ToolRPM = true, g.Allow, g.ToolRPM
	}
	return out, nil
}

// SetMCPGrant replaces (or, with req nil, removes) the subject's MCP
// allow list. Running gateways apply it within their key watch interval.
func (l *Local) SetMCPGrant(ctx context.Context, subject, id string, req *MCPGrantRequest) (*MCPGrant, error) {
	sid, err := l.mcpSubject(ctx, subject, id)
	if err != nil {
		return nil, err
	}
	var g *gw.MCPGrant
	if req != nil {
		if len(req.Allow) > MaxMCPEntries {
			return nil, invalid("allow has %d entries, more than %d", len(req.Allow), MaxMCPEntries)
		}
		if req.ToolRPM < 0 || req.ToolRPM > MaxMCPToolRPM {
			return nil, invalid("tool_rpm must be between 0 and %d", MaxMCPToolRPM)
		}
		g = &gw.MCPGrant{Allow: []string{}, ToolRPM: req.ToolRPM}
		for _, a := range req.Allow {
			a = strings.TrimSpace(a)
			if a == "" || len(a) > MaxMCPEntryLen || strings.ContainsAny(a, "\n\r\t ,") {
				return nil, invalid("allow entry %q: want a server name, SERVER__tool or a prefix ending in *", a)
			}
			g.Allow = append(g.Allow, a)
		}
	}
	if err := l.Store.SetMCPGrant(ctx, subject, sid, g); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound(subject, id)
		}
		return nil, err
	}
	return l.MCPGrant(ctx, subject, sid)
}

// mcpRoutes are the MCP allow lists' endpoints.
var mcpRoutes = []string{
	"GET /admin/v1/mcp/grants/{subject}/{id}", "PUT /admin/v1/mcp/grants/{subject}/{id}", "DELETE /admin/v1/mcp/grants/{subject}/{id}",
	"GET /admin/v1/mcp/calls",
}

func (h *Handler) mcpGrant(w http.ResponseWriter, r *http.Request) {
	g, err := h.svc.MCPGrant(r.Context(), r.PathValue("subject"), r.PathValue("id"))
	reply(w, http.StatusOK, g, err)
}

func (h *Handler) setMCPGrant(w http.ResponseWriter, r *http.Request) {
	var req MCPGrantRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	g, err := h.svc.SetMCPGrant(r.Context(), r.PathValue("subject"), r.PathValue("id"), &req)
	reply(w, http.StatusOK, g, err)
}

func (h *Handler) deleteMCPGrant(w http.ResponseWriter, r *http.Request) {
	g, err := h.svc.SetMCPGrant(r.Context(), r.PathValue("subject"), r.PathValue("id"), nil)
	reply(w, http.StatusOK, g, err)
}

// MCPGrant is the admin API's GET of an allow list.
func (c *Client) MCPGrant(ctx context.Context, subject, id string) (*MCPGrant, error) {
	return call[MCPGrant](ctx, c, http.MethodGet, "/admin/v1/mcp/grants/"+esc(subject)+"/"+esc(id), nil, nil)
}

// SetMCPGrant is the admin API's PUT (or, req nil, DELETE) of an allow
// list.
func (c *Client) SetMCPGrant(ctx context.Context, subject, id string, req *MCPGrantRequest) (*MCPGrant, error) {
	if req == nil {
		return call[MCPGrant](ctx, c, http.MethodDelete, "/admin/v1/mcp/grants/"+esc(subject)+"/"+esc(id), nil, nil)
	}
	return call[MCPGrant](ctx, c, http.MethodPut, "/admin/v1/mcp/grants/"+esc(subject)+"/"+esc(id), nil, req)
}

// MCPCall is one call made through /mcp, from its record.
type MCPCall struct {
	RequestID string    `json:"request_id"`
	AccountID string    `json:"account_id"`
	KeyID     string    `json:"key_id"`
	Server    string    `json:"server"`
	Tool      string    `json:"tool"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
	LatencyMS int64     `json:"latency_ms"`
	ChargeUSD string    `json:"charge_usd"`
	Guard     string    `json:"guard,omitempty"`
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// MCPCalls lists the calls made through /mcp, newest first: all of them
// or an account's (by id or name), at most limit (default 100, at most
// MaxLedgerPage), older than the request id before when given.
func (l *Local) MCPCalls(ctx context.Context, account, before string, limit int) ([]MCPCall, error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	if limit > MaxLedgerPage {
		return nil, invalid("limit must be at most %d", MaxLedgerPage)
	}
	f := gw.RecordFilter{Endpoint: mcpEndpoint, Limit: limit, Before: before}
	if account != "" {
		a, err := l.Account(ctx, account)
		if err != nil {
			return nil, err
		}
		f.AccountID = a.ID
	}
	rs, err := l.Store.Records(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]MCPCall, 0, len(rs))
	for _, r := range rs {
		out = append(out, MCPCall{RequestID: r.RequestID, AccountID: r.AccountID, KeyID: r.KeyID, Server: r.Vendor, Tool: r.Model, Status: r.Status,
			Error: string(r.ErrorCode), LatencyMS: r.Latency.Milliseconds(), ChargeUSD: r.Charge.USDString(), Guard: r.Guard, Note: r.Note, CreatedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}

// mcpEndpoint is the records' endpoint of /mcp's calls (proxy.EndpointMCP).
const mcpEndpoint gw.Shape = "mcp"

func (h *Handler) mcpCalls(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit")
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	list, err := h.svc.MCPCalls(r.Context(), q.Get("account"), q.Get("before"), int(min(limit, 1<<20)))
	reply(w, http.StatusOK, map[string]any{"data": list}, err)
}

// MCPCalls is the admin API's list of /mcp's calls.
func (c *Client) MCPCalls(ctx context.Context, account, before string, limit int) ([]MCPCall, error) {
	q := url.Values{}
	if account != "" {
		q.Set("account", account)
	}
	if before != "" {
		q.Set("before", before)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	page, err := call[struct {
		Data []MCPCall `json:"data"`
	}](ctx, c, http.MethodGet, "/admin/v1/mcp/calls", q, nil)
	if err != nil {
		return nil, err
	}
	return page.Data, nil
}
