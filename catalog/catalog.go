// Package catalog is the customer's model list behind GET /v1/models and
// GET /v1/models/{id} (the server package serves it). It lists only the
// models a caller can reach through this gateway (their vendor is
// configured and, with For, the caller's key may call them) with the
// price the caller pays, the vendor's price x 1.09, and the model's
// limits.
//
// The list answers in the shape of the SDK that asks: OpenAI's list
// ({"object":"list","data":[...]}) by default, and Anthropic's paged list
// ({"data":[...],"has_more","first_id","last_id"}, with limit, after_id
// and before_id) when the request carries an anthropic-version header, as
// Anthropic's SDKs send on every call. Both carry the gateway's fields
// (pricing, context_window, max_output_tokens) beside the vendor's own;
// SDKs ignore fields they do not know.
//
// OpenRouter's models are not listed: any openrouter/<provider>/<model> is
// accepted and priced from the aggregator's own figures.
package catalog

import (
	"math/big"
	"slices"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// Model is one entry of the list, in the OpenAI shape plus the gateway's
// fields.
type Model struct {
	ID      string `json:"id"`       // "openai/gpt-6-sol"
	Object  string `json:"object"`   // "model"
	Created int64  `json:"created"`  // Unix time of the price's date
	OwnedBy string `json:"owned_by"` // the vendor prefix

	Pricing         Pricing `json:"pricing"`
	Tiers           []Tier  `json:"pricing_tiers,omitempty"`
	ContextWindow   int64   `json:"context_window,omitempty"`
	MaxOutputTokens int64   `json:"max_output_tokens"`
	// RouteModels, on an operator route ("gw/..."), are its members in
	// the order tried; its pricing is the dearest member's (the charge
	// is the serving model's price) and its limits the smallest.
	RouteModels []string `json:"route_models,omitempty"`
}

// Pricing is what the caller pays, in USD per million tokens, as exact
// decimal strings: the vendor's price x 1.09. A cache price the vendor
// does not publish shows the rate it is billed at.
type Pricing struct {
	Input        string `json:"input"`
	CachedInput  string `json:"cached_input"`
	CacheWrite5m string `json:"cache_write_5m"`
	CacheWrite1h string `json:"cache_write_1h"`
	Output       string `json:"output"`
	Unit         string `json:"unit"` // "usd_per_million_tokens"
}

// Tier is a long-context price: it applies to a whole request whose
// prompt has more than AbovePromptTokens tokens.
type Tier struct {
	AbovePromptTokens int64   `json:"above_prompt_tokens"`
	Pricing           Pricing `json:"pricing"`
}

// AnthropicModel is one entry of the list in Anthropic's shape, plus the
// gateway's fields.
type AnthropicModel struct {
	Type        string `json:"type"` // "model"
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"` // RFC 3339

	Pricing         Pricing `json:"pricing"`
	ContextWindow   int64   `json:"context_window,omitempty"`
	MaxOutputTokens int64   `json:"max_output_tokens"`
}

// Catalog is the list of models callers can use, with their prices.
type Catalog struct {
	models []Model // sorted by id
}

// New lists card's models whose vendor routable reports true.
func New(card *ratecard.Card, routable func(vendor string) bool) *Catalog {
	c := &Catalog{}
	for _, m := range card.Models() {
		if m.Vendor == "openrouter" || routable != nil && !routable(m.Vendor) {
			continue
		}
		e := Model{ID: m.Name(), Object: "model", OwnedBy: m.Vendor, Pricing: customer(m.Price),
			ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens}
		if d, err := time.Parse(time.DateOnly, m.Date); err == nil {
			e.Created = d.Unix()
		}
		for _, t := range m.Tiers {
			e.Tiers = append(e.Tiers, Tier{AbovePromptTokens: t.AbovePromptTokens, Pricing: customer(t.Price)})
		}
		c.models = append(c.models, e)
	}
	return c
}

// AddRoute lists an operator route under its name (owned by "gateway"),
// priced as its dearest listed member (by output price) with the smallest
// limits of its listed members.
func (c *Catalog) AddRoute(name string, members []string) {
	e := Model{ID: name, Object: "model", OwnedBy: "gateway", RouteModels: members}
	var dearest *big.Rat
	for _, id := range members {
		m, ok := c.Lookup(id)
		if !ok || m.RouteModels != nil {
			continue
		}
		if out, ok := new(big.Rat).SetString(m.Pricing.Output); ok && (dearest == nil || out.Cmp(dearest) > 0) {
			dearest, e.Pricing, e.Tiers, e.Created = out, m.Pricing, m.Tiers, m.Created
		}
		if m.ContextWindow > 0 && (e.ContextWindow == 0 || m.ContextWindow < e.ContextWindow) {
			e.ContextWindow = m.ContextWindow
		}
		if m.MaxOutputTokens > 0 && (e.MaxOutputTokens == 0 || m.MaxOutputTokens < e.MaxOutputTokens) {
			e.MaxOutputTokens = m.MaxOutputTokens
		}
	}
	if dearest == nil {
		e.Pricing.Unit = "usd_per_million_tokens"
	}
	i, _ := slices.BinarySearchFunc(c.models, name, func(m Model, id string) int { return strings.Compare(m.ID, id) })
	c.models = slices.Insert(c.models, i, e)
}

// Models returns the listed models, sorted by id.
func (c *Catalog) Models() []Model { return c.models }

// For returns the catalog a key whose model allow list is allowed sees:
// the models gw.ModelAllowed lets it call (c itself for an empty list).
func (c *Catalog) For(allowed []string) *Catalog {
	if len(allowed) == 0 {
		return c
	}
	out := &Catalog{}
	for _, m := range c.models {
		if gw.ModelAllowed(allowed, m.OwnedBy, strings.TrimPrefix(m.ID, m.OwnedBy+"/")) || routeAllowed(allowed, m.RouteModels) {
			out.models = append(out.models, m)
		}
	}
	return out
}

// routeAllowed reports whether an allow list lets a key call a route:
// some member of it (the others are passed over when tried).
func routeAllowed(allowed, members []string) bool {
	for _, id := range members {
		if v, model, ok := strings.Cut(id, "/"); ok && gw.ModelAllowed(allowed, v, model) {
			return true
		}
	}
	return false
}

// customer returns the caller's price: the vendor's x 1.09, exactly.
func customer(p ratecard.Price) Pricing {
	r := p.Resolved()
	up := func(x *big.Rat) string {
		return ratecard.FormatPrice(new(big.Rat).Mul(x, big.NewRat(gw.MarkupNum, gw.MarkupDen)))
	}
	return Pricing{Input: up(r.Input), CachedInput: up(r.CachedInput), CacheWrite5m: up(r.CacheWrite5m),
		CacheWrite1h: up(r.CacheWrite1h), Output: up(r.Output), Unit: "usd_per_million_tokens"}
}

// Lookup returns the listed model with this id (case-insensitive).
func (c *Catalog) Lookup(id string) (*Model, bool) {
	for i := range c.models {
		if strings.EqualFold(c.models[i].ID, id) {
			return &c.models[i], true
		}
	}
	return nil, false
}

// OpenAIList is the list in OpenAI's shape.
type OpenAIList struct {
	Object string  `json:"object"` // "list"
	Data   []Model `json:"data"`
}

// OpenAI returns the whole list in OpenAI's shape.
func (c *Catalog) OpenAI() OpenAIList {
	return OpenAIList{Object: "list", Data: append([]Model{}, c.models...)}
}

// AnthropicList is one page of the list in Anthropic's shape.
type AnthropicList struct {
	Data    []AnthropicModel `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

// Anthropic returns a page as Anthropic's API pages: up to limit models
// after afterID, or the limit models just before beforeID (an unknown id
// pages from the start or the end). HasMore says more models lie in the
// paging direction.
func (c *Catalog) Anthropic(afterID, beforeID string, limit int) AnthropicList {
	lo, hi := 0, len(c.models)
	backward := beforeID != ""
	if backward {
		if i := c.index(beforeID); i >= 0 {
			hi = i
		}
		lo = max(0, hi-limit)
	} else {
		if afterID != "" {
			lo = c.index(afterID) + 1
		}
		hi = min(hi, lo+limit)
	}
	out := AnthropicList{Data: []AnthropicModel{}}
	for i := lo; i < hi; i++ {
		out.Data = append(out.Data, ToAnthropic(&c.models[i]))
	}
	if backward {
		out.HasMore = lo > 0
	} else {
		out.HasMore = hi < len(c.models)
	}
	if len(out.Data) > 0 {
		out.FirstID, out.LastID = &out.Data[0].ID, &out.Data[len(out.Data)-1].ID
	}
	return out
}

func (c *Catalog) index(id string) int {
	for i := range c.models {
		if c.models[i].ID == id {
			return i
		}
	}
	return -1
}

// ToAnthropic returns m in Anthropic's shape.
func ToAnthropic(m *Model) AnthropicModel {
	return AnthropicModel{Type: "model", ID: m.ID, DisplayName: m.ID, CreatedAt: time.Unix(m.Created, 0).UTC().Format(time.RFC3339),
		Pricing: m.Pricing, ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens}
}
