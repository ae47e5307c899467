package vendorreport

import (
	"context"
	"time"

	"github.com/gwlabs/gateway/reconcile"
)

// NoReport is the Source of a vendor that publishes no report the
// gateway can read (Groq, Together, Fireworks, Mistral, Google): every
// day is reconcile.ErrNoReport, so the vendor shows as unreconcilable.
type NoReport struct{ Name string }

// Vendor returns the vendor's name.
func (n NoReport) Vendor() string { return n.Name }

// Day returns reconcile.ErrNoReport.
func (n NoReport) Day(context.Context, time.Time) (reconcile.Report, error) {
	return reconcile.Report{}, reconcile.ErrNoReport
}

// Set is every vendor's readers, built from its configuration by New.
type Set struct {
	// Sources has a Source for every vendor with a daily report or none
	// at all: a reader for OpenAI and Anthropic (answering
	// ErrNoCredentials without an admin key), NoReport for Groq,
	// Together, Fireworks, Mistral and Google. OpenRouter and DeepSeek
	// are not in it: they are reconciled through Generations and
	// Balances.
	Sources     map[string]reconcile.Source
	Generations *OpenRouter // OpenRouter's generation records
	Balances    []reconcile.Balances
}

// Reconcilable lists the vendors with a report reader.
var Reconcilable = []string{"openai", "anthropic", "openrouter", "deepseek"}

// New builds the readers of vendors (the gateway's vendor names) from
// cfgs (a vendor missing from cfgs has no admin key).
func New(vendors []string, cfgs map[string]Config) Set {
	s := Set{Sources: map[string]reconcile.Source{}}
	for _, v := range vendors {
		c := cfgs[v]
		switch v {
		case "openai":
			s.Sources[v] = NewOpenAI(c)
		case "anthropic":
			s.Sources[v] = NewAnthropic(c)
		case "openrouter":
			s.Generations = NewOpenRouter(c)
		case "deepseek":
			s.Balances = append(s.Balances, NewDeepSeek(c))
		default:
			s.Sources[v] = NoReport{Name: v}
		}
	}
	return s
}
