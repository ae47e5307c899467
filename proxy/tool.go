package proxy

import (
	"context"
	"time"

	gw "github.com/gwlabs/gateway"
)

// EndpointMCP is the records' endpoint of a call made through /mcp (a
// tools/call, prompts/get or resources/read): Vendor is the operator's
// MCP server, Model the tool's (prompt's, resource's) own name.
const EndpointMCP gw.Shape = "mcp"

// BeginTool admits one tool call of in.Principal, the way Begin admits
// a chat request, with the steps that apply to a call priced per call:
// the guard's cool-down, then the key's tool-call rate limit (a bucket
// of its own beside its chat requests; rpm <= 0: none), then a hold of
// price on the balance (none when price is zero). in names the call:
// RequestID, Endpoint (EndpointMCP), Principal, Vendor (the server),
// Model (the tool), Received and Span. A refusal is recorded (rate
// limits and refusals as for chat requests) and returned: rate_limited
// with RetryAfter, insufficient_balance, overloaded when the limiter
// cannot answer. The Exchange's Finish records the call and settles the
// hold at price (a failure releases it).
func (g *Gateway) BeginTool(ctx context.Context, in Inbound, rpm int64, price gw.Money) (*Exchange, error) {
	x := &Exchange{g: g, in: in, tool: true, price: max(price, 0), limited: true, traceCtx: ctx}
	if err := g.admitted(in.Principal, g.cfg.Now()); err != nil {
		x.finishErr(ctx, err)
		return x, err
	}
	if g.cfg.Limiter != nil && rpm > 0 {
		d, err := g.cfg.Limiter.Allow(ctx, in.Principal.KeyID+":mcp", gw.Limit{RPM: rpm}, 0)
		x.Limit = d
		if err != nil && !d.Allowed {
			err = &gw.Error{Code: gw.CodeOverloaded, Message: "rate limits cannot be checked right now; retry", RetryAfter: time.Second, Err: err}
			x.finishErr(ctx, err)
			return x, err
		}
		if !d.Allowed {
			err := &gw.Error{Code: gw.CodeRateLimited, Message: "rate limit reached for this API key's tool calls; retry after the time in Retry-After", RetryAfter: max(d.RetryAfter, time.Second)}
			x.finishErr(ctx, err)
			return x, err
		}
	}
	if x.price > 0 {
		if err := x.tryHold(ctx, HoldPlan{Amount: x.price}); err != nil {
			x.finishErr(ctx, err)
			return x, err
		}
	}
	return x, nil
}

// RefuseTool records a tool call refused before BeginTool (a tool the
// caller's allow lists do not grant, a tool no server has): counted
// among the key's refusals, never in its rate-limit buckets.
func (g *Gateway) RefuseTool(ctx context.Context, in Inbound, err error) {
	x := &Exchange{g: g, in: in, tool: true, limited: true, traceCtx: ctx}
	x.finishErr(ctx, err)
}

// ScreenResult runs the guard over what a tool call brought back: text
// of a third party (the tool's server), where indirect prompt injection
// arrives. A flagged result is refused with request_blocked naming the
// stored incident; such a block never counts toward the caller's
// cool-down. The verdict goes into the call's record.
func (x *Exchange) ScreenResult(ctx context.Context, text []gw.Text) error {
	if len(text) == 0 {
		x.Guard = "pass"
		if x.g.cfg.Guard == nil {
			x.Guard = "off"
		}
		return nil
	}
	x.in.Text = text
	defer func() { x.in.Text = nil }()
	v, second, err := x.firstStage(ctx)
	v, blocked := x.judge(ctx, v, err)
	if !blocked && second != nil {
		v, blocked = x.secondStage(ctx, second)
	}
	if !blocked {
		return nil
	}
	v.ThirdParty = true
	return x.block(ctx, v)
}
