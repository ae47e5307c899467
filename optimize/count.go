package optimize

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gwlabs/gateway/internal/rawjson"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/tiktoken-go/tokenizer/codec"
	"golang.org/x/sync/singleflight"
)

// Counter is a vendor's free token-count endpoint (Anthropic
// count_tokens, Gemini countTokens): the prompt tokens of a request body
// in the vendor's shape, for model.
type Counter interface {
	CountTokens(ctx context.Context, model string, body []byte) (int64, error)
}

// Config configures an Optimizer. Zero fields take the defaults.
type Config struct {
	// Off turns the layer off for every request (GATEWAY_OPTIMIZE=off).
	Off bool
	// Counters holds the count endpoints by vendor ("anthropic",
	// "google").
	Counters map[string]Counter
	// Timeout bounds one count (default 5s); on failure the upper bound
	// applies to that request and the count is tried again later.
	Timeout time.Duration
	// TTL is how long a count is trusted before it is taken again
	// (default 24h), so a vendor's tokenizer change is picked up.
	TTL time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Optimizer decides whether the directive applies and knows its token
// cost per vendor and model. It is safe for concurrent use.
type Optimizer struct {
	cfg   Config
	o200k func() int64
	sf    singleflight.Group

	// mu protects counts and failed.
	mu     sync.Mutex
	counts map[string]counted   // by vendor, model and directive version
	failed map[string]time.Time // count calls not retried before then
}

type counted struct {
	n  int64
	at time.Time
}

// New returns an Optimizer.
func New(cfg Config) *Optimizer {
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.TTL == 0 {
		cfg.TTL = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Optimizer{
		cfg:    cfg,
		o200k:  sync.OnceValue(func() int64 { return OpenAITokens() }),
		counts: make(map[string]counted),
		failed: make(map[string]time.Time),
	}
}

// Enabled reports whether the layer runs for a request: not off globally,
// not off for the key, and not off by the request's header.
func (o *Optimizer) Enabled(keyOff bool, header string) bool {
	return o != nil && !o.cfg.Off && !keyOff && !RequestOff(header)
}

// Prepare returns body, a request in the vendor's shape, with the
// directive added (applied true), or unchanged when the layer is off for
// this request: globally, for the key (keyOff) or by the request's
// x-gateway-optimize header in h.
func (o *Optimizer) Prepare(shape gw.Shape, body []byte, keyOff bool, h http.Header) ([]byte, bool, error) {
	if !o.Enabled(keyOff, h.Get(Header)) || shape == gw.ShapeM && continuesThread(body) {
		return body, false, nil
	}
	out, err := Apply(shape, body)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// continuesThread reports whether a Messages body continues a message
// thread ("thread":{"type":"continue",...}): the vendor keeps the system
// prompt the thread was created with, directive included, and refuses a
// new one.
func continuesThread(body []byte) bool {
	ms, err := rawjson.Members(body)
	if err != nil {
		return false
	}
	m, ok := last(ms, "thread")
	if !ok {
		return false
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(body[m.ValStart:m.ValEnd], &t) == nil && t.Type == "continue"
}

// Describe returns the x-gateway-optimize response value and the record's
// note for a request the directive was (applied) or was not sent with.
func (o *Optimizer) Describe(applied bool) (header, note string) {
	if !applied {
		return HeaderValue(false), ""
	}
	return HeaderValue(true), Note()
}

// failureBackoff is how long a failed count is not retried.
const failureBackoff = time.Minute

// chatFraming is what one chat message adds besides its text in OpenAI's
// format: 3 tokens per message and 1 for the role.
const chatFraming = 4

// OpenAITokens returns the directive's tokens as one more chat message in
// OpenAI's o200k encoding.
func OpenAITokens() int64 {
	n, err := codec.NewO200kBase().Count(Text)
	if err != nil {
		return UpperBound()
	}
	return int64(n) + chatFraming
}

// UpperBound is the directive's token count where no exact count is
// available: a BPE token covers at least one byte, and a system segment's
// framing is well under 16 tokens.
func UpperBound() int64 { return int64(len(Text)) + 16 }

// Tokens returns the prompt tokens the directive adds for vendor and
// model: exact where the vendor's tokenizer or count endpoint allows,
// else UpperBound. A count endpoint is asked once per model (and again
// after TTL); concurrent requests share one call.
func (o *Optimizer) Tokens(ctx context.Context, vendor, model string) int64 {
	if n, ok := o.CachedTokens(vendor, model); ok {
		return n
	}
	c := o.cfg.Counters[vendor]
	key := countKey(vendor, model)
	o.mu.Lock()
	e, ok := o.counts[key]
	o.mu.Unlock()
	v, err, _ := o.sf.Do(key, func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cfg.Timeout)
		defer cancel()
		n, err := countWith(cctx, c, vendor, model)
		if err != nil {
			return int64(0), err
		}
		o.mu.Lock()
		o.counts[key] = counted{n: n, at: o.cfg.Now()}
		o.mu.Unlock()
		return n, nil
	})
	if err != nil {
		o.mu.Lock()
		o.failed[key] = o.cfg.Now().Add(failureBackoff)
		o.mu.Unlock()
		o.cfg.Logger.Warn("count optimizer tokens; using the upper bound", "vendor", vendor, "model", model, "err", err)
		if ok {
			return e.n // a stale count beats the bound
		}
		return UpperBound()
	}
	return v.(int64)
}

// CachedTokens is Tokens when it needs no vendor call: the OpenAI count,
// the bound for a vendor without a count endpoint, a count asked within
// TTL, or the last count (else the bound) while a failed count backs
// off. ok is false when Tokens would ask the vendor.
func (o *Optimizer) CachedTokens(vendor, model string) (n int64, ok bool) {
	if vendor == "openai" {
		return o.o200k(), true
	}
	if _, ok := o.cfg.Counters[vendor]; !ok {
		return UpperBound(), true
	}
	key := countKey(vendor, model)
	now := o.cfg.Now()
	o.mu.Lock()
	e, ok := o.counts[key]
	retry := o.failed[key]
	o.mu.Unlock()
	if ok && now.Sub(e.at) < o.cfg.TTL {
		return e.n, true
	}
	if now.Before(retry) {
		// A recent count failed: no request waits on the endpoint again
		// until the back-off passes.
		if ok {
			return e.n, true
		}
		return UpperBound(), true
	}
	return 0, false
}

// countKey keys a count by vendor, model and directive version.
func countKey(vendor, model string) string {
	return vendor + "\x00" + model + "\x00v" + strconv.Itoa(Version)
}

// countWith asks the vendor for the directive's tokens: the difference of
// a small request with and without it, with no system content and with
// some, taking the larger.
func countWith(ctx context.Context, c Counter, vendor, model string) (int64, error) {
	var best int64
	for _, sys := range []bool{false, true} {
		base, err := countBody(vendor, model, sys)
		if err != nil {
			return 0, err
		}
		with, err := Apply(shapeOf(vendor), base)
		if err != nil {
			return 0, err
		}
		a, err := c.CountTokens(ctx, model, base)
		if err != nil {
			return 0, fmt.Errorf("count without the directive: %w", err)
		}
		b, err := c.CountTokens(ctx, model, with)
		if err != nil {
			return 0, fmt.Errorf("count with the directive: %w", err)
		}
		if b-a <= 0 {
			return 0, fmt.Errorf("count: the directive added %d tokens", b-a)
		}
		best = max(best, b-a)
	}
	return best, nil
}

func shapeOf(vendor string) gw.Shape {
	switch vendor {
	case "anthropic":
		return gw.ShapeM
	case "google":
		return gw.ShapeG
	}
	return gw.ShapeC
}

// countBody is the small request counted with and without the directive,
// in the vendor's request shape (with or without system content).
func countBody(vendor, model string, system bool) ([]byte, error) {
	const sys = "You are a helpful assistant."
	switch shapeOf(vendor) {
	case gw.ShapeM:
		r := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "Hello"}}}
		if system {
			r["system"] = []any{map[string]any{"type": "text", "text": sys}}
		}
		return json.Marshal(r)
	case gw.ShapeG:
		r := map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Hello"}}}}}
		if system {
			r["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": sys}}}
		}
		return json.Marshal(r)
	}
	return nil, fmt.Errorf("count: %s has no count endpoint", vendor)
}
