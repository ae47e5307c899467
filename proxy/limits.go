package proxy

import (
	"context"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Limits returns the rate limits in force for a caller: its key's own, or
// the configured defaults where the key has none.
func (g *Gateway) Limits(p *gw.Principal) gw.Limit { return g.limitFor(p) }

// AllowCountBytes charges a token count's n body bytes to the key's
// count budget (Config.CountBytesPerMinute, beside its counts' request
// bucket): counting costs the gateway CPU in proportion to the body
// (parse, guard, tokenizer) though it is free, so one key may have only
// so many bytes counted a minute. It returns rate_limited with
// Retry-After when the budget is spent.
func (g *Gateway) AllowCountBytes(ctx context.Context, p *gw.Principal, n int) error {
	if g.cfg.Limiter == nil || g.cfg.CountBytesPerMinute <= 0 || p == nil || n <= 0 {
		return nil
	}
	d, err := g.cfg.Limiter.Allow(ctx, p.KeyID+":count_bytes", gw.Limit{TPM: g.cfg.CountBytesPerMinute}, int64(n))
	if err != nil && !d.Allowed {
		return &gw.Error{Code: gw.CodeOverloaded, Message: "rate limits cannot be checked right now; retry", RetryAfter: time.Second, Err: err}
	}
	if !d.Allowed {
		return &gw.Error{Code: gw.CodeRateLimited, RetryAfter: max(d.RetryAfter, time.Second),
			Message: fmt.Sprintf("this API key's token counts used their %d bytes of bodies this minute; retry after the time in Retry-After", g.cfg.CountBytesPerMinute)}
	}
	return nil
}
