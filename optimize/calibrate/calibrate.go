// Package calibrate counts the optimizer's directive on vendors without
// a count endpoint, by sending it, and books each such call at its cost.
package calibrate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/optimize"
	openaishape "github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/shape/responses"
)

// NoteOptimizerCalibration marks the record of a request the gateway made
// to count the optimizer's directive on a vendor without a count
// endpoint: its cost is the operator's, charged to no account.
const NoteOptimizerCalibration = "optimizer_calibration"

// chatCounter counts a Chat Completions body's prompt tokens with the
// vendor's own tokenizer by sending it as a real request (a few output
// tokens at most) and reading usage.prompt_tokens: the count of a vendor
// that has no count endpoint. Each call is recorded at its vendor cost,
// charged to no account (the operator's).
type chatCounter struct {
	vendor string
	p      gw.Provider
	store  gw.Store
	biller Pricer
	logger *slog.Logger
	now    func() time.Time
}

// PaidCount says a count costs vendor requests (optimize.Paid): a model
// is counted only after a request of it succeeded.
func (c *chatCounter) PaidCount() bool { return true }

// CountTokens counts body's prompt tokens on model by sending it.
func (c *chatCounter) CountTokens(ctx context.Context, model string, body []byte) (int64, error) {
	start := c.now()
	rid := id.New("req_", start)
	call := &gw.Call{RequestID: rid, Model: model, Body: body, Received: start}
	endpoint := gw.ShapeC
	if rawjson.Get(body, "input") != nil {
		// A Responses body (OpenAI counts the directive in instructions).
		call.Endpoint, endpoint = gw.ShapeR, gw.ShapeR
	}
	up, err := c.p.Send(ctx, call)
	if err != nil {
		return 0, err
	}
	defer up.Body.Close()
	b, err := io.ReadAll(io.LimitReader(up.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	var u gw.Usage
	if endpoint == gw.ShapeR {
		u, err = responses.UsageFromBody(b)
	} else {
		u, err = openaishape.UsageFromBody(b)
	}
	if err != nil {
		return 0, err
	}
	if !u.Reported || u.Malformed || u.PromptTokens() <= 0 {
		return 0, fmt.Errorf("%s: the answer reported no prompt tokens", c.vendor)
	}
	c.book(ctx, rid, endpoint, model, u, start)
	return u.PromptTokens(), nil
}

// book records a calibration request at its vendor cost, charged to no
// account.
func (c *chatCounter) book(ctx context.Context, rid string, endpoint gw.Shape, model string, u gw.Usage, start time.Time) {
	r := &gw.Record{RequestID: rid, Endpoint: endpoint, Vendor: c.vendor, Model: model, Status: 200, Usage: u,
		Guard: "off", Note: NoteOptimizerCalibration, CreatedAt: c.now(), Latency: c.now().Sub(start)}
	if c.biller != nil {
		if q, err := c.biller.PriceAt(c.vendor, model, u, start); err == nil {
			r.Cost = q.Cost
		}
	}
	if c.store == nil {
		return
	}
	if err := c.store.Log(context.WithoutCancel(ctx), r); err != nil {
		c.logger.Warn("record the optimizer's calibration", "vendor", c.vendor, "model", model, "err", err)
	}
}

// Pricer prices a calibration request's usage (*billing.Biller is one).
type Pricer interface {
	PriceAt(vendor, model string, u gw.Usage, start time.Time) (gw.Quote, error)
}

// Counters returns the optimizer's counters: a vendor's count endpoint
// where it has one (Anthropic, Google), else a chatCounter for a Chat
// Completions vendor. Each calibration is recorded on store at its cost
// from biller (nil: unpriced).
func Counters(providers map[string]gw.Provider, store gw.Store, biller Pricer, logger *slog.Logger) map[string]optimize.Counter {
	out := map[string]optimize.Counter{}
	for v, p := range providers {
		if ct, ok := p.(optimize.Counter); ok {
			out[v] = ct
			continue
		}
		if p.Shape() == gw.ShapeC {
			out[v] = &chatCounter{vendor: v, p: p, store: store, biller: biller, logger: logger, now: time.Now}
		}
	}
	return out
}
