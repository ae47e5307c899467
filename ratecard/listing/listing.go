// Package listing lists what a rate card prices, unit by unit, and the
// units beyond tokens it leaves unpriced per model (gateway ratecard
// check --units).
package listing

import (
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/ratecard"
)

// UnitRow is one billable unit of a model: what it is, its price in
// USD per million tokens (exact), and where that price comes from.
type UnitRow struct {
	Model         string `json:"model"`
	Unit          string `json:"unit"`
	USDPerMillion string `json:"usd_per_million_tokens,omitempty"`
	// Price is a unit beyond tokens: a multiplier of the token rates, or
	// USD per call, per request or per container-hour.
	Price  string `json:"price,omitempty"`
	Note   string `json:"note,omitempty"`
	Source string `json:"source"`
	Date   string `json:"date"`
}

// Units lists every unit the card prices, per model: the prompt
// buckets (plain input, cache read, cache writes of 5 minutes and 1
// hour: a bucket the card leaves out is billed at the rate it stands
// for, said in the note), output (reasoning included), and each
// long-context tier and off-peak window.
func Units(card *ratecard.Card) []UnitRow {
	var out []UnitRow
	for _, m := range card.Models() {
		name := name0(m)
		add := func(prefix, note string, p ratecard.Price) {
			r := p.Resolved()
			for _, u := range []struct {
				unit  string
				rate  *big.Rat
				given bool
				as    string
			}{
				{"input", r.Input, p.Input != nil, ""},
				{"cache_read", r.CachedInput, p.CachedInput != nil, "input"},
				{"cache_write_5m", r.CacheWrite5m, p.CacheWrite5m != nil, "input"},
				{"cache_write_1h", r.CacheWrite1h, p.CacheWrite1h != nil, "cache_write_5m"},
				{"output (reasoning included)", r.Output, p.Output != nil, ""},
			} {
				n := note
				if !u.given && u.as != "" {
					n = strings.TrimPrefix(n+"; billed at the "+u.as+" rate (none listed)", "; ")
				}
				out = append(out, UnitRow{Model: name, Unit: prefix + u.unit, USDPerMillion: exactDecimal(u.rate), Note: n, Source: m.Source, Date: m.Date})
			}
		}
		add("", "", m.Price)
		for _, t := range m.Tiers {
			add(fmt.Sprintf("prompt above %d: ", t.AbovePromptTokens), "long-context tier", t.Price)
		}
		if m.OffPeak != nil {
			add(fmt.Sprintf("off-peak %02d:%02d-%02d:%02d UTC: ", m.OffPeak.Start/60, m.OffPeak.Start%60, m.OffPeak.End/60, m.OffPeak.End%60), "off-peak window", m.OffPeak.Price)
		}
		for _, unit := range slices.Sorted(maps.Keys(m.Units)) {
			u := m.Units[unit]
			out = append(out, UnitRow{Model: name, Unit: unit, Price: unitPrice(u), Note: u.Note, Source: u.Source, Date: u.Date})
		}
	}
	return out
}

// name0 is a model's name on the card, vendor/model.
func name0(m ratecard.Model) string { return m.Vendor + "/" + m.ID }

// unitPrice describes a unit's price exactly: "x2 token rates", "$0.01
// per call", "$0.035 per request", "$0.05 per container-hour (at least
// 300 s per container)".
func unitPrice(u ratecard.Unit) string {
	switch {
	case u.Multiplier != nil:
		return "x" + exactDecimal(u.Multiplier) + " token rates"
	case u.PerHour != nil:
		s := "$" + exactDecimal(u.PerHour) + " per container-hour"
		if u.MinSeconds > 0 {
			s += fmt.Sprintf(" (at least %d s per container)", u.MinSeconds)
		}
		return s
	case u.PerRequest:
		return "$" + exactDecimal(u.PerCall) + " per request"
	}
	return "$" + exactDecimal(u.PerCall) + " per call"
}

// WriteUnits prints the units and the refused fields.
func WriteUnits(w io.Writer, card *ratecard.Card) error {
	fmt.Fprintln(w, "\nBillable units the card prices (tokens in USD per million tokens; units beyond tokens as stated):")
	for _, u := range Units(card) {
		note := ""
		if u.Note != "" {
			note = " (" + u.Note + ")"
		}
		price := u.USDPerMillion
		if u.Price != "" {
			price = u.Price
		}
		if _, err := fmt.Fprintf(w, "  %-48s %-52s %12s%s  source %s, %s\n", u.Model, u.Unit, price, note, u.Source, u.Date); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nUnits beyond tokens: refused with 400 naming the field on every model whose units do not price them (GATEWAY_ALLOW_UNPRICED lets a unit through at the operator's cost; a rate-card overlay prices it):")
	for _, r := range RefusedUnits(card) {
		fmt.Fprintf(w, "  %-22s %s\n  %-22s priced on %s; refused on %s\n", r.Unit, r.Fields, "", list(r.PricedOn), list(r.RefusedOn))
	}
	return nil
}

// list prints model names, "no model" for none.
func list(ms []string) string {
	if len(ms) == 0 {
		return "no model"
	}
	return strings.Join(ms, ", ")
}

// RefusedUnit is a unit beyond tokens and the request fields that ask
// for it.
type RefusedUnit struct {
	Unit   string `json:"unit"`
	Fields string `json:"fields"`
	// PricedOn are the models whose units price it; RefusedOn the
	// others, where a request using it is refused.
	PricedOn  []string `json:"priced_on"`
	RefusedOn []string `json:"refused_on"`
}

// RefusedUnits lists each unit beyond tokens with the models whose
// card entries price it and those where a request using it is refused.
func RefusedUnits(card *ratecard.Card) []RefusedUnit {
	fields := map[string]string{
		billable.PriorityTier:  `service_tier "priority" (chat completions, responses)`,
		billable.FlexTier:      `service_tier "flex"`,
		billable.BatchTier:     `an answer with service_tier "batch" (not requested on a synchronous call)`,
		billable.FastMode:      `speed "fast" (messages)`,
		billable.WebSearch:     `tools[].type web_search_* (messages, responses), web_search_options (chat completions)`,
		billable.WebFetch:      `tools[].type web_fetch_* (messages)`,
		billable.CodeExecution: `tools[].type code_execution_* (messages), code_interpreter (responses), tools[].codeExecution (Gemini)`,
		billable.MCP:           `mcp_servers (messages), tools[].type mcp (responses)`,
		billable.FileSearch:    `tools[].type file_search (responses)`,
		billable.ImageGen:      `tools[].type image_generation (responses)`,
		billable.ComputerUse:   `tools[].type computer_use_preview (responses), tools[].computerUse (Gemini)`,
		billable.Grounding:     `tools[].googleSearch, googleSearchRetrieval, urlContext, googleMaps (Gemini)`,
	}
	out := make([]RefusedUnit, 0, len(billable.Units))
	models := card.Models()
	for _, u := range billable.Units {
		r := RefusedUnit{Unit: u, Fields: fields[u], PricedOn: []string{}, RefusedOn: []string{}}
		for _, m := range models {
			if _, ok := m.Unit(u); ok {
				r.PricedOn = append(r.PricedOn, name0(m))
			} else {
				r.RefusedOn = append(r.RefusedOn, name0(m))
			}
		}
		out = append(out, r)
	}
	return out
}

// exactDecimal prints r in decimals, exactly when it terminates within 10
// places, without trailing zeros.
func exactDecimal(r *big.Rat) string {
	s := r.FloatString(10)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
