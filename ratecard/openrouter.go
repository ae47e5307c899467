package ratecard

import (
	"context"
	"encoding/json"

	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// OpenRouterList is OpenRouter's own price list, read from its models
// endpoint (GET {base}/models): per model, USD per token for prompt,
// completion and cache reads and writes, the context length and the
// largest completion its top provider allows. The gateway prices an
// OpenRouter answer that carries no usage.cost (or a negative one) from
// it, and sizes OpenRouter holds from it. Fetched is when the list was
// read: records priced from it say so.
type OpenRouterList struct {
	Fetched time.Time
	models  map[string]*Model
}

// Lookup returns the price of an OpenRouter model id
// ("meta-llama/llama-3.3-70b-instruct"), as a Model with vendor
// "openrouter" and prices per million tokens.
func (l *OpenRouterList) Lookup(model string) (*Model, bool) {
	if l == nil {
		return nil, false
	}
	m, ok := l.models[strings.ToLower(model)]
	return m, ok
}

// Len returns the number of priced models.
func (l *OpenRouterList) Len() int {
	if l == nil {
		return 0
	}
	return len(l.models)
}

// openRouterModels is the part of the models endpoint's answer read here.
type openRouterModels struct {
	Data []struct {
		ID            string `json:"id"`
		ContextLength int64  `json:"context_length"`
		Pricing       struct {
			Prompt          string `json:"prompt"`
			Completion      string `json:"completion"`
			InputCacheRead  string `json:"input_cache_read"`
			InputCacheWrite string `json:"input_cache_write"`
			Request         string `json:"request"`
		} `json:"pricing"`
		TopProvider struct {
			ContextLength       int64 `json:"context_length"`
			MaxCompletionTokens int64 `json:"max_completion_tokens"`
		} `json:"top_provider"`
	} `json:"data"`
}

// ParseOpenRouter reads the models endpoint's answer. Models whose prompt
// or completion price is missing, negative (OpenRouter lists its router
// pseudo-models at -1) or not a decimal, or that charge per request, are
// left out: they cannot be priced from tokens.
func ParseOpenRouter(r io.Reader, fetched time.Time) (*OpenRouterList, error) {
	var f openRouterModels
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("parse openrouter models: %w", err)
	}
	l := &OpenRouterList{Fetched: fetched, models: make(map[string]*Model, len(f.Data))}
	date := fetched.UTC().Format(time.DateOnly)
	perM := big.NewRat(1_000_000, 1)
	rate := func(s string, required bool) (*big.Rat, bool) {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, !required
		}
		x, ok := new(big.Rat).SetString(s)
		if !ok || x.Sign() < 0 {
			return nil, false
		}
		x.Mul(x, perM)
		if x.Cmp(big.NewRat(MaxPrice, 1)) > 0 {
			return nil, false
		}
		return x, true
	}
	for _, d := range f.Data {
		if checkName(d.ID) != nil {
			continue
		}
		in, ok1 := rate(d.Pricing.Prompt, true)
		out, ok2 := rate(d.Pricing.Completion, true)
		read, ok3 := rate(d.Pricing.InputCacheRead, false)
		write, ok4 := rate(d.Pricing.InputCacheWrite, false)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		if req, ok := rate(d.Pricing.Request, false); !ok || (req != nil && req.Sign() > 0) {
			continue
		}
		if write != nil && write.Sign() == 0 {
			write = nil // "0": no cache-write surcharge listed
		}
		if read != nil && read.Sign() == 0 {
			read = nil
		}
		m := &Model{
			Vendor: "openrouter", ID: d.ID,
			Price:           Price{Input: in, Output: out, CachedInput: read, CacheWrite5m: write},
			ContextWindow:   max(d.ContextLength, d.TopProvider.ContextLength),
			MaxOutputTokens: d.TopProvider.MaxCompletionTokens,
			Source:          "openrouter models endpoint",
			Date:            date,
		}
		if m.MaxOutputTokens <= 0 || (m.ContextWindow > 0 && m.MaxOutputTokens > m.ContextWindow) {
			// Unlisted: the context bounds the output.
			m.MaxOutputTokens = m.ContextWindow
		}
		if m.MaxOutputTokens <= 0 {
			continue
		}
		_ = m.precompute() // prices beyond 8 decimals use the exact path
		l.models[strings.ToLower(d.ID)] = m
	}
	return l, nil
}

// OpenRouterPrices keeps the latest OpenRouter price list, refreshed in
// the background. The zero value holds no list. It is safe for concurrent
// use.
type OpenRouterPrices struct {
	list atomic.Pointer[OpenRouterList]

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// List returns the current list, nil when none was ever fetched.
func (p *OpenRouterPrices) List() *OpenRouterList {
	if p == nil {
		return nil
	}
	return p.list.Load()
}

// Set replaces the list.
func (p *OpenRouterPrices) Set(l *OpenRouterList) { p.list.Store(l) }

// FetchOpenRouter reads the price list from base ("https://openrouter.ai/api/v1")
// with client.
func FetchOpenRouter(ctx context.Context, client *http.Client, base, apiKey string) (*OpenRouterList, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("openrouter models: %w", err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openrouter models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("openrouter models: status %d", resp.StatusCode)
	}
	return ParseOpenRouter(io.LimitReader(resp.Body, 64<<20), time.Now())
}

// Refresh fetches the list now and then every interval until Stop,
// keeping the last good list when a fetch fails (each failure goes to
// onErr). The first fetch is synchronous.
func (p *OpenRouterPrices) Refresh(ctx context.Context, interval time.Duration, fetch func(context.Context) (*OpenRouterList, error), onErr func(error)) {
	get := func() {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		l, err := fetch(fctx)
		if err != nil {
			onErr(err)
			return
		}
		p.Set(l)
	}
	get()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				get()
			case <-p.stop:
				return
			}
		}
	}()
}

// Stop ends the background refresh.
func (p *OpenRouterPrices) Stop() error {
	if p.stop == nil {
		return nil
	}
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	return nil
}
