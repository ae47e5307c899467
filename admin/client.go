package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Client is the Service over a gateway's admin API.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080
	Token   string // the admin token
	HTTP    *http.Client
}

var _ Service = (*Client)(nil)

// adminOff is the error_code a gateway whose admin API is off answers
// under /admin/ with (server.AdminOff).
const adminOff = "admin_api_off"

// do sends one call; a non-2xx answer becomes the *gw.Error of its
// envelope.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("admin API: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var env struct {
			Error struct {
				Type, Message string
				Details       struct {
					ErrorCode string `json:"error_code"`
				}
			}
		}
		if json.Unmarshal(raw, &env) == nil && env.Error.Type != "" {
			if resp.StatusCode == http.StatusNotFound && (env.Error.Details.ErrorCode == adminOff ||
				strings.HasPrefix(env.Error.Message, "no such endpoint: ")) {
				// A gateway without an admin token answers no admin path
				// (an older one as an unknown endpoint).
				return &gw.Error{Code: gw.CodeNotFound, Message: fmt.Sprintf(
					"the admin API is off on the gateway at %s; set GATEWAY_ADMIN_TOKEN (admin_token in its configuration file) there and restart it, or administer its store with --db", c.BaseURL)}
			}
			return &gw.Error{Code: gw.Code(env.Error.Type), Message: env.Error.Message}
		}
		return fmt.Errorf("admin API: %s %s: %s", method, path, resp.Status)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("admin API: %s %s: %w", method, path, err)
	}
	return nil
}

// call is do for a result of type T: nil and the error on failure.
func call[T any](ctx context.Context, c *Client, method, path string, q url.Values, in any) (*T, error) {
	var v T
	if err := c.do(ctx, method, path, q, in, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// list is call for the {"data":[...]} answers.
func list[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	out, err := call[struct{ Data []T }](ctx, c, http.MethodGet, path, q, nil)
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}

func esc(s string) string { return url.PathEscape(s) }

func (c *Client) CreateAccount(ctx context.Context, name string) (*Account, error) {
	return call[Account](ctx, c, http.MethodPost, "/admin/v1/accounts", nil, map[string]string{"name": name})
}

func (c *Client) Accounts(ctx context.Context) ([]Account, error) {
	return list[Account](ctx, c, "/admin/v1/accounts", nil)
}

func (c *Client) Account(ctx context.Context, idOrName string) (*Account, error) {
	return call[Account](ctx, c, http.MethodGet, "/admin/v1/accounts/"+esc(idOrName), nil, nil)
}

func (c *Client) TopUp(ctx context.Context, account string, req TopUpRequest) (*TopUpResult, error) {
	return call[TopUpResult](ctx, c, http.MethodPost, "/admin/v1/accounts/"+esc(account)+"/topups", nil, req)
}

func (c *Client) Ledger(ctx context.Context, account string, before int64, limit int) (*LedgerPage, error) {
	q := url.Values{}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[LedgerPage](ctx, c, http.MethodGet, "/admin/v1/accounts/"+esc(account)+"/ledger", q, nil)
}

func (c *Client) CreateKey(ctx context.Context, req KeyRequest) (*CreatedKey, error) {
	return call[CreatedKey](ctx, c, http.MethodPost, "/admin/v1/keys", nil, req)
}

func (c *Client) Keys(ctx context.Context) ([]Key, error) {
	return list[Key](ctx, c, "/admin/v1/keys", nil)
}

func (c *Client) RotateKey(ctx context.Context, id string, grace time.Duration) (*CreatedKey, error) {
	in := map[string]int64{"grace_seconds": int64(grace / time.Second)}
	return call[CreatedKey](ctx, c, http.MethodPost, "/admin/v1/keys/"+esc(id)+"/rotate", nil, in)
}

func (c *Client) RevokeKey(ctx context.Context, id string) (*Key, error) {
	return call[Key](ctx, c, http.MethodPost, "/admin/v1/keys/"+esc(id)+"/revoke", nil, nil)
}

func (c *Client) UpdateKey(ctx context.Context, id string, u KeyUpdate) (*Key, error) {
	return call[Key](ctx, c, http.MethodPatch, "/admin/v1/keys/"+esc(id), nil, u)
}

func (c *Client) Incidents(ctx context.Context, limit int) ([]Incident, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return list[Incident](ctx, c, "/admin/v1/incidents", q)
}

func (c *Client) Incident(ctx context.Context, id string) (*Incident, error) {
	return call[Incident](ctx, c, http.MethodGet, "/admin/v1/incidents/"+esc(id), nil, nil)
}

func (c *Client) Key(ctx context.Context, id string) (*Key, error) {
	return call[Key](ctx, c, http.MethodGet, "/admin/v1/keys/"+esc(id), nil, nil)
}

func (c *Client) UpdateAccount(ctx context.Context, account string, u AccountUpdate) (*Account, error) {
	return call[Account](ctx, c, http.MethodPatch, "/admin/v1/accounts/"+esc(account), nil, u)
}

func (c *Client) ReviewIncident(ctx context.Context, id string, r ReviewRequest) (*Incident, error) {
	return call[Incident](ctx, c, http.MethodPost, "/admin/v1/incidents/"+esc(id)+"/review", nil, r)
}
