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
// OpenRouter's models are listed from the aggregator's own price list
// (WithOpenRouter): the models it prices, at its price x 1.09, with the
// list's date and age (price_list). Models the list leaves out (unpriced,
// negative prices, the router pseudo-models) are neither listed nor
// served.
package catalog

import (
	"math/big"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
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
	// PriceList, on an OpenRouter model, is the price list it is priced
	// from.
	PriceList *PriceList `json:"price_list,omitempty"`
	// Type is "embedding" on an embedding model (served by
	// /v1/embeddings and Gemini's embed methods, priced per input
	// token), absent on a chat model. Dimensions is its vectors' length
	// by default; FlexibleDimensions says a shorter length may be asked.
	Type               string `json:"type,omitempty"`
	Dimensions         int64  `json:"dimensions,omitempty"`
	FlexibleDimensions bool   `json:"flexible_dimensions,omitempty"`
}

// TypeEmbedding is Model.Type of an embedding model.
const TypeEmbedding = "embedding"

// PriceList says where an OpenRouter model's price comes from: the
// aggregator's list, when it was read and how old it is now, and whether
// it is the copy kept in the store (the vendor has not answered since
// the gateway started).
type PriceList struct {
	Source     string `json:"source"`     // "openrouter models endpoint"
	FetchedAt  string `json:"fetched_at"` // RFC 3339
	AgeSeconds int64  `json:"age_seconds"`
	FromStore  bool   `json:"from_store,omitempty"`
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

	Pricing         Pricing    `json:"pricing"`
	ContextWindow   int64      `json:"context_window,omitempty"`
	MaxOutputTokens int64      `json:"max_output_tokens"`
	PriceList       *PriceList `json:"price_list,omitempty"`
}

// Catalog is the list of models callers can use, with their prices.
type Catalog struct {
	models []Model // sorted by id; with openRouter, without its models

	// openRouter returns OpenRouter's current price list (nil: none
	// read yet); merged is the list with its models, for the last list
	// seen.
	openRouter func() *ratecard.OpenRouterList
	merged     atomic.Pointer[mergedList]
	now        func() time.Time
}

// mergedList is the catalog's models with those of one OpenRouter list.
type mergedList struct {
	list   *ratecard.OpenRouterList
	models []Model
}

// WithOpenRouter lists the models OpenRouter's price list prices, as the
// list stands at each request (list returns the current one, nil while
// none was read). now is the clock for the list's age (nil: time.Now).
func (c *Catalog) WithOpenRouter(list func() *ratecard.OpenRouterList, now func() time.Time) {
	c.openRouter, c.now = list, now
	if c.now == nil {
		c.now = time.Now
	}
}

// all returns the listed models, OpenRouter's from its current list
// (returned too; nil when there is none).
func (c *Catalog) all() ([]Model, *ratecard.OpenRouterList) {
	if c.openRouter == nil {
		return c.models, nil
	}
	l := c.openRouter()
	if l == nil {
		return c.models, nil
	}
	if m := c.merged.Load(); m != nil && m.list == l {
		return m.models, l
	}
	out := slices.Clone(c.models)
	date := time.Date(l.Fetched.Year(), l.Fetched.Month(), l.Fetched.Day(), 0, 0, 0, 0, time.UTC).Unix()
	for _, m := range l.Models() {
		out = append(out, Model{ID: m.Name(), Object: "model", Created: date, OwnedBy: m.Vendor, Pricing: customer(m.Price),
			ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens, PriceList: &PriceList{}})
	}
	slices.SortStableFunc(out, func(a, b Model) int { return strings.Compare(a.ID, b.ID) })
	c.merged.Store(&mergedList{list: l, models: out})
	return out, l
}

// snapshot returns the listed models as they stand now, each OpenRouter
// model with its list's age; keep filters them (nil: all).
func (c *Catalog) snapshot(keep func(*Model) bool) *Catalog {
	all, l := c.all()
	var pl *PriceList
	if l != nil {
		now := c.now()
		pl = &PriceList{Source: "openrouter models endpoint", FetchedAt: l.Fetched.UTC().Format(time.RFC3339),
			AgeSeconds: max(0, int64(now.Sub(l.Fetched)/time.Second)), FromStore: l.FromStore}
	}
	out := &Catalog{models: make([]Model, 0, len(all))}
	for i := range all {
		if keep != nil && !keep(&all[i]) {
			continue
		}
		m := all[i]
		if m.PriceList != nil {
			m.PriceList = pl
		}
		out.models = append(out.models, m)
	}
	return out
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
	for _, m := range card.Embeddings() {
		if routable != nil && !routable(m.Vendor) {
			continue
		}
		e := Model{ID: m.Name(), Object: "model", OwnedBy: m.Vendor, Pricing: customer(m.Price),
			ContextWindow: m.ContextWindow, Type: TypeEmbedding, Dimensions: m.Dimensions, FlexibleDimensions: m.FlexibleDimensions}
		if d, err := time.Parse(time.DateOnly, m.Date); err == nil {
			e.Created = d.Unix()
		}
		c.models = append(c.models, e)
	}
	slices.SortStableFunc(c.models, func(a, b Model) int { return strings.Compare(a.ID, b.ID) })
	return c
}

// Embedding returns the listed embedding model with this id
// (case-insensitive); a chat model is not one.
func (c *Catalog) Embedding(id string) (*Model, bool) {
	for i := range c.models {
		if m := &c.models[i]; m.Type == TypeEmbedding && strings.EqualFold(m.ID, id) {
			return m, true
		}
	}
	return nil, false
}

// Embeddings returns the ids of the listed embedding models, sorted.
func (c *Catalog) Embeddings() []string {
	var out []string
	for i := range c.models {
		if c.models[i].Type == TypeEmbedding {
			out = append(out, c.models[i].ID)
		}
	}
	return out
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
	c.merged.Store(nil)
}

// Models returns the listed models, sorted by id.
func (c *Catalog) Models() []Model {
	if c.openRouter == nil {
		return c.models
	}
	return c.snapshot(nil).models
}

// For returns the catalog a key whose model allow list is allowed sees,
// as it stands now: the models gw.ModelAllowed lets it call (all of them
// for an empty list).
func (c *Catalog) For(allowed []string) *Catalog {
	if len(allowed) == 0 {
		if c.openRouter == nil {
			return c
		}
		return c.snapshot(nil)
	}
	return c.snapshot(func(m *Model) bool {
		return gw.ModelAllowed(allowed, m.OwnedBy, strings.TrimPrefix(m.ID, m.OwnedBy+"/")) || routeAllowed(allowed, m.RouteModels)
	})
}

// Suggest returns up to max listed ids a model name without a known
// vendor prefix most likely means: the listed models whose own id is the
// name (after an unknown prefix, its rest), the vendors' own before
// OpenRouter's; else the nearest by spelling. None when nothing is
// close.
func (c *Catalog) Suggest(model string, n int) []string {
	names := route.Unprefixed(strings.ToLower(strings.TrimSpace(model)))
	var exact, aggregated, best []string
	bestD := min(4, len(names[0])/3) + 1 // as close as the rate card's "did you mean"
	all, _ := c.all()
	for i := range all {
		m := &all[i]
		if m.RouteModels != nil {
			continue
		}
		own := strings.ToLower(strings.TrimPrefix(m.ID, m.OwnedBy+"/"))
		for _, name := range names {
			switch {
			case own == name && m.OwnedBy == route.OpenRouter:
				aggregated = append(aggregated, m.ID)
			case own == name:
				exact = append(exact, m.ID)
			case m.OwnedBy == route.OpenRouter && strings.HasSuffix(own, "/"+name):
				aggregated = append(aggregated, m.ID) // openrouter/openai/gpt-4.1-mini
			}
			if len(name) > maxFuzzy || abs(len(name)-len(own)) >= bestD {
				continue // too far apart to be a misspelling (and bounded work)
			}
			if d := ratecard.EditDistance(name, own); d < bestD {
				best, bestD = []string{m.ID}, d
			} else if d == bestD && best != nil {
				best = append(best, m.ID)
			}
		}
	}
	found := append(exact, aggregated...)
	if len(found) == 0 {
		found = best
	}
	var out []string
	for _, id := range found {
		if len(out) < n && !slices.Contains(out, id) {
			out = append(out, id)
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

// maxFuzzy bounds the names Suggest compares by spelling.
const maxFuzzy = 100

func abs(n int) int { return max(n, -n) }

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
	if c.openRouter != nil {
		return c.snapshot(func(m *Model) bool { return strings.EqualFold(m.ID, id) }).Lookup(id)
	}
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
	return OpenAIList{Object: "list", Data: append([]Model{}, c.Models()...)}
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
	if c.openRouter != nil {
		return c.snapshot(nil).Anthropic(afterID, beforeID, limit)
	}
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
		Pricing: m.Pricing, ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens, PriceList: m.PriceList}
}
