package vendorreport

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/reconcile"
)

// OpenRouter reads OpenRouter's per-generation records (GET
// /api/v1/generation?id=, with the admin key: a key of the account kept
// for these reads) and a key's own usage (GET /api/v1/key). A generation
// record is ready seconds after the request: until then OpenRouter
// answers 404 and GenerationCost reports ok false, for the caller to
// retry.
type OpenRouter struct{ cfg Config }

// NewOpenRouter returns the OpenRouter reader. cfg.BaseURL is the
// configured base URL ("https://openrouter.ai/api/v1").
func NewOpenRouter(cfg Config) *OpenRouter { return &OpenRouter{cfg: cfg} }

type openrouterGeneration struct {
	Data *struct {
		ID        string  `json:"id"`
		TotalCost decimal `json:"total_cost"`
	} `json:"data"`
}

func bearer(k Secret) http.Header { return http.Header{"Authorization": {"Bearer " + string(k)}} }

// GenerationCost returns the cost OpenRouter settled for generation id:
// ok false (and no error) while the record is not ready (HTTP 404).
// Without an admin key it returns reconcile.ErrNoCredentials.
func (o *OpenRouter) GenerationCost(ctx context.Context, id string) (gw.Money, bool, error) {
	if o.cfg.AdminKey == "" {
		return 0, false, reconcile.ErrNoCredentials
	}
	if id == "" {
		return 0, false, errors.New("openrouter report: empty generation id")
	}
	u := o.cfg.base("https://openrouter.ai/api/v1") + "/generation?" + url.Values{"id": {id}}.Encode()
	var g openrouterGeneration
	status, err := o.cfg.get(ctx, "openrouter", u, bearer(o.cfg.AdminKey), &g)
	if status == http.StatusNotFound {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if g.Data == nil || !g.Data.TotalCost.set {
		return 0, false, errors.New("openrouter report: generation record without total_cost")
	}
	var s sum
	s.add(g.Data.TotalCost, perUSD)
	m, err := s.money()
	if err != nil {
		return 0, false, err
	}
	if m < 0 {
		return 0, false, errors.New("openrouter report: negative total_cost")
	}
	return m, true, nil
}

// KeyUsage is a key's usage as GET /api/v1/key reports it.
type KeyUsage struct {
	Usage    gw.Money // spent on the key, all time
	Limit    gw.Money // its credit limit (HasLimit false: none)
	HasLimit bool
}

type openrouterKey struct {
	Data *struct {
		Usage decimal `json:"usage"`
		Limit decimal `json:"limit"`
	} `json:"data"`
}

// KeyUsage reads the usage of key, the inference key whose spend is
// wanted: OpenRouter answers GET /api/v1/key for the key that calls it, so
// this read (and only this one) is made with that key. It serves no
// request.
func (o *OpenRouter) KeyUsage(ctx context.Context, key Secret) (KeyUsage, error) {
	if key == "" {
		return KeyUsage{}, reconcile.ErrNoCredentials
	}
	c := o.cfg
	c.AdminKey = key // for scrubbing
	var k openrouterKey
	if _, err := c.get(ctx, "openrouter", c.base("https://openrouter.ai/api/v1")+"/key", bearer(key), &k); err != nil {
		return KeyUsage{}, err
	}
	if k.Data == nil || !k.Data.Usage.set {
		return KeyUsage{}, errors.New("openrouter report: key answer without usage")
	}
	var out KeyUsage
	var s sum
	s.add(k.Data.Usage, perUSD)
	var err error
	if out.Usage, err = s.money(); err != nil {
		return KeyUsage{}, err
	}
	if k.Data.Limit.set {
		var l sum
		l.add(k.Data.Limit, perUSD)
		if out.Limit, err = l.money(); err != nil {
			return KeyUsage{}, err
		}
		out.HasLimit = true
	}
	return out, nil
}

var _ reconcile.Generations = (*OpenRouter)(nil)
