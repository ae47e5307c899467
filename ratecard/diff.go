package ratecard

import (
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// Change is one difference between two rate cards.
type Change struct {
	// Model is "vendor/id"; Kind is "added", "removed" or "changed";
	// Field names the changed field ("input", "tier 1 output",
	// "max_output_tokens", "date", ...); Old and New are its values
	// ("" when absent).
	Model, Kind, Field, Old, New string
}

// Diff returns what changes from old to new, model by model in card
// order: models only in new ("added"), only in old ("removed": when new
// is used as an overlay file they keep old's price), and every changed
// price, tier, limit, alias, source and date.
func Diff(old, new *Card) []Change {
	var out []Change
	oi := map[string]*Model{}
	for i := range old.models {
		oi[old.models[i].Name()] = &old.models[i]
	}
	seen := map[string]bool{}
	for i := range new.models {
		n := &new.models[i]
		seen[n.Name()] = true
		o, ok := oi[n.Name()]
		if !ok {
			out = append(out, Change{Model: n.Name(), Kind: "added", Field: "input/output", New: FormatPrice(n.Price.Input) + "/" + FormatPrice(n.Price.Output)})
			continue
		}
		out = append(out, modelChanges(o, n)...)
	}
	for i := range old.models {
		if o := &old.models[i]; !seen[o.Name()] {
			out = append(out, Change{Model: o.Name(), Kind: "removed", Field: "input/output", Old: FormatPrice(o.Price.Input) + "/" + FormatPrice(o.Price.Output)})
		}
	}
	return out
}

func modelChanges(o, n *Model) []Change {
	var out []Change
	add := func(field, a, b string) {
		if a != b {
			out = append(out, Change{Model: n.Name(), Kind: "changed", Field: field, Old: a, New: b})
		}
	}
	prices := func(prefix string, a, b Price) {
		for _, f := range []struct {
			name string
			x, y *big.Rat
		}{
			{"input", a.Input, b.Input}, {"cached_input", a.CachedInput, b.CachedInput},
			{"cache_write_5m", a.CacheWrite5m, b.CacheWrite5m}, {"cache_write_1h", a.CacheWrite1h, b.CacheWrite1h},
			{"output", a.Output, b.Output},
		} {
			add(prefix+f.name, priceString(f.x), priceString(f.y))
		}
	}
	prices("", o.Price, n.Price)
	for i := 0; i < max(len(o.Tiers), len(n.Tiers)); i++ {
		prefix := "tier " + strconv.Itoa(i+1) + " "
		var a, b Tier
		if i < len(o.Tiers) {
			a = o.Tiers[i]
		}
		if i < len(n.Tiers) {
			b = n.Tiers[i]
		}
		add(prefix+"above_prompt_tokens", countString(a.AbovePromptTokens), countString(b.AbovePromptTokens))
		prices(prefix, a.Price, b.Price)
	}
	add("max_output_tokens", countString(o.MaxOutputTokens), countString(n.MaxOutputTokens))
	add("context_window", countString(o.ContextWindow), countString(n.ContextWindow))
	add("min_output_tokens", countString(o.MinOutputTokens), countString(n.MinOutputTokens))
	add("aliases", strings.Join(o.Aliases, ","), strings.Join(n.Aliases, ","))
	add("source", o.Source, n.Source)
	add("date", o.Date, n.Date)
	for _, name := range UnitNames() {
		a, b := unitString(o.Units, name), unitString(n.Units, name)
		add("unit "+name, a, b)
	}
	return out
}

// unitString is a unit's price as the diff shows it ("" when the model
// has none): the figure alone for a multiplier or a per-call price, so
// that the relative change is shown, else with its kind.
func unitString(us map[string]Unit, name string) string {
	u, ok := us[name]
	switch {
	case !ok:
		return ""
	case u.Multiplier != nil:
		return FormatPrice(u.Multiplier)
	case u.PerHour != nil:
		return FormatPrice(u.PerHour) + " per container-hour, min " + strconv.FormatInt(u.MinSeconds, 10) + " s"
	case u.PerRequest:
		return FormatPrice(u.PerCall) + " per request"
	}
	return FormatPrice(u.PerCall)
}

func priceString(x *big.Rat) string {
	if x == nil {
		return ""
	}
	return FormatPrice(x)
}

func countString(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// WriteDiff writes changes as a text report, one line each, with the
// relative change of every price.
func WriteDiff(w io.Writer, changes []Change) error {
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no differences")
		return err
	}
	for _, c := range changes {
		line := fmt.Sprintf("%-8s %s %s", c.Kind, c.Model, c.Field)
		switch c.Kind {
		case "added":
			line += " " + c.New
		case "removed":
			line += " " + c.Old + " (an overlay keeps this entry)"
		default:
			line += fmt.Sprintf(": %s -> %s%s", orNone(c.Old), orNone(c.New), ratio(c.Old, c.New))
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ratio formats new/old - 1 as a percentage for two prices.
func ratio(a, b string) string {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 || x.Sign() == 0 || strings.ContainsAny(a, "-") {
		return ""
	}
	r := new(big.Rat).Quo(y, x)
	r.Sub(r, big.NewRat(1, 1))
	r.Mul(r, big.NewRat(100, 1))
	return " (" + r.FloatString(1) + "%)"
}
