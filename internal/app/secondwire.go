package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/guard/policy"
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

// operatorAccount books the second stage's vendor cost.
const operatorAccount = policy.OperatorAccount

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
func newSecondStage(c Config, providers map[string]gw.Provider, biller *billing.Biller, st gw.Store, logger *slog.Logger) (*policy.SecondStage, error) {
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
	s := &policy.SecondStage{Threshold: sc.Threshold, Budget: sc.Timeout}
	kind, id, _ := strings.Cut(sc.Target, ":")
	if kind != "model" && kind != "classifier" {
		s.Classifier = &secondstage.HTTP{URL: sc.Target, Token: sc.Token, Client: &http.Client{}}
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
	book := &policy.OperatorBook{Store: st, Biller: biller, Vendor: t.Vendor, Logger: logger}
	s.Classifier = &secondstage.Model{Provider: p, Model: t.Model, Prompt: sc.Prompt, Usage: book.Record, Raw: kind == "classifier"}
	return s, nil
}
