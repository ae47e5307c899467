package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/guard"
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

// openStore opens the store a URL names: postgres:// or postgresql://
// for PostgreSQL, anything else (optionally "sqlite:"-prefixed) is a
// SQLite file, created and migrated if new.
func openStore(ctx context.Context, url string) (gw.Store, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		db, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return db, nil
	default:
		path := strings.TrimPrefix(url, "sqlite:")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
		return db, nil
	}
}

// loadCard returns the embedded rate card, overlaid with the override
// file when one is configured.
func loadCard(path string) (*ratecard.Card, error) {
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

// buildProviders makes the nine vendor adapters from the configuration.
func buildProviders(c Config, card *ratecard.Card) (map[string]gw.Provider, error) {
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

// billerAdapter fits billing.Biller to proxy.Biller.
type billerAdapter struct{ b *billing.Biller }

func (a billerAdapter) Known(vendor, model string) bool { return a.b.Known(vendor, model) }

func (a billerAdapter) HoldAmount(vendor, model string, bodyBytes int, maxOutput int64) (gw.Money, error) {
	return a.b.HoldAmount(vendor, model, bodyBytes, maxOutput)
}

func (a billerAdapter) Price(vendor, model string, u gw.Usage) (proxy.Quote, error) {
	q, err := a.b.Price(vendor, model, u)
	return proxy.Quote{Cost: q.Cost, Charge: q.Charge, Note: q.Note}, err
}

// excerptRunes bounds the text kept with an incident as its excerpt.
const excerptRunes = 500

// excerpt keeps the start of the last non-system text, where an attack
// usually sits.
func excerpt(segs []guard.Segment) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Source == guard.SourceSystem || strings.TrimSpace(segs[i].Text) == "" {
			continue
		}
		t := segs[i].Text
		if utf8.RuneCountInString(t) > excerptRunes {
			r := []rune(t)
			t = string(r[:excerptRunes]) + "…"
		}
		return t
	}
	return ""
}
