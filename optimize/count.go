package optimize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// Counter is a vendor's own count of the prompt tokens of a request body
// in the vendor's shape, for model: its free token-count endpoint
// (Anthropic count_tokens, Gemini countTokens) or, for a vendor without
// one, a minimal request whose usage says it.
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
	// Store, when set, keeps each count between runs (the gateway's
	// store): a restarted gateway reads a count taken within TTL
	// instead of asking the vendor again, so a vendor counted by real
	// requests (calibrate) is not paid for twice in a day.
	Store CountStore
	// Canonical, when set, maps a model to the id its count is kept
	// under (the rate card's, after aliases and the vendor's case
	// rules); ok false for a model off the rate card, which is never
	// counted (the directive's upper bound applies).
	Canonical func(vendor, model string) (id string, ok bool)
	// CountsPerDay caps the models counted per vendor and UTC day,
	// across all tenants (default DefaultCountsPerDay; negative: no
	// cap). Past it the directive's upper bound applies.
	CountsPerDay int
}

// CountStore keeps named documents between runs (the gateway's store:
// the documents table).
type CountStore interface {
	Document(ctx context.Context, name string) (body []byte, at time.Time, ok bool, err error)
	SetDocument(ctx context.Context, name string, body []byte, at time.Time) error
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
	daily  map[string]dayCount  // counts taken per vendor today
	served map[string]bool      // models a request of which succeeded
}

// counted is one model's count (see placements).
type counted struct {
	n  placements
	at time.Time
}

// placements are the directive's tokens by where it went: in the
// vendor's own shape where the caller sent no system content (0) and
// where it did (1), which differ where the directive then brings a
// system member of its own (M, G); in a native Responses body (openai/)
// as the whole instructions (2) and after the caller's (3).
type placements [4]int64

func same(n int64) placements { return placements{n, n, n, n} }

func (p placements) min() int64 { return min(p[0], p[1], p[2], p[3]) }

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
		daily:  make(map[string]dayCount),
		served: make(map[string]bool),
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
	if !o.Enabled(keyOff, h.Get(Header)) || shape == gw.ShapeM && continuesThread(rawjson.Get(body, "thread")) {
		return body, false, nil
	}
	out, err := Apply(shape, body)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// PrepareEdit is Prepare on an edit of the body: applied says the
// directive's edits were added to e.
func (o *Optimizer) PrepareEdit(shape gw.Shape, e *rawjson.Editor, keyOff bool, h http.Header) (bool, error) {
	if !o.Enabled(keyOff, h.Get(Header)) || shape == gw.ShapeM && continuesThread(e.Value("thread")) {
		return false, nil
	}
	if err := ApplyEdit(shape, e); err != nil {
		return false, err
	}
	return true, nil
}

// continuesThread reports whether a Messages body's thread member (raw,
// nil: none) continues a message thread ("thread":{"type":"continue",
// ...}): the vendor keeps the system prompt the thread was created with,
// directive included, and refuses a new one.
func continuesThread(thread []byte) bool {
	if thread == nil {
		return false
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(thread, &t) == nil && t.Type == "continue"
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

// UpperBound is the most tokens the directive can be: a BPE token covers
// at least one byte, and a system segment's framing is well under 16
// tokens. It is never taken off a customer's prompt (see Floor).
func UpperBound() int64 { return int64(len(Text)) + 16 }

// Floor is the directive's token count where the vendor's own count is
// not known yet (a count that failed, a vendor with no way to count):
// half of its o200k count. Every vendor's BPE vocabulary (o200k, Llama 3,
// Mistral's Tekken, DeepSeek, Qwen, Kimi, GLM, Claude, Gemini) spends at
// least that many tokens on its English text, so the part taken off the
// customer's prompt is never more than the directive's real size; the
// customer pays for the rest until the count arrives.
func Floor() int64 { return (OpenAITokens() - chatFraming) / 2 }

// fallback is the count used while the vendor's own is unknown: the o200k
// count on openai (OpenAI's own tokenizer) plus one, else UpperBound, so
// that the customer never pays for the directive (issue 46: the layer's
// tokens are not billed); the operator pays for the difference until the
// count arrives.
func (o *Optimizer) fallback(vendor string) int64 {
	if vendor == "openai" {
		return o.o200k() + 1
	}
	return UpperBound()
}

// Tokens returns the prompt tokens the directive adds for vendor and
// model, by the vendor's own count: its count endpoint (Anthropic,
// Google) or, for the others, two minimal requests with and without the
// directive (Config.Counters), less one token (see countWith). A model is
// counted once (and again after TTL); concurrent requests share one
// count. Until a count succeeds the fallback applies (o200k on openai,
// else Floor). Where the count depends on the caller's system content,
// Tokens is the smaller; TokensIn knows the body.
func (o *Optimizer) Tokens(ctx context.Context, vendor, model string) int64 {
	return o.tokens(ctx, vendor, model).min()
}

// TokensIn is Tokens for body, the vendor request the directive was put
// in: the count of its placement (a system member of its own, or one
// more block after the caller's).
func (o *Optimizer) TokensIn(ctx context.Context, vendor, model string, body []byte) int64 {
	return o.tokens(ctx, vendor, model)[placement(vendor, bodyGetter(body))]
}

// TokensInObject is TokensIn for a body whose members are known.
func (o *Optimizer) TokensInObject(ctx context.Context, vendor, model string, body *rawjson.Object) int64 {
	return o.tokens(ctx, vendor, model)[placement(vendor, body.Get)]
}

// CachedTokens is Tokens when it needs no vendor call: the fallback for
// a vendor without a counter, a count taken within TTL, or the last
// count (else the fallback) while a failed count backs off. ok is false
// when Tokens would ask the vendor.
func (o *Optimizer) CachedTokens(vendor, model string) (int64, bool) {
	n, ok := o.cached(vendor, model)
	return n.min(), ok
}

// CachedTokensIn is CachedTokens for body (see TokensIn).
func (o *Optimizer) CachedTokensIn(vendor, model string, body []byte) (int64, bool) {
	n, ok := o.cached(vendor, model)
	return n[placement(vendor, bodyGetter(body))], ok
}

// CachedTokensInObject is CachedTokensIn for a body whose members are
// known.
func (o *Optimizer) CachedTokensInObject(vendor, model string, body *rawjson.Object) (int64, bool) {
	n, ok := o.cached(vendor, model)
	return n[placement(vendor, body.Get)], ok
}

// bodyGetter looks body's members up after one scan (nil for every key
// of a body that is not an object, as rawjson.Get gives).
func bodyGetter(body []byte) func(key string) []byte {
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return func(string) []byte { return nil }
	}
	return obj.Get
}

func (o *Optimizer) tokens(ctx context.Context, vendor, model string) placements {
	if n, ok := o.cached(vendor, model); ok {
		return n
	}
	model, _ = o.canonical(vendor, model) // cached said it is on the card
	c := o.cfg.Counters[vendor]
	key := countKey(vendor, model)
	o.mu.Lock()
	e, ok := o.counts[key]
	o.mu.Unlock()
	v, err, _ := o.sf.Do(key, func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cfg.Timeout)
		defer cancel()
		if k, ok := o.loadCount(cctx, vendor, model); ok {
			o.mu.Lock()
			o.counts[key] = k
			o.mu.Unlock()
			return k.n, nil
		}
		if o.unserved(vendor, model) {
			return nil, errUnserved
		}
		if err := o.admitCount(vendor); err != nil {
			return nil, err
		}
		n, err := countWith(cctx, c, vendor, model)
		if err != nil {
			return placements{}, err
		}
		k := counted{n: n, at: o.cfg.Now()}
		o.mu.Lock()
		o.counts[key] = k
		o.mu.Unlock()
		o.saveCount(cctx, vendor, model, k)
		return n, nil
	})
	if err != nil {
		o.mu.Lock()
		o.failed[key] = o.cfg.Now().Add(failureBackoff)
		o.mu.Unlock()
		if errors.Is(err, errUnserved) {
			// Counted once a request of the model succeeded
			// (Succeeded lifts the back-off): the upper bound until
			// then.
			return same(o.fallback(vendor))
		}
		o.cfg.Logger.Warn("count optimizer tokens; using the fallback", "vendor", vendor, "model", model, "err", err)
		if ok {
			return e.n // a stale count beats the fallback
		}
		return same(o.fallback(vendor))
	}
	return v.(placements)
}

func (o *Optimizer) cached(vendor, model string) (placements, bool) {
	f := same(o.fallback(vendor))
	if _, ok := o.cfg.Counters[vendor]; !ok {
		return f, true
	}
	model, ok := o.canonical(vendor, model)
	if !ok {
		return f, true
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
		// A recent count failed: no request waits on the vendor again
		// until the back-off passes.
		if ok {
			return e.n, true
		}
		return f, true
	}
	return placements{}, false
}

// placement says where the directive went in body (its members looked
// up by get), a vendor request that
// holds it (see placements): after caller system content, or in a system
// member of its own (M's system, G's systemInstruction with the
// directive alone); on C one more system message either way (0); in a
// native Responses body (openai/, "input") the whole instructions or
// after the caller's.
func placement(vendor string, get func(key string) []byte) int {
	var parts []byte
	switch shapeOf(vendor) {
	case gw.ShapeM:
		parts = get("system")
	case gw.ShapeG:
		parts = rawjson.Get(get("systemInstruction"), "parts")
	default:
		if vendor != "openai" || get("input") == nil {
			return 0
		}
		var instr string
		if json.Unmarshal(get("instructions"), &instr) == nil && len(instr) > len(Text) {
			return 3
		}
		return 2
	}
	if els, err := rawjson.Elements(parts); err == nil && len(els) > 1 {
		return 1
	}
	return 0
}

// countDocument is the name a count is kept under in Config.Store, by
// vendor, model, directive version and the directive's own text (a hash
// of it), so a changed directive is never priced by an old count.
func countDocument(vendor, model string) string {
	return "optimizer_count/v" + strconv.Itoa(Version) + "-" + textHash() + "/" + vendor + "/" + model
}

// textHash is the first 8 bytes of the directive's SHA-256, in hex.
var textHash = sync.OnceValue(func() string {
	h := sha256.Sum256([]byte(Text))
	return hex.EncodeToString(h[:8])
})

// loadCount returns the count Config.Store keeps for vendor's model when
// it was taken within TTL (by this process or an earlier one, or another
// instance on the same store).
func (o *Optimizer) loadCount(ctx context.Context, vendor, model string) (counted, bool) {
	if o.cfg.Store == nil {
		return counted{}, false
	}
	body, at, ok, err := o.cfg.Store.Document(ctx, countDocument(vendor, model))
	if err != nil {
		o.cfg.Logger.Warn("read the kept optimizer count", "vendor", vendor, "model", model, "err", err)
		return counted{}, false
	}
	var n placements
	if !ok || json.Unmarshal(body, &n) != nil || n.min() <= 0 || o.cfg.Now().Sub(at) >= o.cfg.TTL || at.After(o.cfg.Now()) {
		return counted{}, false
	}
	return counted{n: n, at: at}, true
}

// saveCount keeps a count taken now in Config.Store.
func (o *Optimizer) saveCount(ctx context.Context, vendor, model string, k counted) {
	if o.cfg.Store == nil {
		return
	}
	body, _ := json.Marshal(k.n)
	if err := o.cfg.Store.SetDocument(ctx, countDocument(vendor, model), body, k.at); err != nil {
		o.cfg.Logger.Warn("keep the optimizer count", "vendor", vendor, "model", model, "err", err)
	}
}

// countKey keys a count by vendor, model and directive version.
func countKey(vendor, model string) string {
	return vendor + "\x00" + model + "\x00v" + strconv.Itoa(Version)
}

// countWith asks the vendor for the directive's tokens: the difference of
// a small request with and without it, plus one token: where the
// directive meets the caller's content a count may round either way by
// one (a tokenizer's merges at the boundary, a per-byte count's
// rounding), and the count must never fall below the directive's real
// size (the customer never pays for it; the operator pays the token).
// Where its place depends on the caller's system content (a system
// member of its own on M and G, the instructions of a Responses body)
// both placements are counted; on C it is one more system message either
// way: one pair of requests. OpenAI, which also serves Responses bodies
// as they are, is counted in both shapes.
func countWith(ctx context.Context, c Counter, vendor, model string) (placements, error) {
	var n placements
	pair := func(shape gw.Shape, sys bool) (int64, error) {
		base, err := countBody(vendor, model, shape, sys)
		if err != nil {
			return 0, err
		}
		with, err := Apply(shape, base)
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
		if b-a <= 0 || b-a > UpperBound() {
			return 0, fmt.Errorf("count: the directive added %d tokens", b-a)
		}
		return min(b-a+1, UpperBound()), nil
	}
	shape := shapeOf(vendor)
	var err error
	if n[0], err = pair(shape, false); err != nil {
		return n, err
	}
	n[1] = n[0]
	if shape != gw.ShapeC {
		if n[1], err = pair(shape, true); err != nil {
			return n, err
		}
	}
	n[2], n[3] = n[0], n[1]
	if vendor == "openai" {
		// A vendor that serves no Responses bodies keeps the C counts.
		r0, err0 := pair(gw.ShapeR, false)
		r1, err1 := pair(gw.ShapeR, true)
		if err0 == nil && err1 == nil {
			n[2], n[3] = r0, r1
		}
	}
	return n, nil
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
// in shape (with or without system content). The C and R requests are
// real requests (a vendor without a count endpoint is asked for a few
// output tokens): their usage is the count.
func countBody(vendor, model string, shape gw.Shape, system bool) ([]byte, error) {
	const sys = "You are a helpful assistant."
	switch shape {
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
	case gw.ShapeR:
		r := map[string]any{"model": model, "input": "Hello", "max_output_tokens": 16, "store": false}
		if system {
			r["instructions"] = sys
		}
		return json.Marshal(r)
	}
	// OpenAI's newer models refuse max_tokens; the others know only it.
	limit := "max_tokens"
	if vendor == "openai" {
		limit = "max_completion_tokens"
	}
	return json.Marshal(map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "Hello"}}, limit: 16})
}
