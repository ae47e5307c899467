package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/catalog"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/postgres"
	"github.com/gwlabs/gateway/provider/anthropic"
	"github.com/gwlabs/gateway/provider/google"
	"github.com/gwlabs/gateway/provider/openai"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/sqlite"
)

// OpenStore opens the store a URL names: postgres:// or postgresql://
// for PostgreSQL, anything else (optionally "sqlite:"-prefixed) is a
// SQLite file, created and migrated if new. exclusive (the serving
// process, unless GATEWAY_SQLITE_SHARED=on) keeps a SQLite store's holds
// in memory.
func OpenStore(ctx context.Context, url string, exclusive bool) (gw.Store, error) {
	if err := CheckStoreURL(url); err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		db, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, err // says "open postgres: ..." itself
		}
		return db, nil
	default:
		path := strings.TrimPrefix(url, "sqlite:")
		db, err := sqlite.OpenWith(ctx, path, sqlite.Options{Exclusive: exclusive})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err) // "open sqlite: ..." comes from sqlite.Open
		}
		return db, nil
	}
}

// CheckStoreURL refuses a store URL of a kind the gateway has no store
// for ("mysql://..."), which would otherwise be taken for a SQLite file
// name.
func CheckStoreURL(url string) error {
	scheme, _, ok := strings.Cut(url, "://")
	if !ok || strings.ContainsAny(scheme, `/\`) {
		return nil // a path
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		return nil
	}
	return fmt.Errorf("store %q: %s:// is not a store this gateway has; use a SQLite file path (sqlite:PATH) or a postgres:// URL", redactURL(url), scheme)
}

// redactURL hides a URL's password.
func redactURL(url string) string {
	if scheme, rest, ok := strings.Cut(url, "://"); ok {
		if cred, host, ok := strings.Cut(rest, "@"); ok {
			if user, _, ok := strings.Cut(cred, ":"); ok {
				return scheme + "://" + user + ":***@" + host
			}
		}
	}
	return url
}

// StoreExists says whether a SQLite store's file is there (a PostgreSQL
// URL is taken as there: its server says otherwise). A command that only
// reads or changes what is in a store refuses a path with no store
// rather than creating an empty one (a typo in --db).
func StoreExists(url string) error {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return nil
	}
	path := strings.TrimPrefix(url, "sqlite:")
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no store at %s (--db or GATEWAY_DATABASE_URL): this command does not create one; check the path, or create the store with gateway serve or gateway keys create", path)
	} else if err != nil {
		return fmt.Errorf("store %s: %w", path, err)
	}
	return nil
}

// newKeeper returns the keeper of client state on the store: message
// threads and DeepSeek reasoning, with the configured retention (0 turns
// either off).
func newKeeper(store gw.Store, c Config, logger *slog.Logger) (*convstate.Keeper, error) {
	cs, ok := store.(convstate.Store)
	if !ok {
		return nil, fmt.Errorf("store %T cannot keep client state", store)
	}
	off := func(d time.Duration) time.Duration {
		if d <= 0 {
			return -1
		}
		return d
	}
	return convstate.New(convstate.Config{
		Store:             cs,
		ThreadTTL:         off(c.ThreadRetention),
		ThreadMaxBytes:    int(min(c.ThreadMaxBytes, 1<<40)),
		ReasoningTTL:      off(c.ReasoningRetention),
		AccountMaxBytes:   c.StateMaxBytes,
		AccountMaxEntries: c.StateMaxEntries,
		Logger:            logger,
	})
}

// LoadCard returns the embedded rate card, overlaid with the override
// file when one is configured.
func LoadCard(path string) (*ratecard.Card, error) {
	card, err := ratecard.Default()
	if err != nil {
		return nil, fmt.Errorf("rate card: %w", err)
	}
	if path == "" {
		return card, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rate card override: %w", err)
	}
	defer f.Close()
	o, err := ratecard.Load(f)
	if err != nil {
		return nil, fmt.Errorf("rate card override %s: %w", path, err)
	}
	return card.Overlay(o), nil
}

// BuildProviders makes the nine vendor adapters from the configuration.
func BuildProviders(c Config, card *ratecard.Card) (map[string]gw.Provider, error) {
	out := make(map[string]gw.Provider, 9)
	for _, v := range route.Vendors() {
		vc := c.Vendors[v]
		var (
			p   gw.Provider
			err error
		)
		switch v {
		case route.Anthropic:
			p, err = anthropic.New(anthropic.Config{
				BaseURL: vc.BaseURL, APIKey: vc.APIKey, HTTP: c.HTTP,
				Encode: anthropicshape.EncodeOptions{DefaultMaxTokens: defaultMaxTokens(card)},
			})
		case route.Google:
			p, err = google.New(google.Config{BaseURL: vc.BaseURL, APIKey: vc.APIKey, HTTP: c.HTTP})
		default:
			cfg, _ := openai.Defaults(v)
			if vc.BaseURL != "" {
				cfg.BaseURL = vc.BaseURL
			}
			cfg.APIKey, cfg.HTTP = vc.APIKey, c.HTTP
			if v == route.OpenAI && c.OpenAIForwardOrg {
				cfg.ForwardHeaders = append(cfg.ForwardHeaders, openai.OrgHeaders()...)
			}
			p, err = openai.New(cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("vendor %s: %w", v, err)
		}
		out[v] = p
	}
	return out, nil
}

// defaultMaxTokens answers a chat-completions caller that set no output
// cap when its request goes to Anthropic, which requires one: the model's
// maximum output from the rate card, else 8192.
func defaultMaxTokens(card *ratecard.Card) func(model string) int {
	return func(model string) int {
		if m, ok := card.Lookup(route.Anthropic, model); ok && m.MaxOutputTokens > 0 {
			return int(m.MaxOutputTokens)
		}
		return 8192
	}
}

// openRouterRefresh is how often OpenRouter's price list is read again.
const openRouterRefresh = 6 * time.Hour

// openRouterPrices reads OpenRouter's per-model price list (its models
// endpoint) now, again after a failed read (1 s, doubling up to 30 s,
// until one succeeds) and every openRouterRefresh after a good one, for
// pricing answers that carry no usage.cost, for sizing holds and for
// GET /v1/models. Each good list is kept in the store, whose copy is in
// use from the start until a fresh one is read. Without a key or base
// URL nothing is read.
func openRouterPrices(c Config, store gw.Store, logger *slog.Logger) *ratecard.OpenRouterPrices {
	p := &ratecard.OpenRouterPrices{}
	vc := c.Vendors[route.OpenRouter]
	base := vc.BaseURL
	if base == "" {
		d, _ := openai.Defaults(route.OpenRouter)
		base = d.BaseURL
	}
	if vc.APIKey == "" || base == "" {
		return p
	}
	client := &http.Client{Timeout: 10 * time.Second}
	ls, _ := store.(ratecard.ListStore)
	p.Refresh(context.Background(), ratecard.RefreshOptions{
		Fetch: func(ctx context.Context) (*ratecard.OpenRouterList, error) {
			key := vc.APIKey
			if keys, err := upstream.ParseKeys(key); err == nil && len(keys) > 0 {
				key = keys[0].Secret // a pool: its first key reads the price list
			}
			return ratecard.FetchOpenRouter(ctx, client, base, key)
		},
		Interval: openRouterRefresh,
		RetryMin: c.OpenRouterRetry,
		RetryMax: c.OpenRouterRetryMax,
		Store:    ls,
		OnErr: func(err error) {
			logger.Warn("openrouter price list not read; retrying", "err", err)
		},
		OnLoad: func(l *ratecard.OpenRouterList) {
			from := "vendor"
			if l.FromStore {
				from = "store"
			}
			logger.Info("openrouter price list", "models", l.Len(), "fetched", l.Fetched.UTC().Format(time.RFC3339), "from", from)
		},
		OnStale: func(l *ratecard.OpenRouterList, age time.Duration) {
			logger.Warn("openrouter price list is over a day old; openrouter/ answers without usage.cost are priced from it",
				"fetched", l.Fetched.UTC().Format(time.RFC3339), "age", age.Round(time.Minute).String())
		},
	})
	return p
}

// vendorHealth reports the breakers and key pools of the providers that
// keep them, in the vendors' slot order.
func vendorHealth(providers map[string]gw.Provider, now func() time.Time) func() []gw.VendorHealth {
	return func() []gw.VendorHealth {
		var out []gw.VendorHealth
		t := now()
		for _, v := range route.Vendors() {
			if h, ok := providers[v].(gw.HealthReporter); ok {
				out = append(out, h.Health(t))
			}
		}
		return out
	}
}

// newCatalog lists the models of the configured vendors (OpenRouter's
// from its price list as it stands) and the operator's routes.
func newCatalog(card *ratecard.Card, providers map[string]gw.Provider, routes *route.Table, openRouter *ratecard.OpenRouterPrices) *catalog.Catalog {
	routable := func(vendor string) bool {
		a, ok := providers[vendor].(proxy.Availability)
		return providers[vendor] != nil && (!ok || a.Unavailable() == nil)
	}
	c := catalog.New(card, routable)
	for _, name := range routes.Names() {
		r, _ := routes.Get(name)
		members := make([]string, len(r.Members))
		for i, m := range r.Members {
			members[i] = m.Vendor + "/" + m.Model
		}
		c.AddRoute(r.Name, members)
	}
	if openRouter != nil && routable(route.OpenRouter) {
		c.WithOpenRouter(openRouter.List, nil)
	}
	return c
}
