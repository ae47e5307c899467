package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// wireUsage is a C usage object with every vendor variant the gateway
// reads: OpenAI's prompt/completion details (cached_tokens and the newer
// cache_write_tokens), DeepSeek's prompt_cache_hit/miss_tokens and
// OpenRouter's cost. Counts are pointers so that "absent" and "0" differ.
type wireUsage struct {
	PromptTokens            *gw.Count          `json:"prompt_tokens,omitempty"`
	CompletionTokens        *gw.Count          `json:"completion_tokens,omitempty"`
	TotalTokens             *gw.Count          `json:"total_tokens,omitempty"`
	PromptTokensDetails     *wirePromptDetails `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *wireOutputDetails `json:"completion_tokens_details,omitempty"`
	PromptCacheHitTokens    *gw.Count          `json:"prompt_cache_hit_tokens,omitempty"`
	PromptCacheMissTokens   *gw.Count          `json:"prompt_cache_miss_tokens,omitempty"`
	// CachedTokens is Together's cache-hit count, a top-level member of
	// usage instead of prompt_tokens_details.cached_tokens.
	CachedTokens *gw.Count `json:"cached_tokens,omitempty"`
	// Cost is OpenRouter's USD cost, a JSON number (or, defensively, a
	// string holding one), kept as text so it parses exactly.
	Cost json.RawMessage `json:"cost,omitempty"`
}

type wirePromptDetails struct {
	CachedTokens     *gw.Count `json:"cached_tokens,omitempty"`
	CacheWriteTokens *gw.Count `json:"cache_write_tokens,omitempty"`
}

type wireOutputDetails struct {
	ReasoningTokens *gw.Count `json:"reasoning_tokens,omitempty"`
}

func val(p *gw.Count) int64 {
	if p == nil {
		return 0
	}
	return p.N
}

// malformed reports a usage object that cannot be read as counts: a
// count that is not a non-negative integer, or no prompt or completion
// count at all ("usage":{}).
func (w *wireUsage) malformed() bool {
	bad := func(c *gw.Count) bool { return c != nil && !c.Valid }
	if w.PromptTokens == nil && w.CompletionTokens == nil {
		return true
	}
	if bad(w.PromptTokens) || bad(w.CompletionTokens) || bad(w.TotalTokens) || bad(w.PromptCacheHitTokens) || bad(w.PromptCacheMissTokens) || bad(w.CachedTokens) {
		return true
	}
	if d := w.PromptTokensDetails; d != nil && (bad(d.CachedTokens) || bad(d.CacheWriteTokens)) {
		return true
	}
	return w.CompletionTokensDetails != nil && bad(w.CompletionTokensDetails.ReasoningTokens)
}

// normalise turns a C usage object into the disjoint gw.Usage buckets:
// prompt_tokens includes cached reads and cache writes, so the plain input
// is what is left after subtracting both (never negative).
func (w *wireUsage) normalise() (gw.Usage, error) {
	if w.malformed() {
		// Billed from the gateway's own count, as if unreported (the
		// cost, when valid, is still OpenRouter's word).
		u := gw.Usage{Malformed: true}
		w.readCost(&u)
		return u, nil
	}
	u := gw.Usage{Reported: true}
	prompt := val(w.PromptTokens)
	var cached, written int64
	if d := w.PromptTokensDetails; d != nil {
		cached = val(d.CachedTokens)
		written = val(d.CacheWriteTokens)
	}
	// DeepSeek reports its disk-cache hits beside prompt_tokens; when
	// both forms are present they agree, so the larger is taken.
	if hit := val(w.PromptCacheHitTokens); hit > cached {
		cached = hit
	}
	// Together reports them as usage.cached_tokens (also part of
	// prompt_tokens).
	if hit := val(w.CachedTokens); hit > cached {
		cached = hit
	}
	cached, written = clamp(cached), clamp(written)
	if prompt := clamp(prompt); cached+written > prompt {
		// The cache counts are parts of prompt_tokens: more is a vendor
		// error, billed no higher than the prompt.
		cached = min(cached, prompt)
		written = min(written, prompt-cached)
		u.Clamped = true
	}
	u.CacheReadTokens = cached
	u.CacheWrite5mTokens = written
	u.InputTokens = clamp(prompt - cached - written)
	u.OutputTokens = clamp(val(w.CompletionTokens))
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = clamp(val(d.ReasoningTokens))
	}
	w.readCost(&u)
	return u, nil
}

// readCost sets u's reported cost from OpenRouter's usage.cost. A cost
// that cannot be read as an amount ("abc", {}, 1e12) is not an error:
// the answer is priced from the price list (CostMalformed), never
// refused (ReportedCostUSD gw.CostUnreadable).
func (w *wireUsage) readCost(u *gw.Usage) {
	if len(w.Cost) == 0 || bytes.Equal(w.Cost, []byte("null")) {
		return
	}
	m, exact, err := parseCost(w.Cost)
	if err != nil {
		u.ReportedCostUSD = gw.CostUnreadable
		return
	}
	u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD = m, true, exact
}

func clamp(n int64) int64 {
	if n < 0 {
		return 0
	}
	return n
}

// parseCost parses a USD amount given as a JSON number or numeric string
// exactly (no float64 on the way) and rounds it once to gw.Money; exact
// is the amount as an exact decimal (big.Rat's form), for a charge rounded
// once from it.
func parseCost(raw json.RawMessage) (m gw.Money, exact string, err error) {
	s := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, "", fmt.Errorf("decode cost: %w", err)
		}
	}
	if len(s) > 64 {
		return 0, "", fmt.Errorf("decode cost: %d characters, not an amount", len(s))
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, "", fmt.Errorf("decode cost %q: not a decimal number", s)
	}
	// Guard against absurd values (and huge exponents) before converting.
	if r.Cmp(big.NewRat(1_000_000_000, 1)) > 0 || r.Cmp(big.NewRat(-1_000_000_000, 1)) < 0 {
		return 0, "", fmt.Errorf("decode cost %q: out of range", s)
	}
	return gw.RatToMoney(r), r.RatString(), nil
}

// DecodeUsage normalises one C `usage` object, in any vendor's variant,
// into gw.Usage (see the package doc for the bucket rules). A JSON null
// or empty input yields a zero Usage with Reported false. Malformed input
// is an *gw.Error with CodeUpstream.
func DecodeUsage(raw []byte) (gw.Usage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return gw.Usage{}, nil
	}
	var w wireUsage
	if err := json.Unmarshal(raw, &w); err != nil {
		return gw.Usage{}, upstreamErr("malformed usage", fmt.Errorf("decode usage: %w", err))
	}
	u, err := w.normalise()
	if err != nil {
		return gw.Usage{}, upstreamErr("malformed usage", err)
	}
	return u, nil
}

// usageBody is the part of a C response body (or chunk) that carries usage.
type usageBody struct {
	Usage *wireUsage `json:"usage"`
	// ServiceTier is the tier that served the request (priced by the
	// answer's word).
	ServiceTier gw.TierName `json:"service_tier"`
	XGroq       *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
}

// pick returns the usage object of the body: the top-level one, else
// Groq's x_groq.usage; nil when neither is present.
func (b *usageBody) pick() *wireUsage {
	if b.Usage != nil {
		return b.Usage
	}
	if b.XGroq != nil {
		return b.XGroq.Usage
	}
	return nil
}

// unmarshalUsageBody is json.Unmarshal(body, b) without decoding the
// rest of the answer (rawjson.DecodeMembers): decoding the whole answer
// was most of the cost of metering a relayed non-streaming answer.
func unmarshalUsageBody(body []byte, b *usageBody) error {
	ok, err := rawjson.DecodeMembers(body,
		rawjson.Field{Name: "usage", Into: &b.Usage},
		rawjson.Field{Name: "service_tier", Into: &b.ServiceTier},
		rawjson.Field{Name: "x_groq", Into: &b.XGroq})
	if !ok {
		return json.Unmarshal(body, b) // not an object: Unmarshal's answer
	}
	return err
}

// UsageFromBody returns the usage of a non-streaming C response body: its
// top-level `usage`, or Groq's `x_groq.usage` when that is the only one.
// A body without usage yields a zero Usage with Reported false; a body
// that is not a JSON object is an *gw.Error with CodeUpstream.
func UsageFromBody(body []byte) (gw.Usage, error) {
	var b usageBody
	if err := unmarshalUsageBody(body, &b); err != nil {
		return gw.Usage{}, upstreamErr("malformed response body", fmt.Errorf("decode usage body: %w", err))
	}
	w := b.pick()
	if w == nil {
		return gw.Usage{}, nil
	}
	u, err := w.normalise()
	if err != nil {
		return gw.Usage{}, upstreamErr("malformed usage", err)
	}
	if u.Reported {
		u.Hosted.ServiceTier = string(b.ServiceTier)
	}
	return u, nil
}

// encodeUsage renders canonical usage as a C usage object for a client:
// prompt_tokens counts every prompt bucket, the details say which part was
// a cache read or write, completion_tokens includes reasoning.
func encodeUsage(u gw.Usage) *clientUsage {
	cu := &clientUsage{
		PromptTokens:     u.PromptTokens(),
		CompletionTokens: u.OutputTokens,
		TotalTokens:      u.TotalTokens(),
		PromptTokensDetails: clientPromptDetails{
			CachedTokens:     u.CacheReadTokens,
			CacheWriteTokens: u.CacheWriteTokens(),
		},
		CompletionTokensDetails: clientOutputDetails{ReasoningTokens: u.ReasoningTokens},
	}
	if u.HasReportedCost {
		c := json.RawMessage(costString(u.ReportedCost))
		cu.Cost = c
	}
	return cu
}

// clientUsage is the usage object the gateway writes to C clients.
type clientUsage struct {
	PromptTokens            int64               `json:"prompt_tokens"`
	CompletionTokens        int64               `json:"completion_tokens"`
	TotalTokens             int64               `json:"total_tokens"`
	PromptTokensDetails     clientPromptDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails clientOutputDetails `json:"completion_tokens_details"`
	Cost                    json.RawMessage     `json:"cost,omitempty"`
}

type clientPromptDetails struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

type clientOutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// costString renders money as a plain USD decimal with trailing zeros
// removed ("0.00012", "0").
func costString(m gw.Money) string {
	s := m.USDString()
	s = trimZeros(s)
	return s
}

func trimZeros(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == '0' {
		i--
	}
	if i > 0 && s[i-1] == '.' {
		i--
	}
	return s[:i]
}
