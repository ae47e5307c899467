package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/internal/outlimit"
)

// UnitPricer is implemented by Billers whose rate card prices units
// beyond tokens (ratecard unit names: service tiers, fast mode, hosted
// tools) per model; a request using a unit it cannot price for the model
// is refused unless the operator allows it.
type UnitPricer interface {
	UnitPriced(vendor, model, unit string) bool
}

// Priceable is implemented by Billers that explain why a model cannot be
// priced: the error (invalid_request) is the caller's answer.
type Priceable interface {
	Priceable(vendor, model string) error
}

// OutputCap is implemented by Billers that know a model's maximum
// output per answer (0: unknown).
type OutputCap interface {
	MaxOutputTokens(vendor, model string) int64
}

// Availability is implemented by providers that can tell before the call
// that it cannot be made (no credentials), so that no money is held for
// it: Unavailable returns the error Send would, or nil.
type Availability interface{ Unavailable() error }

// CacheKeyer is implemented by providers whose vendor routes prompt-cache
// hits by a key (OpenAI, Mistral and Fireworks prompt_cache_key):
// SetCacheKey returns the prepared body with key set, or unchanged when
// the caller set its own.
type CacheKeyer interface {
	SetCacheKey(body []byte, key string) ([]byte, error)
}

// CacheKey is the prompt-cache key of an account: a hash, never the
// account id itself, the same for all of the account's requests.
func CacheKey(accountID string) string {
	sum := sha256.Sum256([]byte("gateway prompt cache\x00" + accountID))
	return "gw-" + hex.EncodeToString(sum[:16])
}

// prepare checks that candidate c can take the request and makes its
// vendor body; multi says the request has fallbacks (a model whose
// context window cannot hold the prompt is then skipped).
func (x *Exchange) prepare(c *candidate, multi bool) error {
	g, in := x.g, &x.in
	p, ok := g.cfg.Providers[c.Vendor]
	if !ok {
		return gw.Errorf(gw.CodeInvalidRequest, "unknown vendor %q", c.Vendor)
	}
	if in.Principal != nil {
		if err := modelAllowed(in.Principal, c.Target); err != nil {
			return err
		}
	}
	c.provider = p
	if a, ok := p.(Availability); ok {
		if err := a.Unavailable(); err != nil {
			return err
		}
	}
	if pr, ok := g.cfg.Biller.(Priceable); ok {
		if err := pr.Priceable(c.Vendor, c.Model); err != nil {
			return err
		}
	} else if g.cfg.Biller != nil && !g.cfg.Biller.Known(c.Vendor, c.Model) {
		return gw.Errorf(gw.CodeInvalidRequest, "model %q has no price on the rate card; GET /v1/models lists the priced models", c.String())
	}
	if cc, ok := g.cfg.Biller.(ContextCap); ok && multi {
		prompt := int64((len(in.Body) + in.ExtraInputBytes) / 4)
		if w := cc.ContextWindow(c.Vendor, c.Model); w > 0 && prompt+in.MaxOutput > w {
			return &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf("context window too small (%d tokens for about %d of prompt and %d of output)", w, prompt, in.MaxOutput)}
		}
	}
	var err error
	switch native := gw.SpeaksNatively(p, in.Endpoint); {
	case native && in.Endpoint != p.Shape():
		// The vendor serves this endpoint's shape beside its own (OpenAI
		// Responses): the caller's bytes, model rewritten.
		c.native = true
		c.body, err = p.(gw.ResponsesNative).PassThroughResponses(in.Body, c.Model)
	case native:
		c.native = true
		c.body, c.hideUsage, err = p.PassThrough(in.Body, c.Model, in.Stream)
	default:
		codec, ok := p.(gw.Codec)
		if !ok || in.Canonical == nil {
			return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: fmt.Errorf("vendor %s cannot map from %s", c.Vendor, in.Endpoint)}
		}
		in.Canonical.Model = c.Model
		in.Canonical.Stream = in.Stream
		c.body, err = codec.EncodeRequest(in.Canonical)
	}
	if err != nil {
		return err
	}
	c.bodyShape = p.Shape()
	if c.native {
		c.bodyShape = in.Endpoint
	}
	if err := x.decorate(c); err != nil {
		return err
	}
	if g.cfg.Biller != nil {
		var priced func(unit string) bool
		if up, ok := g.cfg.Biller.(UnitPricer); ok {
			priced = func(unit string) bool { return up.UnitPriced(c.Vendor, c.Model, unit) }
		}
		if c.native && c.bodyShape == gw.ShapeR {
			// Responses callers (Codex on every turn) declare hosted tools
			// they can do without: one the card cannot price is left out
			// of the vendor request and named to the caller, as on the
			// mapped routes, rather than refused.
			keep := func(unit string) bool { return g.cfg.AllowUnpriced[unit] || (priced != nil && priced(unit)) }
			c.body, c.strippedTools = billable.StripTools(c.bodyShape, c.body, keep)
		}
		// Features billed beyond tokens, read from the exact vendor body:
		// priced from the card, held for, and refused where the card
		// cannot price them for this model unless the operator allows
		// them.
		uses := billable.Find(c.bodyShape, c.body)
		if err := billable.Refusal(uses, priced, g.cfg.AllowUnpriced, c.Vendor, c.Model); err != nil {
			return err
		}
		c.plan = billable.PlanFor(c.bodyShape, c.body, uses)
	}
	if oc, ok := g.cfg.Biller.(OutputCap); ok && in.MaxOutput > 0 {
		// Vendors refuse an output cap over the model's maximum; so does
		// the gateway, before it counts an estimate no window can hold.
		if m := oc.MaxOutputTokens(c.Vendor, c.Model); m > 0 && in.MaxOutput > m {
			return gw.Errorf(gw.CodeInvalidRequest, "the output cap (max_tokens) of %d is over the maximum of %d tokens that %s/%s can produce", in.MaxOutput, m, c.Vendor, c.Model)
		}
	}
	return nil
}

// skipReason is the short reason a candidate is passed over, for the
// record.
func skipReason(err error) string {
	e := gw.AsError(err)
	msg := e.Message
	switch {
	case strings.Contains(msg, "is not allowed for this API key"):
		return "not allowed for this API key"
	case strings.Contains(msg, "has no price on the rate card"):
		return "no price on the rate card"
	case e.Code == gw.CodeVendorUnavailable:
		return "vendor not configured"
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// decorate adds to a freshly encoded vendor body the account's prompt-cache
// key (where the vendor takes one) and the optimizer's directive (unless
// it is off for this request).
func (x *Exchange) decorate(c *candidate) error {
	g, in, p := x.g, &x.in, c.provider
	var err error
	if ck, ok := p.(CacheKeyer); ok && in.Principal != nil {
		if c.body, err = ck.SetCacheKey(c.body, CacheKey(in.Principal.AccountID)); err != nil {
			return err
		}
	}
	if g.cfg.Optimizer != nil {
		keyOff := in.Principal != nil && in.Principal.OptimizeOff
		if c.body, c.optimized, err = g.cfg.Optimizer.Prepare(c.bodyShape, c.body, keyOff, in.Header); err != nil {
			return err
		}
	}
	return nil
}

// impose sets candidate c's output limit to n tokens. A mapped body is
// encoded again, so it gets its cache key and directive again.
func (x *Exchange) impose(c *candidate, n int64) error {
	in := &x.in
	if c.native {
		b, err := outlimit.Set(c.bodyShape, c.Vendor, c.body, n)
		if err != nil {
			return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: err}
		}
		c.body = b
	} else {
		codec := c.provider.(gw.Codec)
		v := int(min(n, int64(1<<31-1)))
		in.Canonical.MaxTokens = &v
		in.Canonical.Model = c.Model
		b, err := codec.EncodeRequest(in.Canonical)
		if err != nil {
			return err
		}
		c.body = b
		if err := x.decorate(c); err != nil {
			return err
		}
	}
	c.imposed = n
	return nil
}
