package ratecard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
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
	// FromStore: the list is the copy the store kept from an earlier
	// run, not yet replaced by a fresh one.
	FromStore bool
	models    map[string]*Model
	raw       []byte // the endpoint's answer, as kept in the store
}

// Models returns the priced models, sorted by id.
func (l *OpenRouterList) Models() []*Model {
	if l == nil {
		return nil
	}
	out := make([]*Model, 0, len(l.models))
	for _, m := range l.models {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Model) int { return strings.Compare(a.ID, b.ID) })
	return out
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
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("parse openrouter models: %w", err)
	}
	var f openRouterModels
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("parse openrouter models: %w", err)
	}
	l := &OpenRouterList{Fetched: fetched, models: make(map[string]*Model, len(f.Data)), raw: raw}
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
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return nil, fmt.Errorf("openrouter models: %w", err)
	}
	if len(raw) > maxListBytes {
		return nil, fmt.Errorf("openrouter models: the answer is over %d bytes", maxListBytes)
	}
	return ParseOpenRouter(bytes.NewReader(raw), time.Now())
}

// maxListBytes bounds the models endpoint's answer.
const maxListBytes = 64 << 20

// ListStore keeps the last good price list between runs (the gateway's
// store): the models endpoint's answer as read, and when.
type ListStore interface {
	// Document returns the document kept under name; ok is false when
	// there is none.
	Document(ctx context.Context, name string) (body []byte, at time.Time, ok bool, err error)
	// SetDocument keeps body under name, replacing any earlier one.
	SetDocument(ctx context.Context, name string, body []byte, at time.Time) error
}

// OpenRouterDocument is the name the price list is kept under in a
// ListStore.
const OpenRouterDocument = "openrouter_price_list"

// RefreshOptions configure OpenRouterPrices.Refresh.
type RefreshOptions struct {
	// Fetch reads the list (FetchOpenRouter, bound to the vendor).
	Fetch func(context.Context) (*OpenRouterList, error)
	// Interval is the time between good reads (default 6h).
	Interval time.Duration
	// RetryMin and RetryMax bound the wait after a failed read: it
	// starts at RetryMin and doubles up to RetryMax (defaults 1s and
	// 30s), until a read succeeds.
	RetryMin, RetryMax time.Duration
	// Timeout bounds one read (default 10s).
	Timeout time.Duration
	// Store, when set, keeps each good list; the kept one serves from
	// the start until a fresh one is read.
	Store ListStore
	// StaleAfter is the age past which the list in use is reported to
	// OnStale, once per list (default 24h).
	StaleAfter time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnErr is told of each failed read (or store access); OnLoad of
	// each list put in use; OnStale of a list in use past StaleAfter.
	OnErr   func(error)
	OnLoad  func(*OpenRouterList)
	OnStale func(l *OpenRouterList, age time.Duration)
}

func (o *RefreshOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 6 * time.Hour
	}
	if o.RetryMin <= 0 {
		o.RetryMin = time.Second
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(30*time.Second, o.RetryMin)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OnErr == nil {
		o.OnErr = func(error) {}
	}
	if o.OnLoad == nil {
		o.OnLoad = func(*OpenRouterList) {}
	}
	if o.OnStale == nil {
		o.OnStale = func(*OpenRouterList, time.Duration) {}
	}
}

// Refresh puts the list in use and keeps it fresh until Stop: the copy
// kept in the store first (when there is one), then a read now; after a
// good read the next comes Interval later, after a failed one RetryMin
// later, doubling up to RetryMax, until a read succeeds. A failed read
// keeps the list in use. The store's copy and the first read are
// synchronous.
func (p *OpenRouterPrices) Refresh(ctx context.Context, o RefreshOptions) {
	o.defaults()
	if o.Store != nil {
		sctx, cancel := context.WithTimeout(ctx, o.Timeout)
		l, err := loadStored(sctx, o.Store)
		cancel()
		if err != nil {
			o.OnErr(err)
		} else if l != nil {
			p.Set(l)
			o.OnLoad(l)
		}
	}
	var warned *OpenRouterList
	get := func() bool {
		fctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		l, err := o.Fetch(fctx)
		if err == nil && l.Len() == 0 {
			// An empty answer would leave every model unpriced.
			err = errors.New("openrouter models: the list prices no model")
		}
		if err == nil {
			p.Set(l)
			o.OnLoad(l)
			if o.Store != nil && l.raw != nil {
				if err := o.Store.SetDocument(fctx, OpenRouterDocument, l.raw, l.Fetched); err != nil {
					o.OnErr(fmt.Errorf("keep the openrouter price list: %w", err))
				}
			}
		} else {
			o.OnErr(err)
		}
		if cur := p.List(); cur != nil && cur != warned {
			if age := o.Now().Sub(cur.Fetched); age > o.StaleAfter {
				warned = cur
				o.OnStale(cur, age)
			}
		}
		return err == nil
	}
	ok := get()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		retry := o.RetryMin
		for {
			wait := o.Interval
			if !ok {
				wait, retry = retry, min(2*retry, o.RetryMax)
			} else {
				retry = o.RetryMin
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				ok = get()
			case <-p.stop:
				t.Stop()
				return
			}
		}
	}()
}

// loadStored returns the list kept in st, nil when none is.
func loadStored(ctx context.Context, st ListStore) (*OpenRouterList, error) {
	body, at, ok, err := st.Document(ctx, OpenRouterDocument)
	if err != nil {
		return nil, fmt.Errorf("read the kept openrouter price list: %w", err)
	}
	if !ok {
		return nil, nil
	}
	l, err := ParseOpenRouter(bytes.NewReader(body), at)
	if err != nil {
		return nil, fmt.Errorf("the kept openrouter price list: %w", err)
	}
	l.FromStore = true
	return l, nil
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
