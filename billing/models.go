package billing

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gwlabs/gateway/ratecard"
)

// ModelList is the rate card as "gateway models --json" prints it (the
// operator's view, vendor prices): the OpenAI list shape, one entry per
// rate-card model with its prefixed id and its prices. Callers see their
// own prices at GET /v1/models (package catalog).
type ModelList struct {
	Object string      `json:"object"` // "list"
	Data   []ModelInfo `json:"data"`
}

// ModelInfo is one entry of a ModelList.
type ModelInfo struct {
	ID      string `json:"id"`       // "openai/gpt-6-sol"
	Object  string `json:"object"`   // "model"
	Created int64  `json:"created"`  // Unix time of the price's source date
	OwnedBy string `json:"owned_by"` // the vendor prefix

	Pricing         Pricing       `json:"pricing"`
	Tiers           []PricingTier `json:"pricing_tiers,omitempty"`
	OffPeak         *OffPeakPrice `json:"pricing_off_peak,omitempty"`
	ContextWindow   int64         `json:"context_window,omitempty"`
	MaxOutputTokens int64         `json:"max_output_tokens"`
}

// Pricing is a model's price as billed, in USD per million tokens, decimal
// strings. Every rate is filled in: a cache price the vendor does not
// publish shows the rate it is billed at (see ratecard.Price).
type Pricing struct {
	Input        string `json:"input"`
	CachedInput  string `json:"cached_input"`
	CacheWrite5m string `json:"cache_write_5m"`
	CacheWrite1h string `json:"cache_write_1h"`
	Output       string `json:"output"`
	Unit         string `json:"unit"` // "usd_per_million_tokens"
}

// OffPeakPrice is a daily window (UTC, "HH:MM") in which requests that
// start are billed at Pricing.
type OffPeakPrice struct {
	StartUTC string  `json:"start_utc"`
	EndUTC   string  `json:"end_utc"`
	Pricing  Pricing `json:"pricing"`
}

// PricingTier is a long-context price: it applies to a whole request whose
// prompt has more than AbovePromptTokens tokens.
type PricingTier struct {
	AbovePromptTokens int64   `json:"above_prompt_tokens"`
	Pricing           Pricing `json:"pricing"`
}

// Models returns card as a ModelList, sorted by vendor then id.
// OpenRouter models are not listed: any openrouter/<provider>/<model> is
// accepted and priced by the aggregator.
func Models(card *ratecard.Card) ModelList {
	list := ModelList{Object: "list", Data: []ModelInfo{}}
	for _, m := range card.Models() {
		info := ModelInfo{
			ID:              m.Name(),
			Object:          "model",
			OwnedBy:         m.Vendor,
			Pricing:         pricing(m.Price),
			ContextWindow:   m.ContextWindow,
			MaxOutputTokens: m.MaxOutputTokens,
		}
		if d, err := time.Parse(time.DateOnly, m.Date); err == nil {
			info.Created = d.Unix()
		}
		for _, t := range m.Tiers {
			info.Tiers = append(info.Tiers, PricingTier{AbovePromptTokens: t.AbovePromptTokens, Pricing: pricing(t.Price)})
		}
		if o := m.OffPeak; o != nil {
			info.OffPeak = &OffPeakPrice{StartUTC: fmt.Sprintf("%02d:%02d", o.Start/60, o.Start%60), EndUTC: fmt.Sprintf("%02d:%02d", o.End/60, o.End%60), Pricing: pricing(o.Price)}
		}
		list.Data = append(list.Data, info)
	}
	return list
}

func pricing(p ratecard.Price) Pricing {
	r := p.Resolved()
	return Pricing{
		Input:        ratecard.FormatPrice(r.Input),
		CachedInput:  ratecard.FormatPrice(r.CachedInput),
		CacheWrite5m: ratecard.FormatPrice(r.CacheWrite5m),
		CacheWrite1h: ratecard.FormatPrice(r.CacheWrite1h),
		Output:       ratecard.FormatPrice(r.Output),
		Unit:         "usd_per_million_tokens",
	}
}

// WriteTable writes card as an aligned text table for the "gateway models"
// command: a header line with the version, then one row per model and one
// indented row per long-context tier. Prices are USD per million tokens;
// "-" marks a cache price not billed separately (the input price applies,
// or for 1-hour writes the 5-minute price).
func WriteTable(w io.Writer, card *ratecard.Card) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "rate card %s, effective %s; USD per 1M tokens\n", card.Version, card.Effective)
	fmt.Fprintln(tw, "MODEL\tINPUT\tCACHED\tWRITE 5M\tWRITE 1H\tOUTPUT\tMAX OUT\tCONTEXT\tDATE")
	for _, m := range card.Models() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.Name(), cell(m.Price.Input), cell(m.Price.CachedInput),
			cell(m.Price.CacheWrite5m), cell(m.Price.CacheWrite1h), cell(m.Price.Output), m.MaxOutputTokens, count(m.ContextWindow), m.Date)
		for _, t := range m.Tiers {
			p := t.Price
			fmt.Fprintf(tw, "  prompt > %d\t%s\t%s\t%s\t%s\t%s\t\t\t\n", t.AbovePromptTokens, cell(p.Input), cell(p.CachedInput),
				cell(p.CacheWrite5m), cell(p.CacheWrite1h), cell(p.Output))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write models table: %w", err)
	}
	return nil
}

func cell(x *big.Rat) string {
	if x == nil {
		return "-"
	}
	return ratecard.FormatPrice(x)
}

func count(n int64) string {
	if n == 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}
