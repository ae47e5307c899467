package reconcile

import (
	"math/big"
	"sort"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The alert thresholds. A figure raises its alert only when its drift is
// strictly beyond the percentage and, where there is one, its difference
// strictly beyond the amount: a drift of exactly 2% on a vendor-day, or
// of exactly $1, raises nothing.
const (
	// VendorDriftPct and VendorDriftMin: a vendor-day's cost.
	VendorDriftPct = 2
	VendorDriftMin = 1 * gw.USD
	// ModelDriftPct and ModelDriftMin: a model-day's cost.
	ModelDriftPct = 5
	ModelDriftMin = 50 * gw.Cent
	// TokenDriftPermille: a token class of a model-day, in tenths of a
	// percent (0.5%).
	TokenDriftPermille = 5
	// StaleDriftPct: a model-day's cost drift, its tokens matching, that
	// names the rate card stale.
	StaleDriftPct = 2
)

// LedgerClass returns the ledger's count of a report's token class. The
// prompt buckets include the optimizer's tokens: the vendor billed them.
func LedgerClass(s gw.LedgerSum, class string) (int64, bool) {
	u := s.Usage
	switch class {
	case TokensInput:
		return u.InputTokens, true
	case TokensCacheRead:
		return u.CacheReadTokens, true
	case TokensCacheWrite:
		return u.CacheWrite5mTokens + u.CacheWrite1hTokens, true
	case TokensOutput:
		return u.OutputTokens, true
	case TokensRequests:
		return s.Requests, true
	}
	return 0, false
}

// classOrder is the order token lines are written in.
var classOrder = []string{TokensInput, TokensCacheRead, TokensCacheWrite, TokensOutput, TokensRequests}

// DriftPPM returns (ledger - vendor) / max(ledger, vendor) in parts per
// million, exactly rounded toward zero; 0 when both are 0.
func DriftPPM(ledger, vendor int64) int64 {
	den := max(ledger, vendor)
	if den <= 0 {
		return 0
	}
	n := new(big.Int).Sub(big.NewInt(ledger), big.NewInt(vendor))
	n.Mul(n, big.NewInt(1_000_000))
	n.Quo(n, big.NewInt(den))
	return n.Int64()
}

// beyond reports whether |ledger - vendor| / max(ledger, vendor) is
// strictly beyond num/den, computed exactly.
func beyond(ledger, vendor int64, num, den int64) bool {
	base := max(ledger, vendor)
	if base <= 0 {
		return false
	}
	d := new(big.Int).Sub(big.NewInt(ledger), big.NewInt(vendor))
	d.Abs(d)
	d.Mul(d, big.NewInt(den))
	b := new(big.Int).Mul(big.NewInt(base), big.NewInt(num))
	return d.Cmp(b) > 0
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// modelFigures is one model's side of the vendor's report, summed over
// its rows (and vendor keys).
type modelFigures struct {
	cost    int64
	hasCost bool
	tokens  map[string]int64
	keys    map[string]bool
}

// Compare compares one vendor-day of the ledger (its sums per model) with
// the vendor's report and returns the lines to keep: the vendor-day's
// cost, each model-day's cost and each token class the report breaks
// out, with their alerts. now stamps the lines.
func Compare(rep Report, ledger []gw.LedgerSum, final bool, now time.Time) []gw.ReconLine {
	day := rep.Day.UTC()
	mk := func(level, model, class string, l, r int64) gw.ReconLine {
		return gw.ReconLine{Vendor: rep.Vendor, Day: day, Level: level, Model: model, Class: class,
			Ledger: l, Reported: r, DriftPPM: DriftPPM(l, r), Status: gw.ReconMatch, Final: final, CheckedAt: now}
	}
	byModel := map[string]*modelFigures{}
	classes := map[string]bool{}
	var vendorCost int64
	reportHasCost := false
	for _, row := range rep.Rows {
		if row.HasCost {
			reportHasCost = true
			vendorCost += int64(row.Cost)
		}
		if row.Model == "" { // a line item: counted in the vendor-day only
			continue
		}
		f := byModel[row.Model]
		if f == nil {
			f = &modelFigures{tokens: map[string]int64{}, keys: map[string]bool{}}
			byModel[row.Model] = f
		}
		if row.HasCost {
			f.cost += int64(row.Cost)
			f.hasCost = true
		}
		for c, n := range row.Tokens {
			f.tokens[c] += n
			classes[c] = true
		}
		if row.VendorKey != "" {
			f.keys[row.VendorKey] = true
		}
	}
	if len(rep.Rows) == 0 {
		// A report with no row at all (every hour of the day missing)
		// says the vendor billed nothing: cost, input and output are
		// compared with zero, never skipped.
		reportHasCost = true
		classes[TokensInput], classes[TokensOutput] = true, true
	}
	led := map[string]gw.LedgerSum{}
	var ledgerCost int64
	for _, s := range ledger {
		if s.Vendor != "" && s.Vendor != rep.Vendor {
			continue
		}
		prev := led[s.Model]
		prev.Vendor, prev.Model = rep.Vendor, s.Model
		prev.Requests += s.Requests
		prev.Cost += s.Cost
		prev.Usage.InputTokens += s.Usage.InputTokens
		prev.Usage.CacheReadTokens += s.Usage.CacheReadTokens
		prev.Usage.CacheWrite5mTokens += s.Usage.CacheWrite5mTokens
		prev.Usage.CacheWrite1hTokens += s.Usage.CacheWrite1hTokens
		prev.Usage.OutputTokens += s.Usage.OutputTokens
		led[s.Model] = prev
		ledgerCost += int64(s.Cost)
	}

	var out []gw.ReconLine
	v := mk(gw.ReconVendor, "", "", ledgerCost, vendorCost)
	switch {
	case !reportHasCost:
		v.Status, v.Reported, v.DriftPPM = gw.ReconUnreconcilable, 0, 0
		v.Note = "the report has token counts only: cost not compared"
	case beyond(ledgerCost, vendorCost, VendorDriftPct, 100) && absDiff(ledgerCost, vendorCost) > int64(VendorDriftMin):
		v.Status, v.Alert = gw.ReconDrift, gw.AlertVendorDrift
	}
	if !rep.Complete {
		v.Note = gw.JoinNote(v.Note, "the vendor may still add to this day")
	}
	out = append(out, v)

	models := make([]string, 0, len(byModel)+len(led))
	for m := range byModel {
		models = append(models, m)
	}
	for m := range led {
		if byModel[m] == nil {
			models = append(models, m)
		}
	}
	sort.Strings(models)
	for _, m := range models {
		s := led[m]
		f := byModel[m]
		if f == nil {
			f = &modelFigures{}
		}
		// Token classes: those the report breaks out (for any model).
		var tokLines []gw.ReconLine
		tokensMatch, anyTokens := true, false
		var total int64
		// A model the report bills without token rows (OpenAI's
		// embeddings: cost only) has no token class to compare.
		costOnly := byModel[m] != nil && len(f.tokens) == 0 && f.hasCost
		for _, c := range classOrder {
			if !classes[c] || costOnly {
				continue
			}
			l, _ := LedgerClass(s, c)
			t := mk(gw.ReconTokens, m, c, l, f.tokens[c])
			if beyond(l, f.tokens[c], TokenDriftPermille, 1000) {
				t.Status, t.Alert = gw.ReconDrift, gw.AlertTokenDrift
				tokensMatch = false
			}
			if c != TokensRequests {
				anyTokens = true
				total += l
			}
			tokLines = append(tokLines, t)
		}
		ml := mk(gw.ReconModel, m, "", int64(s.Cost), f.cost)
		if len(f.keys) == 1 {
			for k := range f.keys {
				ml.VendorKey = k
			}
		}
		switch {
		case !reportHasCost:
			ml.Status, ml.Reported, ml.DriftPPM = gw.ReconUnreconcilable, 0, 0
			ml.Note = "the report has token counts only: cost not compared"
		case tokensMatch && anyTokens && total > 0 &&
			beyond(int64(s.Cost), f.cost, StaleDriftPct, 100) &&
			// Each request's cost is rounded to a micro-cent once: a
			// difference within that is no price.
			absDiff(int64(s.Cost), f.cost) > s.Requests:
			ml.Status, ml.Alert = gw.ReconDrift, gw.AlertPriceStale
			ml.OurPrice = perMillion(int64(s.Cost), total)
			ml.ImpliedPrice = perMillion(f.cost, total)
		case beyond(int64(s.Cost), f.cost, ModelDriftPct, 100) && absDiff(int64(s.Cost), f.cost) > int64(ModelDriftMin):
			ml.Status, ml.Alert = gw.ReconDrift, gw.AlertModelDrift
		}
		if byModel[m] == nil {
			ml.Note = gw.JoinNote(ml.Note, "absent from the vendor's report")
		} else if s.Requests == 0 && s.Cost == 0 {
			ml.Note = gw.JoinNote(ml.Note, "absent from the ledger")
		}
		out = append(out, ml)
		out = append(out, tokLines...)
	}
	return out
}

// perMillion is cost per million of tokens, in micro-cents.
func perMillion(cost, tokens int64) gw.Money {
	if tokens <= 0 {
		return 0
	}
	n := new(big.Int).Mul(big.NewInt(cost), big.NewInt(1_000_000))
	return gw.Money(n.Quo(n, big.NewInt(tokens)).Int64())
}

// Unreconcilable returns the line of a vendor-day that cannot be checked
// (no report, no admin credentials, or reason): never matching, never 0.
// It alerts when the ledger has traffic on it.
func Unreconcilable(vendor string, day time.Time, ledger []gw.LedgerSum, reason string, final bool, now time.Time) gw.ReconLine {
	var cost, n int64
	for _, s := range ledger {
		if s.Vendor == "" || s.Vendor == vendor {
			cost += int64(s.Cost)
			n += s.Requests
		}
	}
	l := gw.ReconLine{Vendor: vendor, Day: day.UTC(), Level: gw.ReconVendor, Ledger: cost, Status: gw.ReconUnreconcilable,
		Final: final, CheckedAt: now, Note: reason}
	if n > 0 {
		l.Alert = gw.AlertUnreconcilable
	}
	return l
}

// BalanceSpan is two consecutive readings of a prepaid balance and the
// ledger's cost of the vendor between them.
type BalanceSpan struct {
	From, To gw.BalanceReading
	Ledger   gw.Money
}

// CompareBalance returns the balance line of a vendor-day from the spans
// between its readings: what the balance fell by against what the ledger
// says was spent, beyond 2% and $1 an alert. A span over which the
// balance rose (a top-up) cannot be read as spending: it is left out and
// noted.
func CompareBalance(vendor string, day time.Time, spans []BalanceSpan, final bool, now time.Time) gw.ReconLine {
	var spent, ledger int64
	skipped := 0
	for _, sp := range spans {
		fell := int64(sp.From.Balance - sp.To.Balance)
		if fell < 0 {
			skipped++
			continue
		}
		spent += fell
		ledger += int64(sp.Ledger)
	}
	l := gw.ReconLine{Vendor: vendor, Day: day.UTC(), Level: gw.ReconBalance, Ledger: ledger, Reported: spent,
		DriftPPM: DriftPPM(ledger, spent), Status: gw.ReconMatch, Final: final, CheckedAt: now}
	switch {
	case len(spans) == 0:
		l.Status, l.Note = gw.ReconUnreconcilable, "fewer than two balance readings yet"
		l.DriftPPM = 0
		return l
	case skipped == len(spans):
		l.Status, l.Note = gw.ReconUnreconcilable, "the balance only rose (top-ups): nothing to compare"
		return l
	case beyond(ledger, spent, VendorDriftPct, 100) && absDiff(ledger, spent) > int64(VendorDriftMin):
		l.Status, l.Alert = gw.ReconDrift, gw.AlertBalanceDrift
	}
	if skipped > 0 {
		l.Note = "spans where the balance rose (top-ups) left out"
	}
	return l
}
