package proxy

import (
	"context"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Optimizer is the optimization layer (package optimize). Prepare adds its
// directive to a prepared vendor body of the given shape, unless the layer
// is off for this request (globally, for the key, or by the caller's
// headers), and says whether it did. Tokens counts the directive's prompt
// tokens for a vendor's model (never less than it adds). Describe gives
// the x-gateway-optimize response value and the record's note.
type Optimizer interface {
	Prepare(shape gw.Shape, body []byte, keyOff bool, h http.Header) (out []byte, applied bool, err error)
	Tokens(ctx context.Context, vendor, model string) int64
	Describe(applied bool) (header, note string)
}

// CachedCounter is implemented by an Optimizer that can give the
// directive's token count at once when it needs no vendor call: the count
// then needs no goroutine beside the vendor call.
type CachedCounter interface {
	CachedTokens(vendor, model string) (n int64, ok bool)
}

// PlacedCounter is implemented by an Optimizer whose count depends on
// where the directive went in the vendor body (a system member of its
// own, or one more block after the caller's): the counts of the body
// sent, given at once when cached (ok) or asked of the vendor.
type PlacedCounter interface {
	CachedTokensIn(vendor, model string, body []byte) (n int64, ok bool)
	TokensIn(ctx context.Context, vendor, model string, body []byte) int64
}

// ObjectPlacedCounter is PlacedCounter for a body whose members are
// known.
type ObjectPlacedCounter interface {
	CachedTokensInObject(vendor, model string, body *rawjson.Object) (n int64, ok bool)
	TokensInObject(ctx context.Context, vendor, model string, body *rawjson.Object) int64
}

// cachedTokens is the optimizer's count for the request when it needs no
// vendor call: by the body sent when it holds the directive.
func (x *Exchange) cachedTokens(vendor, model string) (int64, bool) {
	if oc, ok := x.g.cfg.Optimizer.(ObjectPlacedCounter); ok && x.Optimized && x.bodyObj != nil {
		return oc.CachedTokensInObject(vendor, model, x.bodyObj)
	}
	if pc, ok := x.g.cfg.Optimizer.(PlacedCounter); ok && x.Optimized {
		return pc.CachedTokensIn(vendor, model, x.Body)
	}
	if cc, ok := x.g.cfg.Optimizer.(CachedCounter); ok {
		return cc.CachedTokens(vendor, model)
	}
	return 0, false
}

// tokensFunc is the optimizer's count for the request (see
// cachedTokens), read when called; the body is taken now, so that the
// count may run beside the vendor call.
// The count's vendor calls (a calibration, when the model has none
// yet) carry the caller's account, as every call made on its behalf.
func (x *Exchange) tokensFunc(vendor, model string) func(context.Context) int64 {
	acct := ""
	if x.in.Principal != nil {
		acct = x.in.Principal.AccountID
	}
	scoped := func(ctx context.Context) context.Context {
		if s := gw.CallScopeFrom(ctx); s.Account == "" && acct != "" {
			s.Account = acct
			return gw.WithCallScope(ctx, s)
		}
		return ctx
	}
	if oc, ok := x.g.cfg.Optimizer.(ObjectPlacedCounter); ok && x.Optimized && x.bodyObj != nil {
		obj := x.bodyObj
		return func(ctx context.Context) int64 { return oc.TokensInObject(scoped(ctx), vendor, model, obj) }
	}
	if pc, ok := x.g.cfg.Optimizer.(PlacedCounter); ok && x.Optimized {
		body := x.Body
		return func(ctx context.Context) int64 { return pc.TokensIn(scoped(ctx), vendor, model, body) }
	}
	o := x.g.cfg.Optimizer
	return func(ctx context.Context) int64 { return o.Tokens(scoped(ctx), vendor, model) }
}
