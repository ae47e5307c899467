package dashboard

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// activityRange is one of the activity page's periods.
type activityRange struct {
	value, label string
	buckets      int
	step         time.Duration // bucket width: an hour or a day
}

// activityRanges lists the periods; the first is the default.
func activityRanges() []activityRange {
	return []activityRange{
		{"24h", "Last 24 hours", 24, time.Hour},
		{"7d", "Last 7 days", 7, 24 * time.Hour},
		{"30d", "Last 30 days", 30, 24 * time.Hour},
	}
}

// totals sums a set of records.
type totals struct {
	Requests, Errors                                int64
	Input, CacheRead, CacheWrite, Output, Reasoning int64
	Cost, Charge                                    gw.Money
	// Disputed is the vendor's cost of prompt tokens reported beyond the
	// gateway's bound: not in Cost, not charged.
	Disputed gw.Money
	// Calibrations and CalibrationCost are the gateway's own calls that
	// count the optimizer's directive (noted optimizer_calibration): the
	// operator's, in Requests and Cost too.
	Calibrations    int64
	CalibrationCost gw.Money
}

// noteCalibration is calibrate.NoteOptimizerCalibration.
const noteCalibration = "optimizer_calibration"

// add counts r.
func (t *totals) add(r *gw.Record) {
	t.Requests++
	if r.Status >= 400 || r.ErrorCode != "" {
		t.Errors++
	}
	u := r.Usage
	t.Input += u.InputTokens
	t.CacheRead += u.CacheReadTokens
	t.CacheWrite += u.CacheWriteTokens()
	t.Output += u.OutputTokens
	t.Reasoning += u.ReasoningTokens
	t.Cost += r.Cost
	t.Charge += r.Charge
	t.Disputed += r.DisputedCost
	if r.AccountID == "" && strings.Contains(r.Note, noteCalibration) {
		t.Calibrations++
		t.CalibrationCost += r.Cost
	}
}

// tokens returns all tokens counted: prompt buckets plus output.
func (t *totals) tokens() int64 { return t.Input + t.CacheRead + t.CacheWrite + t.Output }

// aggregate is the activity of one account (or all) over a range.
type aggregate struct {
	start   time.Time
	step    time.Duration
	all     totals
	markup  gw.Money
	buckets []totals
	byModel map[string]*totals
	byVend  map[string]*totals
	// capped says the page limit was reached before the range start:
	// older records of the range are not counted.
	capped bool
	oldest time.Time // oldest record counted, when capped
}

// collect pages through the records of [start, end) for account,
// newest first, and sums them per bucket, model and vendor. It reads at
// most maxPages pages.
func (d *Dashboard) collect(r *http.Request, account string, start, end time.Time, step time.Duration, n int) (*aggregate, error) {
	a := &aggregate{start: start, step: step, buckets: make([]totals, n), byModel: map[string]*totals{}, byVend: map[string]*totals{}}
	f := gw.RecordFilter{AccountID: account, Since: start, Until: end, Limit: d.pageSize}
	for page := 0; ; page++ {
		if page == d.maxPages {
			// Say "capped" only when an older record really was left out.
			f.Limit = 1
			more, err := d.store.Records(r.Context(), f)
			if err != nil {
				return nil, fmt.Errorf("records: %w", err)
			}
			a.capped = len(more) > 0
			break
		}
		recs, err := d.store.Records(r.Context(), f)
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		for i := range recs {
			rec := &recs[i]
			a.all.add(rec)
			if rec.Charge != 0 {
				a.markup += rec.Charge - rec.Cost
			}
			if b := int(rec.CreatedAt.Sub(start) / step); b >= 0 && b < n {
				a.buckets[b].add(rec)
			}
			// The same model id can come from two vendors: group by
			// the prefixed id the caller sent.
			group(a.byModel, prefixedModel(rec.Vendor, rec.Model)).add(rec)
			group(a.byVend, rec.Vendor).add(rec)
			a.oldest = rec.CreatedAt
		}
		if len(recs) < d.pageSize {
			break
		}
		f.Before = recs[len(recs)-1].RequestID
	}
	return a, nil
}

// group returns the totals of key in m, creating them.
func group(m map[string]*totals, key string) *totals {
	t, ok := m[key]
	if !ok {
		t = &totals{}
		m[key] = t
	}
	return t
}

// groupRow is one row of the by-model and by-vendor tables.
type groupRow struct {
	Name                                            string
	Requests, Errors                                string
	Input, CacheRead, CacheWrite, Output, Reasoning string
	Cost, Charge                                    string
	CostExact, ChargeExact                          string
	LogsURL                                         string
}

// groupTable is the by-model or by-vendor table.
type groupTable struct {
	Title string
	Rows  []groupRow
	Admin bool // show the vendor cost
}

// rows formats m, by charge then requests, descending.
func rows(m map[string]*totals, link func(name string) string) []groupRow {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ta, tb := m[a], m[b]
		if c := cmp.Compare(tb.Charge, ta.Charge); c != 0 {
			return c
		}
		if c := cmp.Compare(tb.Requests, ta.Requests); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make([]groupRow, 0, len(names))
	for _, name := range names {
		t := m[name]
		label := name
		if label == "" {
			label = "(none)"
		}
		out = append(out, groupRow{
			Name: label, Requests: count(t.Requests), Errors: count(t.Errors),
			Input: count(t.Input), CacheRead: count(t.CacheRead), CacheWrite: count(t.CacheWrite),
			Output: count(t.Output), Reasoning: count(t.Reasoning),
			Cost: usdBrief(t.Cost), Charge: usdBrief(t.Charge), CostExact: usd(t.Cost), ChargeExact: usd(t.Charge),
			LogsURL: link(name),
		})
	}
	return out
}

// activityPage is the activity view's data.
type activityPage struct {
	basePage
	Accounts []accountOption
	Account  string
	Ranges   []rangeTab
	Range    string
	// Period describes the range shown, in UTC.
	Period string
	Cards  []card
	// Balance is shown when the page is about one account.
	HasBalance bool
	Balance    []card
	// Budgets are the account's budgets and its keys', what remains of
	// each in the current UTC day or month.
	Budgets []card
	Charts  []chart
	Tokens  []card
	Groups  []groupTable
	Capped  bool
	CapNote string
	Empty   bool
}

// rangeTab is one link of the period switcher.
type rangeTab struct {
	Label, URL string
	Active     bool
}

// card is one figure with its label and an optional detail line.
type card struct {
	Label, Value, Detail, Class string
	// Exact, when set, is the value to the last decimal (a title).
	Exact string
}

// moneyCard is a card showing an amount briefly, exactly on hover.
func moneyCard(label string, m gw.Money, detail, class string) card {
	return card{Label: label, Value: usdBrief(m), Exact: usd(m), Detail: detail, Class: class}
}

// activity shows the activity of the chosen account over a period.
func (d *Dashboard) activity(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	account := v.scope(q)
	ranges := activityRanges()
	rg := ranges[0]
	for _, x := range ranges {
		if x.value == q.Get("range") {
			rg = x
		}
	}
	now := d.now().UTC()
	// Buckets are whole UTC hours or days; the last one holds now.
	end := now.Truncate(rg.step).Add(rg.step)
	start := end.Add(-time.Duration(rg.buckets) * rg.step)
	agg, err := d.collect(r, account, start, end, rg.step, rg.buckets)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	p := &activityPage{
		basePage: base(v, "Activity", "activity", account),
		Accounts: v.options(account),
		Account:  account,
		Range:    rg.value,
		Period:   start.Format("2006-01-02 15:04") + " – " + now.Format("2006-01-02 15:04") + " UTC",
		Empty:    agg.all.Requests == 0,
	}
	for _, x := range ranges {
		tq := url.Values{"range": {x.value}}
		if v.admin && account != "" {
			tq.Set("account", account)
		}
		p.Ranges = append(p.Ranges, rangeTab{Label: x.label, URL: withQuery("/dashboard/activity", tq), Active: x.value == rg.value})
	}
	t := agg.all
	ok := t.Requests - t.Errors
	p.Cards = []card{
		moneyCard("Spend", t.Charge, "charged to the balance", "accent"),
		{Label: "Requests", Value: count(t.Requests), Detail: count(ok) + " succeeded · " + count(t.Errors) + " failed"},
		{Label: "Tokens", Value: count(t.tokens()), Detail: count(t.Input+t.CacheRead+t.CacheWrite) + " prompt · " + count(t.Output) + " output"},
	}
	if v.admin {
		detail := "markup " + usdBrief(agg.markup)
		if t.Disputed != 0 {
			detail += " · disputed " + usdBrief(t.Disputed)
		}
		if t.Calibrations != 0 {
			detail += " · directive calibration " + count(t.Calibrations) + " calls, " + usdBrief(t.CalibrationCost)
		}
		p.Cards = slices.Insert(p.Cards, 1, moneyCard("Vendor cost", t.Cost, detail, ""))
	}
	p.Tokens = []card{
		{Label: "Input", Value: count(t.Input), Class: "s-input"},
		{Label: "Cache read", Value: count(t.CacheRead), Class: "s-cread"},
		{Label: "Cache write", Value: count(t.CacheWrite), Class: "s-cwrite"},
		{Label: "Output", Value: count(t.Output), Class: "s-output"},
		{Label: "Reasoning", Value: count(t.Reasoning), Detail: "part of output", Class: "s-reason"},
	}
	if account != "" {
		bal, err := d.store.Balance(r.Context(), account)
		if errors.Is(err, gw.ErrNotFound) {
			// An admin's ?account= naming no account.
			d.notFound(w, r)
			return
		}
		if err != nil {
			d.fail(w, r, v, err)
			return
		}
		p.HasBalance = true
		p.Balance = []card{
			moneyCard("Available", bal.Available, "balance minus holds", "accent"),
			moneyCard("Balance", bal.Balance, "top-ups "+usdBrief(bal.TopUps)+" · charged "+usdBrief(bal.Charged), ""),
			moneyCard("Held", bal.Held, "reserved by requests in flight", ""),
		}
		if p.Budgets, err = d.budgetCards(r.Context(), account, v); err != nil {
			d.fail(w, r, v, err)
			return
		}
	}
	p.Charts = charts(agg, rg)
	link := func(param string) func(string) string {
		return func(name string) string {
			lq := url.Values{param: {name}}
			if v.admin && account != "" {
				lq.Set("account", account)
			}
			return withQuery("/dashboard/logs", lq)
		}
	}
	p.Groups = []groupTable{
		{Title: "By model", Rows: rows(agg.byModel, link("model")), Admin: v.admin},
		{Title: "By vendor", Rows: rows(agg.byVend, link("vendor")), Admin: v.admin},
	}
	if agg.capped {
		p.Capped = true
		p.CapNote = "This period holds more than " + count(int64(d.pageSize*d.maxPages)) +
			" requests: only the newest " + count(t.Requests) + " (back to " + agg.oldest.UTC().Format(timeLayout) +
			" UTC) are counted here, so the totals and charts are partial."
	}
	d.render(w, r, http.StatusOK, "activity", p)
}

// charts builds the spend, requests and tokens charts.
func charts(a *aggregate, rg activityRange) []chart {
	n := len(a.buckets)
	labels := make([]string, n)
	tips := make([]string, n)
	for i := range n {
		t := a.start.Add(time.Duration(i) * a.step)
		if a.step < 24*time.Hour {
			labels[i] = t.Format(hourLabel)
			tips[i] = t.Format("2006-01-02 15:00") + "–" + t.Add(a.step).Format("15:00") + " UTC"
		} else {
			labels[i] = t.Format(dayLabel)
			tips[i] = t.Format(bucketDayFull) + " UTC"
		}
	}
	spend := chartSpec{
		ID: "spend", Title: "Spend", Unit: "USD charged per " + unitName(a.step),
		Series: []series{{Name: "Charge", Class: "s-charge"}}, Width: chartWide,
		Axis: func(v int64) string { return usdShort(gw.Money(v)) },
		Tip: func(i int, b totals) string {
			return tips[i] + ": " + usd(b.Charge) + " charged · " + count(b.Requests) + " requests"
		},
		Value: func(b totals) []int64 { return []int64{int64(b.Charge)} },
	}
	requests := chartSpec{
		ID: "requests", Title: "Requests", Unit: "requests per " + unitName(a.step),
		Series: []series{{Name: "Succeeded", Class: "s-ok"}, {Name: "Failed", Class: "s-err"}}, Width: chartNarrow,
		Axis: compact,
		Tip: func(i int, b totals) string {
			return tips[i] + ": " + count(b.Requests) + " requests · " + count(b.Errors) + " failed"
		},
		Value: func(b totals) []int64 { return []int64{b.Requests - b.Errors, b.Errors} },
	}
	tokens := chartSpec{
		ID: "tokens", Title: "Tokens", Unit: "tokens per " + unitName(a.step) + ", by billing bucket",
		Series: []series{{Name: "Input", Class: "s-input"}, {Name: "Cache read", Class: "s-cread"}, {Name: "Cache write", Class: "s-cwrite"}, {Name: "Output", Class: "s-output"}}, Width: chartNarrow,
		Axis: compact,
		Tip: func(i int, b totals) string {
			return tips[i] + ": " + count(b.Input) + " input · " + count(b.CacheRead) + " cache read · " +
				count(b.CacheWrite) + " cache write · " + count(b.Output) + " output (" + count(b.Reasoning) + " reasoning)"
		},
		Value: func(b totals) []int64 { return []int64{b.Input, b.CacheRead, b.CacheWrite, b.Output} },
	}
	var out []chart
	for _, spec := range []chartSpec{spend, requests, tokens} {
		// About one label per 80 units of width.
		every := max(1, (n*80+spec.Width-1)/spec.Width)
		if rg.step < 24*time.Hour {
			every = max(every, 3)
		}
		out = append(out, spec.build(a.buckets, labels, every))
	}
	return out
}

// unitName names a bucket width.
func unitName(step time.Duration) string {
	if step < 24*time.Hour {
		return "hour"
	}
	return "day"
}
