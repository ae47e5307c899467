package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/internal/outlimit"
	"github.com/gwlabs/gateway/internal/rawjson"
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

// The stages that make a vendor body from the caller's can do their part
// on one edit of it (rawjson.Editor): the caller's body is then scanned
// once (or not at all, given Inbound.Members) and the vendor body written
// once, whatever the stages set, instead of each stage scanning and
// copying the body again. A stage that cannot still gets the bytes.

// PassThroughEditor is implemented by providers whose PassThrough can
// edit (PassThroughEdit does to e what PassThrough does to the body).
type PassThroughEditor interface {
	PassThroughEdit(e *rawjson.Editor, model string, stream bool) (hideUsage bool, err error)
}

// ResponsesPassThroughEditor is PassThroughEditor for
// PassThroughResponses.
type ResponsesPassThroughEditor interface {
	PassThroughResponsesEdit(e *rawjson.Editor, model string) error
}

// CacheKeyEditor is CacheKeyer on an edit of the body.
type CacheKeyEditor interface {
	SetCacheKeyEdit(e *rawjson.Editor, key string) error
}

// PrepareEditor is implemented by an Optimizer whose Prepare can edit:
// applied says it added the directive to e.
type PrepareEditor interface {
	PrepareEdit(shape gw.Shape, e *rawjson.Editor, keyOff bool, h http.Header) (applied bool, err error)
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
		if pe, ok := p.(ResponsesPassThroughEditor); ok && x.callerObject() != nil {
			err = pe.PassThroughResponsesEdit(c.editCaller(x), c.Model)
		} else {
			c.body, err = p.(gw.ResponsesNative).PassThroughResponses(in.Body, c.Model)
		}
	case native:
		c.native = true
		if pe, ok := p.(PassThroughEditor); ok && x.callerObject() != nil {
			c.hideUsage, err = pe.PassThroughEdit(c.editCaller(x), c.Model, in.Stream)
		} else {
			c.body, c.hideUsage, err = p.PassThrough(in.Body, c.Model, in.Stream)
		}
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
			if e := c.edit(); e != nil {
				c.strippedTools = billable.StripToolsEdit(c.bodyShape, e, keep)
			} else {
				c.body, c.strippedTools = billable.StripTools(c.bodyShape, c.body, keep)
			}
		}
		// Features billed beyond tokens, read from the exact vendor body:
		// priced from the card, held for, and refused where the card
		// cannot price them for this model unless the operator allows
		// them.
		var uses []billable.Use
		obj := c.object()
		if obj != nil {
			uses = billable.FindIn(c.bodyShape, obj)
		}
		if err := billable.Refusal(uses, priced, g.cfg.AllowUnpriced, c.Vendor, c.Model); err != nil {
			return err
		}
		if obj != nil {
			c.plan = billable.PlanIn(c.bodyShape, obj, uses)
		} else {
			c.plan = billable.PlanFor(c.bodyShape, c.body, uses)
		}
	}
	c.flush()
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
		key := CacheKey(in.Principal.AccountID)
		if ce, ok := p.(CacheKeyEditor); ok && c.edit() != nil {
			err = ce.SetCacheKeyEdit(c.ed, key)
		} else {
			var b []byte
			b, err = ck.SetCacheKey(c.bytes(), key)
			c.setBody(b)
		}
		if err != nil {
			return err
		}
	}
	if g.cfg.Optimizer != nil {
		keyOff := in.Principal != nil && in.Principal.OptimizeOff
		if pm, ok := g.cfg.Optimizer.(MarkedPrepareEditor); ok && x.wantsCanary() && c.edit() != nil {
			c.optimized, err = pm.PrepareEditMarked(c.bodyShape, c.ed, keyOff, in.Header, x.canaryText())
		} else if pe, ok := g.cfg.Optimizer.(PrepareEditor); ok && c.edit() != nil {
			c.optimized, err = pe.PrepareEdit(c.bodyShape, c.ed, keyOff, in.Header)
		} else {
			var b []byte
			b, c.optimized, err = g.cfg.Optimizer.Prepare(c.bodyShape, c.bytes(), keyOff, in.Header)
			c.setBody(b)
		}
		if err != nil {
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
		if e := c.edit(); e != nil {
			if err := outlimit.SetEdit(c.bodyShape, c.Vendor, e, n); err != nil {
				c.ed = nil
				return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: err}
			}
			c.flush()
		} else {
			b, err := outlimit.Set(c.bodyShape, c.Vendor, c.body, n)
			if err != nil {
				return &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: err}
			}
			c.setBody(b)
		}
	} else {
		codec := c.provider.(gw.Codec)
		v := int(min(n, int64(1<<31-1)))
		in.Canonical.MaxTokens = &v
		in.Canonical.Model = c.Model
		b, err := codec.EncodeRequest(in.Canonical)
		if err != nil {
			return err
		}
		c.setBody(b)
		if err := x.decorate(c); err != nil {
			return err
		}
		c.flush()
	}
	c.imposed = n
	return nil
}

// callerObject is the caller's body with its top-level members: from
// Inbound.Members, else scanned once (and kept there for the request's
// later readers), and the messages' elements when Inbound.Messages has
// them. Nil: the body is not a JSON object (each stage then
// reads the bytes and answers as it would).
func (x *Exchange) callerObject() *rawjson.Object {
	if !x.objRead {
		x.objRead = true
		if x.in.Members != nil {
			x.obj = rawjson.ObjectFrom(x.in.Body, x.in.Members)
		} else if obj, err := rawjson.NewObject(x.in.Body); err == nil {
			x.obj, x.in.Members = obj, obj.Members()
		}
		if x.obj != nil && x.in.Messages != nil {
			// The stages that read the messages' elements (cache
			// breakpoints, the directive) get them from the parse while
			// the messages are not edited.
			x.obj.KnowElements("messages", x.in.Messages)
		}
	}
	return x.obj
}

// A candidate's vendor body is made in one of three states: bytes (body;
// obj its members when known), or an edit of them (ed) that no bytes are
// written for yet.

// editCaller starts c's vendor body as an edit of the caller's.
func (c *candidate) editCaller(x *Exchange) *rawjson.Editor {
	c.body, c.obj = x.in.Body, x.callerObject()
	c.ed = c.obj.Edit()
	return c.ed
}

// edit returns the edit of c's vendor body, begun (after a scan when its
// members are not known) if need be; nil when the body is not a JSON
// object.
func (c *candidate) edit() *rawjson.Editor {
	if c.ed != nil {
		return c.ed
	}
	if c.obj == nil {
		obj, err := rawjson.NewObject(c.body)
		if err != nil {
			return nil
		}
		c.obj = obj
	}
	c.ed = c.obj.Edit()
	return c.ed
}

// flush writes c's vendor body from its edit, once.
func (c *candidate) flush() {
	if c.ed != nil {
		c.obj = c.ed.Object()
		c.body, c.ed = c.obj.Bytes(), nil
	}
}

// bytes is c's vendor body, written.
func (c *candidate) bytes() []byte {
	c.flush()
	return c.body
}

// object is c's vendor body with its members (written, and scanned only
// when not known); nil when the body is not a JSON object.
func (c *candidate) object() *rawjson.Object {
	c.flush()
	if c.obj == nil {
		obj, err := rawjson.NewObject(c.body)
		if err != nil {
			return nil
		}
		c.obj = obj
	}
	return c.obj
}

// setBody makes b c's vendor body (members unknown).
func (c *candidate) setBody(b []byte) { c.body, c.obj, c.ed = b, nil, nil }
