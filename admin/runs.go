package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
)

// RunDefaults are a key's run caps: applied to a run its requests start
// without caps of their own (the X-Gateway-Run-* headers). Zero: none.
type RunDefaults struct {
	KeyID string `json:"key_id"`
	// BudgetUSD is the run's budget in decimal US dollars (null: none).
	BudgetUSD   *string `json:"budget_usd"`
	MaxRequests int64   `json:"max_requests"`
	IdleSeconds int64   `json:"idle_seconds"`
}

// RunDefaultsRequest replaces a key's run caps; all zero removes them.
type RunDefaultsRequest struct {
	BudgetUSD   string `json:"budget_usd,omitempty"`
	MaxRequests int64  `json:"max_requests,omitempty"`
	IdleSeconds int64  `json:"idle_seconds,omitempty"`
}

// MaxRunIdle bounds a run's idle expiry.
const MaxRunIdle = 366 * 24 * time.Hour

// RunDefaulter is the part of Service that keeps keys' run defaults.
type RunDefaulter interface {
	RunDefaults(ctx context.Context, keyID string) (*RunDefaults, error)
	SetRunDefaults(ctx context.Context, keyID string, req RunDefaultsRequest) (*RunDefaults, error)
}

func (l *Local) runStore() (gw.RunStore, error) {
	rs, ok := l.Store.(gw.RunStore)
	if !ok {
		return nil, gw.Errorf(gw.CodeNotFound, "this store keeps no runs")
	}
	return rs, nil
}

// RunDefaults returns the key's run caps.
func (l *Local) RunDefaults(ctx context.Context, keyID string) (*RunDefaults, error) {
	rs, err := l.runStore()
	if err != nil {
		return nil, err
	}
	if _, err := l.Key(ctx, keyID); err != nil {
		return nil, err
	}
	c, err := rs.RunDefaults(ctx, keyID)
	if err != nil {
		return nil, err
	}
	out := &RunDefaults{KeyID: keyID, MaxRequests: c.MaxRequests, IdleSeconds: int64(c.Idle / time.Second)}
	if c.Budget > 0 {
		b := c.Budget.USDString()
		out.BudgetUSD = &b
	}
	return out, nil
}

// SetRunDefaults replaces the key's run caps. New runs take them at once
// (they are read when a run starts).
func (l *Local) SetRunDefaults(ctx context.Context, keyID string, req RunDefaultsRequest) (*RunDefaults, error) {
	rs, err := l.runStore()
	if err != nil {
		return nil, err
	}
	var c gw.RunCaps
	if req.BudgetUSD != "" {
		if c.Budget, err = gw.ParseUSD(req.BudgetUSD); err != nil || c.Budget < 0 {
			return nil, invalid("budget_usd must be an amount of US dollars (0 clears it), not %q", req.BudgetUSD)
		}
	}
	if req.MaxRequests < 0 {
		return nil, invalid("max_requests must be 0 (none) or more")
	}
	if req.IdleSeconds < 0 || time.Duration(req.IdleSeconds)*time.Second > MaxRunIdle {
		return nil, invalid("idle_seconds must be from 0 (never) to %d", int64(MaxRunIdle/time.Second))
	}
	c.MaxRequests, c.Idle = req.MaxRequests, time.Duration(req.IdleSeconds)*time.Second
	if err := rs.SetRunDefaults(ctx, keyID, c); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("key", keyID)
		}
		return nil, err
	}
	return l.RunDefaults(ctx, keyID)
}

// runRoutes are the run defaults' endpoints.
var runRoutes = []string{"GET /admin/v1/keys/{id}/run-defaults", "PUT /admin/v1/keys/{id}/run-defaults"}

func (h *Handler) runDefaults(w http.ResponseWriter, r *http.Request) {
	d, err := h.svc.RunDefaults(r.Context(), r.PathValue("id"))
	reply(w, http.StatusOK, d, err)
}

func (h *Handler) setRunDefaults(w http.ResponseWriter, r *http.Request) {
	var req RunDefaultsRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	d, err := h.svc.SetRunDefaults(r.Context(), r.PathValue("id"), req)
	reply(w, http.StatusOK, d, err)
}

// RunDefaults is the admin API's GET of a key's run defaults.
func (c *Client) RunDefaults(ctx context.Context, keyID string) (*RunDefaults, error) {
	return call[RunDefaults](ctx, c, http.MethodGet, "/admin/v1/keys/"+esc(keyID)+"/run-defaults", nil, nil)
}

// SetRunDefaults is the admin API's PUT of a key's run defaults.
func (c *Client) SetRunDefaults(ctx context.Context, keyID string, req RunDefaultsRequest) (*RunDefaults, error) {
	return call[RunDefaults](ctx, c, http.MethodPut, "/admin/v1/keys/"+esc(keyID)+"/run-defaults", nil, req)
}
