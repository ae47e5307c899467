package proxy

import (
	"context"
	"net/http"

	gw "github.com/gwlabs/gateway"
)

// Tracer records a request's spans: the request's own span (the server
// starts it), and under it auth, guard, the vendor call and settle. The
// gateway wires OpenTelemetry in (package tracing); nil Config.Tracer
// turns tracing off at no cost: no span, no attribute is built.
type Tracer interface {
	// StartRequest begins a request's own span (kind server), a child of
	// the trace the caller's headers carry (W3C traceparent), if any.
	StartRequest(ctx context.Context, name string, h http.Header) (context.Context, Span)
	// Start begins a child of ctx's span; client marks a call out of
	// the gateway (the vendor call).
	Start(ctx context.Context, name string, client bool) (context.Context, Span)
}

// Span is one timed operation of a trace. Its methods are safe to call
// on a span that has ended (they do nothing).
type Span interface {
	SetName(name string)
	SetAttributes(attrs ...Attr)
	// Fail marks the span failed with the error's code (error.type).
	Fail(err error)
	End()
}

// Attr is a span attribute: Value is a string, int64, float64 or bool.
type Attr struct {
	Key   string
	Value any
}

// noSpan is the span of a gateway that does not trace.
type noSpan struct{}

func (noSpan) SetName(string)        {}
func (noSpan) SetAttributes(...Attr) {}
func (noSpan) Fail(error)            {}
func (noSpan) End()                  {}

// NoSpan is a Span that records nothing.
var NoSpan Span = noSpan{}

// span starts a child span when the gateway traces.
func (g *Gateway) span(ctx context.Context, name string, client bool) (context.Context, Span) {
	if g.cfg.Tracer == nil {
		return ctx, NoSpan
	}
	return g.cfg.Tracer.Start(ctx, name, client)
}

// Tracing reports whether the gateway records spans.
func (g *Gateway) Tracing() bool { return g.cfg.Tracer != nil }

// StartRequest begins a request's own span (NoSpan when the gateway
// does not trace).
func (g *Gateway) StartRequest(ctx context.Context, name string, h http.Header) (context.Context, Span) {
	if g.cfg.Tracer == nil {
		return ctx, NoSpan
	}
	return g.cfg.Tracer.StartRequest(ctx, name, h)
}

// StartSpan begins a child span of ctx's (NoSpan when the gateway does
// not trace), for the server's steps (auth).
func (g *Gateway) StartSpan(ctx context.Context, name string) (context.Context, Span) {
	return g.span(ctx, name, false)
}

// GenAI semantic-convention attribute names, and the gateway's own.
const (
	AttrOperation      = "gen_ai.operation.name"
	AttrSystem         = "gen_ai.system"
	AttrProvider       = "gen_ai.provider.name"
	AttrRequestModel   = "gen_ai.request.model"
	AttrResponseModel  = "gen_ai.response.model"
	AttrInputTokens    = "gen_ai.usage.input_tokens"
	AttrOutputTokens   = "gen_ai.usage.output_tokens"
	AttrRequestStream  = "gen_ai.request.stream"
	AttrRequestMaxTok  = "gen_ai.request.max_tokens"
	AttrErrorType      = "error.type"
	AttrCost           = "gateway.cost_usd"
	AttrCharge         = "gateway.charge_usd"
	AttrChargeCents    = "gateway.charge_cents"
	AttrGuard          = "gateway.guard.verdict"
	AttrAttempts       = "gateway.attempts"
	AttrRequestID      = "gateway.request_id"
	AttrAccountID      = "gateway.account_id"
	AttrKeyID          = "gateway.key_id"
	AttrCacheRead      = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheWrite     = "gen_ai.usage.cache_creation.input_tokens"
	AttrOptimizerToken = "gateway.optimizer.input_tokens"
	AttrStatus         = "http.response.status_code"
)

// Operation is the GenAI operation name of every request the gateway
// proxies: a chat (Messages, Chat Completions and Responses alike).
const Operation = "chat"

// vendorAttrs are the vendor call's request attributes.
func (x *Exchange) vendorAttrs() []Attr {
	return []Attr{
		{AttrOperation, Operation},
		{AttrProvider, x.in.Vendor},
		{AttrSystem, x.in.Vendor},
		{AttrRequestModel, x.in.Model},
		{AttrRequestStream, x.in.Stream},
	}
}

// usageAttrs are a record's usage, cost and outcome as attributes.
func usageAttrs(r *gw.Record) []Attr {
	u := r.Usage
	a := []Attr{
		{AttrResponseModel, r.Model},
		{AttrInputTokens, u.PromptTokens()},
		{AttrOutputTokens, u.OutputTokens},
	}
	if u.CacheReadTokens > 0 {
		a = append(a, Attr{AttrCacheRead, u.CacheReadTokens})
	}
	if w := u.CacheWriteTokens(); w > 0 {
		a = append(a, Attr{AttrCacheWrite, w})
	}
	if u.OptimizerTokens > 0 {
		a = append(a, Attr{AttrOptimizerToken, u.OptimizerTokens})
	}
	return a
}
