package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// logsPage is the request log's data.
type logsPage struct {
	basePage
	Accounts    []accountOption
	ShowAccount bool // admin viewing all accounts: an account column
	Form        logsForm
	Vendors     []option
	Keys        []option
	Statuses    []option
	Ranges      []option
	Rows        []recordView
	// NewestURL leads back to the first page when paging; OlderURL to
	// the next page, when there is one.
	NewestURL, OlderURL string
	// ExportURL downloads every row the filters select as CSV.
	ExportURL string
	Filtered  bool
}

// logsForm echoes the filters back into the form.
type logsForm struct {
	Model, Since, Until string
}

// option is one <option> of a select.
type option struct {
	Value, Label string
	Selected     bool
}

// logRange is a time-range preset of the logs filter.
type logRange struct {
	value, label string
	d            time.Duration // 0: any time
}

// logRanges lists the presets, "Any time" first.
func logRanges() []logRange {
	return []logRange{
		{"", "Any time", 0},
		{"1h", "Last hour", time.Hour},
		{"24h", "Last 24 hours", 24 * time.Hour},
		{"7d", "Last 7 days", 7 * 24 * time.Hour},
		{"30d", "Last 30 days", 30 * 24 * time.Hour},
	}
}

// filterKeys are the query parameters the logs page keeps when paging.
func filterKeys() []string {
	return []string{"account", "model", "vendor", "key", "status", "range", "since", "until"}
}

// logFilter reads the logs filters from q. Values it cannot use are
// ignored and reported in notices.
func (d *Dashboard) logFilter(q url.Values, account string) (gw.RecordFilter, []string) {
	f := gw.RecordFilter{
		AccountID: account,
		Vendor:    strings.TrimSpace(q.Get("vendor")),
		KeyID:     strings.TrimSpace(q.Get("key")),
		Before:    strings.TrimSpace(q.Get("before")),
	}
	f.Model = strings.TrimSpace(q.Get("model"))
	if vendor, model, ok := splitPrefixed(f.Model); ok && (f.Vendor == "" || f.Vendor == vendor) {
		f.Vendor, f.Model = vendor, model
	}
	var notices []string
	if s := strings.TrimSpace(q.Get("status")); len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5' {
		f.StatusClass = int(s[0] - '0')
	} else if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			notices = append(notices, "Ignored the status filter: it must be an HTTP status such as 200 or 429, or a class such as 4xx.")
		} else {
			f.Status = n
		}
	}
	now := d.now()
	if rg := q.Get("range"); rg != "" {
		found := false
		for _, p := range logRanges() {
			if p.value == rg && p.d > 0 {
				f.Since, found = now.Add(-p.d), true
			}
		}
		if !found {
			notices = append(notices, "Ignored the time range: unknown preset.")
		}
	}
	if s := strings.TrimSpace(q.Get("since")); s != "" {
		t, err := parseInputTime(s)
		if err != nil {
			notices = append(notices, "Ignored “From”: use the form 2006-01-02T15:04 (UTC).")
		} else if t.After(f.Since) {
			f.Since = t
		}
	}
	if s := strings.TrimSpace(q.Get("until")); s != "" {
		t, err := parseInputTime(s)
		if err != nil {
			notices = append(notices, "Ignored “To”: use the form 2006-01-02T15:04 (UTC).")
		} else {
			f.Until = t
		}
	}
	return f, notices
}

// parseInputTime reads a datetime-local value (UTC), a date, or RFC 3339.
func parseInputTime(s string) (time.Time, error) {
	for _, layout := range []string{inputLayout, "2006-01-02T15:04:05", "2006-01-02", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("bad time")
}

// logs shows one page of the request log, newest first.
func (d *Dashboard) logs(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	account := v.scope(q)
	f, notices := d.logFilter(q, account)
	f.Limit = d.logsPerPage + 1
	recs, err := d.store.Records(r.Context(), f)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	p := &logsPage{
		basePage:    base(v, "Logs", "logs", account),
		Accounts:    v.options(account),
		ShowAccount: v.admin && account == "",
		Form:        logsForm{Model: f.Model, Since: q.Get("since"), Until: q.Get("until")},
	}
	p.Notices = notices
	for _, name := range vendors() {
		p.Vendors = append(p.Vendors, option{Value: name, Label: name, Selected: name == f.Vendor})
	}
	for _, k := range v.keys {
		if account == "" && v.admin || k.AccountID == account {
			label := k.Hint
			if label == "" {
				label = k.ID
			}
			p.Keys = append(p.Keys, option{Value: k.ID, Label: label, Selected: k.ID == f.KeyID})
		}
	}
	slices.SortFunc(p.Keys, func(a, b option) int { return strings.Compare(a.Value, b.Value) })
	for c := 2; c <= 5; c++ {
		if c == 3 {
			continue
		}
		val := strconv.Itoa(c) + "xx"
		p.Statuses = append(p.Statuses, option{Value: val, Label: "any " + val, Selected: f.StatusClass == c})
	}
	known := false
	for _, s := range statuses() {
		p.Statuses = append(p.Statuses, option{Value: strconv.Itoa(s), Label: strconv.Itoa(s) + " " + http.StatusText(s), Selected: s == f.Status})
		known = known || s == f.Status
	}
	if f.Status != 0 && !known {
		p.Statuses = append(p.Statuses, option{Value: strconv.Itoa(f.Status), Label: strconv.Itoa(f.Status), Selected: true})
	}
	for _, rg := range logRanges() {
		p.Ranges = append(p.Ranges, option{Value: rg.value, Label: rg.label, Selected: rg.value == q.Get("range")})
	}
	keep := url.Values{}
	for _, k := range filterKeys() {
		if val := strings.TrimSpace(q.Get(k)); val != "" && (k != "account" || v.admin) {
			keep.Set(k, val)
		}
	}
	p.Filtered = f.Model != "" || f.Vendor != "" || f.KeyID != "" || f.Status != 0 || f.StatusClass != 0 || !f.Since.IsZero() || !f.Until.IsZero()
	p.ExportURL = withQuery("/dashboard/logs.csv", keep)
	if len(recs) > d.logsPerPage {
		recs = recs[:d.logsPerPage]
		older := url.Values{}
		for k, vals := range keep {
			older[k] = vals
		}
		older.Set("before", recs[len(recs)-1].RequestID)
		p.OlderURL = withQuery("/dashboard/logs", older)
	}
	if f.Before != "" {
		p.NewestURL = withQuery("/dashboard/logs", keep)
	}
	for i := range recs {
		p.Rows = append(p.Rows, d.view(v, &recs[i], account))
	}
	d.render(w, r, http.StatusOK, "logs", p)
}

// recordView is a record formatted for display.
type recordView struct {
	ID, ShortID, URL                                string
	TimeFull, Clock, Date                           string
	AccountID, AccountName, KeyID, KeyHint          string
	Endpoint, Vendor, Model                         string
	Stream                                          bool
	Status                                          int
	StatusText, StatusClass                         string
	ErrorCode                                       string
	Input, CacheRead, CacheWrite, Output, Reasoning string
	CacheWrite5m, CacheWrite1h, Optimizer           string
	Prompt, Total                                   string
	Reported, HasReportedCost                       bool
	ReportedCost                                    string
	// Charge is exact dollars (eight decimals, the gateway's unit: one
	// precision on every row, what the charge header says); Cost and
	// Markup are brief (four decimals), with the *Exact fields in their
	// titles and the detail view. Vendor cost and markup are shown to
	// the administrator only.
	Cost, Markup, Charge                string
	CostExact, MarkupExact, ChargeExact string
	CostCents, MarkupCents, ChargeCents string
	Charged                             bool
	Latency, TTFB                       string
	Guard, GuardClass, GuardTitle, Note string

	// Disputed is the vendor's cost of prompt tokens it reported beyond
	// the gateway's bound (admin only; HasDisputed when there is any).
	Disputed, DisputedExact, DisputedCents string
	HasDisputed                            bool

	// IncidentURL leads a blocked request to its incident.
	IncidentURL string
}

// view formats r. account is the scope of the page, kept in the detail
// link for the admin.
func (d *Dashboard) view(v *viewer, r *gw.Record, account string) recordView {
	u := r.Usage
	q := url.Values{}
	if v.admin && account != "" {
		q.Set("account", account)
	}
	rv := recordView{
		ID:              r.RequestID,
		ShortID:         shortID(r.RequestID),
		URL:             withQuery("/dashboard/logs/"+url.PathEscape(r.RequestID), q),
		TimeFull:        r.CreatedAt.UTC().Format(timeLayoutMs),
		Clock:           r.CreatedAt.UTC().Format("15:04:05"),
		Date:            r.CreatedAt.UTC().Format("2006-01-02"),
		AccountID:       r.AccountID,
		AccountName:     v.nameOf(r.AccountID),
		KeyID:           r.KeyID,
		Endpoint:        endpointPath(r.Endpoint),
		Vendor:          r.Vendor,
		Model:           prefixedModel(r.Vendor, r.Model),
		Stream:          r.Stream,
		Status:          r.Status,
		StatusText:      http.StatusText(r.Status),
		StatusClass:     statusClass(r.Status),
		ErrorCode:       string(r.ErrorCode),
		Input:           count(u.InputTokens),
		CacheRead:       count(u.CacheReadTokens),
		CacheWrite:      count(u.CacheWriteTokens()),
		CacheWrite5m:    count(u.CacheWrite5mTokens),
		CacheWrite1h:    count(u.CacheWrite1hTokens),
		Output:          count(u.OutputTokens),
		Reasoning:       count(u.ReasoningTokens),
		Optimizer:       count(u.OptimizerTokens),
		Prompt:          count(u.PromptTokens()),
		Total:           count(u.TotalTokens()),
		Reported:        u.Reported,
		HasReportedCost: u.HasReportedCost,
		ReportedCost:    usd(u.ReportedCost),
		Cost:            usdBrief(r.Cost),
		CostExact:       usd(r.Cost),
		CostCents:       cents(r.Cost),
		Charge:          usd(r.Charge),
		ChargeExact:     usd(r.Charge),
		ChargeCents:     cents(r.Charge),
		Charged:         r.Charge != 0,
		Disputed:        usdBrief(r.DisputedCost),
		DisputedExact:   usd(r.DisputedCost),
		DisputedCents:   cents(r.DisputedCost),
		HasDisputed:     r.DisputedCost != 0,
		Latency:         duration(r.Latency),
		TTFB:            duration(r.TTFB),
		Guard:           r.Guard,
		GuardClass:      guardClass(r.Guard),
		Note:            r.Note,
	}
	if rv.Guard == "" {
		// Refused before the guard ran (a bad key, model or body, the
		// balance, a limit).
		rv.Guard, rv.GuardTitle = "not run", "Refused before the guard checked it"
	}
	if r.ErrorCode == gw.CodeRequestBlocked {
		iq := url.Values{"request": {r.RequestID}}
		if v.admin && account != "" {
			iq.Set("account", account)
		}
		rv.IncidentURL = withQuery("/dashboard/incidents", iq)
	}
	// The markup is what the charge adds to the vendor cost; a request
	// that was not charged has none.
	markup := gw.Money(0)
	if r.Charge != 0 {
		markup = r.Charge - r.Cost
	}
	rv.Markup, rv.MarkupExact, rv.MarkupCents = usdBrief(markup), usd(markup), cents(markup)
	if k, ok := v.keys[r.KeyID]; ok {
		rv.KeyHint = k.Hint
	}
	return rv
}

// detailPage is the detail view's data.
type detailPage struct {
	basePage
	R       recordView
	BackURL string
}

// detail shows one request. A record of another account is "not found",
// so that its existence is not revealed.
func (d *Dashboard) detail(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	account := v.scope(r.URL.Query())
	rec, err := d.store.Record(r.Context(), id)
	if err != nil && !errors.Is(err, gw.ErrNotFound) {
		d.fail(w, r, v, err)
		return
	}
	if err != nil || !v.admin && rec.AccountID != v.accountID {
		p := &errorPage{basePage: base(v, "Not found", "logs", account), Heading: "Request not found", Message: "No request with this id is visible to you."}
		d.render(w, r, http.StatusNotFound, "error", p)
		return
	}
	p := &detailPage{basePage: base(v, "Request "+rec.RequestID, "logs", account), R: d.view(v, rec, account)}
	p.BackURL = p.LogsURL
	d.render(w, r, http.StatusOK, "detail", p)
}

// shortID abbreviates a long request id for the log table, keeping its
// prefix and its random tail ("req_…7KQ2M9XW4F"); the full id is in the
// link's title and on the detail page.
func shortID(id string) string {
	const keep = 10
	if len(id) <= 20 {
		return id
	}
	prefix := ""
	if i := strings.IndexByte(id, '_'); i >= 0 && i < 8 {
		prefix = id[:i+1]
	}
	return prefix + "…" + id[len(id)-keep:]
}
