package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/secondstage"
)

// GuardSecondConfig configures the guard's second stage for the grey
// band.
type GuardSecondConfig struct {
	// Target is GATEWAY_GUARD_SECOND: empty (no second stage: the grey
	// band is allowed and logged "grey"), an http:// or https:// URL (a
	// scorer, see secondstage.HTTP), model:<prefixed model id> (a model
	// served through the gateway's own provider, asked for a one-word
	// verdict), or classifier:<prefixed model id> (a classifier model
	// served the same way that answers with a score, such as
	// classifier:groq/meta-llama/llama-prompt-guard-2-86m).
	Target    string
	Token     string        // GATEWAY_GUARD_SECOND_TOKEN: bearer token for the URL
	Prompt    string        // GATEWAY_GUARD_SECOND_PROMPT: the model's instruction (default secondstage.DefaultPrompt)
	Threshold float64       // GATEWAY_GUARD_SECOND_THRESHOLD: a score at or above it blocks (default 0.5)
	Timeout   time.Duration // GATEWAY_GUARD_SECOND_TIMEOUT: its time budget (default 1s); past it, GATEWAY_GUARD_FAIL applies
}

// operatorAccount books the second stage's vendor cost: records of this
// account carry the cost and no charge, and no key spends from it.
const operatorAccount = "gateway-operator"

func (c *GuardSecondConfig) read(getenv func(string) string) []string {
	var errs []string
	c.Target = strings.TrimSpace(getenv("GATEWAY_GUARD_SECOND"))
	c.Token = getenv("GATEWAY_GUARD_SECOND_TOKEN")
	c.Prompt = getenv("GATEWAY_GUARD_SECOND_PROMPT")
	c.Threshold, c.Timeout = 0.5, time.Second
	if v := getenv("GATEWAY_GUARD_SECOND_THRESHOLD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			errs = append(errs, "GATEWAY_GUARD_SECOND_THRESHOLD must be a number in (0, 1]")
		}
		c.Threshold = f
	}
	if v := getenv("GATEWAY_GUARD_SECOND_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, "GATEWAY_GUARD_SECOND_TIMEOUT must be a positive duration such as 800ms")
		}
		c.Timeout = d
	}
	switch {
	case c.Target == "", strings.HasPrefix(c.Target, "http://"), strings.HasPrefix(c.Target, "https://"):
	case strings.HasPrefix(c.Target, "model:"), strings.HasPrefix(c.Target, "classifier:"):
		_, id, _ := strings.Cut(c.Target, ":")
		if _, err := route.Parse(id); err != nil {
			errs = append(errs, "GATEWAY_GUARD_SECOND: "+gw.AsError(err).Message)
		}
	default:
		errs = append(errs, "GATEWAY_GUARD_SECOND must be an http(s):// URL, model:<vendor>/<model> or classifier:<vendor>/<model>")
	}
	return errs
}

// newSecondStage builds the configured second stage, nil when none.
func newSecondStage(c Config, providers map[string]gw.Provider, biller *billing.Biller, st gw.Store, logger *slog.Logger) (*secondStage, error) {
	sc := c.GuardSecond
	if sc.Target == "" {
		return nil, nil
	}
	if sc.Threshold == 0 {
		sc.Threshold = 0.5
	}
	if sc.Timeout == 0 {
		sc.Timeout = time.Second
	}
	s := &secondStage{threshold: sc.Threshold, budget: sc.Timeout}
	kind, id, _ := strings.Cut(sc.Target, ":")
	if kind != "model" && kind != "classifier" {
		s.c = &secondstage.HTTP{URL: sc.Target, Token: sc.Token, Client: &http.Client{}}
		return s, nil
	}
	t, err := route.Parse(id)
	if err != nil {
		return nil, err
	}
	p, ok := providers[t.Vendor]
	if !ok {
		return nil, fmt.Errorf("no provider for %s", t.Vendor)
	}
	book := &operatorBook{store: st, biller: biller, vendor: t.Vendor, logger: logger}
	s.c = &secondstage.Model{Provider: p, Model: t.Model, Prompt: sc.Prompt, Usage: book.record, Raw: kind == "classifier"}
	return s, nil
}

// operatorBook logs each second-stage call's vendor cost as a record of
// the operator's account, with no charge: the cost shows on the admin
// dashboard beside the requests, and no caller pays it.
type operatorBook struct {
	store  gw.Store
	biller *billing.Biller
	vendor string
	logger *slog.Logger
}

func (b *operatorBook) record(model string, u gw.Usage) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	acct, err := b.store.EnsureAccount(ctx, operatorAccount)
	if err != nil {
		b.logger.Error("guard second stage: operator account", "err", err)
		return
	}
	r := &gw.Record{
		RequestID: id.New("req_", time.Now()), AccountID: acct.ID, KeyID: "guard-second-stage", Endpoint: gw.ShapeM,
		Vendor: b.vendor, Model: model, Status: http.StatusOK, Usage: u, Guard: "off", Note: "guard second stage", CreatedAt: time.Now(),
	}
	if b.biller != nil {
		if q, err := b.biller.Price(b.vendor, model, u); err == nil {
			r.Cost = q.Cost
		} else {
			r.Note += ": " + err.Error()
		}
	}
	if err := b.store.Log(ctx, r); err != nil {
		b.logger.Error("guard second stage: log cost", "err", err)
	}
}
