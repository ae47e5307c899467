package proxy

import (
	"context"

	gw "github.com/gwlabs/gateway"
)

// EndpointEmbeddings is the records' endpoint of an embeddings request,
// in either shape (POST /v1/embeddings, Gemini's :embedContent and
// :batchEmbedContents).
const EndpointEmbeddings gw.Shape = "embeddings"

// GuardEmbedding is the Guard verdict of an embeddings request: its
// inputs are data to be turned into vectors, not instructions any model
// follows, and there is no system prompt an answer could leak, so the
// extraction guard does not score them (docs/GUARD.md, "Embeddings").
// The size and rate bounds apply as to every request.
const GuardEmbedding = "not_scored:embedding"

// BeginEmbed admits an embeddings request of in.Principal for
// in.Vendor/in.Model, the way Begin admits a chat request, with the steps
// that apply to a request priced per input token: the key's model allow
// list, the guard's cool-down and block rate, the key's rate limits (one
// request, tokens toward its TPM), then a hold of tokens at the model's
// price (x 1.09; an OpenRouter model off its price list holds what its
// chat requests hold), on the balance, the budgets and the run the
// request names (in.Run). tokens is the gateway's own count of the
// inputs; bound is the most input tokens a vendor may bill (more is
// clamped and noted). A refusal is recorded and returned. The
// Exchange's Finish records the request with Endpoint
// EndpointEmbeddings and settles the hold at the reported (or counted)
// usage.
func (g *Gateway) BeginEmbed(ctx context.Context, in Inbound, tokens, bound int64) (*Exchange, error) {
	in.Endpoint = EndpointEmbeddings
	x := &Exchange{g: g, in: in, embed: true, embedBound: max(bound, tokens), estTokens: tokens, traceCtx: ctx, Guard: GuardEmbedding}
	fail := func(err error) (*Exchange, error) {
		x.finishErr(ctx, err)
		return x, err
	}
	if err := modelAllowed(in.Principal, Target{in.Vendor, in.Model}); err != nil {
		return fail(err)
	}
	if err := g.admitted(in.Principal, g.cfg.Now()); err != nil {
		return fail(err)
	}
	if err := x.allowLimits(ctx); err != nil {
		return fail(err)
	}
	if g.cfg.Biller == nil {
		return x, nil
	}
	q, err := g.cfg.Biller.PriceAt(in.Vendor, in.Model, gw.Usage{InputTokens: tokens, Reported: true}, in.Received)
	amount := q.Charge
	if err != nil {
		p, herr := g.cfg.Biller.Hold(HoldRequest{Vendor: in.Vendor, Model: in.Model, BodyBytes: int(min(bound, 1<<40)) * holdBytesPerToken, MaxOutput: 1, CallerLimit: true, Available: -1})
		if herr != nil {
			return fail(holdErr(herr))
		}
		amount = p.Amount
	}
	if err := x.tryHold(ctx, HoldPlan{Amount: amount}); err != nil {
		return fail(err)
	}
	return x, nil
}

// embedUsage bounds an embeddings request's usage: input tokens at most
// embedBound (clamped, noted), nothing else billed.
func (x *Exchange) embedUsage(u gw.Usage) bounded {
	b := bounded{priced: u, recorded: u}
	p := gw.Usage{InputTokens: u.InputTokens, Reported: u.Reported, ReportedCost: u.ReportedCost, HasReportedCost: u.HasReportedCost, ReportedCostUSD: u.ReportedCostUSD}
	if x.embedBound > 0 && p.InputTokens > x.embedBound {
		p.InputTokens = x.embedBound
		b.clamped = true
	}
	b.priced = p
	b.recorded = p
	return b
}
