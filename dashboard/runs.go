package dashboard

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/runs"
)

// runsListSize bounds the runs the list shows.
const runsListSize = 200

// Geometry of a run's charts, in SVG user units.
const (
	runChartW, runChartH = 640, 200
	runPlotL, runPlotR   = 72, 8
	runPlotT, runPlotB   = 12, 24
)

// runsPage lists an account's runs (X-Gateway-Run), the dearest first:
// the account's own for a key's session, the chosen account's for the
// administrator.
type runsPage struct {
	basePage
	Accounts []accountOption
	Account  string
	NeedPick bool // the administrator chose no account yet
	Rows     []runRow
}

type runRow struct {
	ID, URL, Parent, ParentURL string
	Spend, SpendExact          string
	Budget, Remaining          string
	Requests, Errors           string
	Incidents                  int64
	Status, StatusClass        string
	FirstSeen, LastSeen        string
}

// runPage is one run: where its money went (by model, over its steps),
// its children and its timeline.
type runPage struct {
	basePage
	Account  string
	Run      runRow
	CSVURL   string
	Cards    []runCard
	Models   []runModel
	ModelSVG runBars
	Spend    runLine
	Children []runRow
	Steps    []runStep
	More     bool
}

type runCard struct{ Label, Value, Exact, Detail string }

type runModel struct {
	Model, Spend, Share string
	Requests, Errors    int64
	Input, Output       string
}

// runBars is the horizontal bars of spend by model.
type runBars struct {
	ViewBox string
	Width   int
	Height  int
	Bars    []runBar
}

type runBar struct {
	Y, LabelY, W, ValueX string
	Label, Value, Title  string
}

// runLine is the run's own spend after each step.
type runLine struct {
	ViewBox  string
	Points   string
	Dots     []runDot
	Grid     []gridLine
	PlotL    string
	PlotR    string
	Baseline string
	Empty    bool
}

type runDot struct{ X, Y, Title string }

type runStep struct {
	N                        int
	Time, TimeFull           string
	RequestID, RequestURL    string
	Model, Vendor, Endpoint  string
	Input, CacheRead, Output string
	Charge, ChargeExact      string
	Spent                    string
	Latency                  string
	Status                   int
	StatusClass, ErrorCode   string
	Fallbacks                int
	Guard                    string
}

func (d *Dashboard) runStore() (gw.RunStore, bool) {
	rs, ok := d.store.(gw.RunStore)
	return rs, ok
}

func (d *Dashboard) runs(w http.ResponseWriter, r *http.Request, v *viewer) {
	account := v.scope(r.URL.Query())
	p := &runsPage{basePage: base(v, "Runs", "runs", account), Accounts: v.options(account), Account: account}
	rs, ok := d.runStore()
	if !ok || account == "" {
		p.NeedPick = v.admin
		d.render(w, r, http.StatusOK, "runs", p)
		return
	}
	list, err := rs.Runs(r.Context(), account, runsListSize)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	now := d.now()
	for i := range list {
		p.Rows = append(p.Rows, runRowOf(&list[i], v, account, now))
	}
	d.render(w, r, http.StatusOK, "runs", p)
}

func runURL(v *viewer, account, id, suffix string) string {
	q := url.Values{}
	if v.admin && account != "" {
		q.Set("account", account)
	}
	return withQuery("/dashboard/runs/"+url.PathEscape(id)+suffix, q)
}

func runRowOf(run *gw.Run, v *viewer, account string, now time.Time) runRow {
	row := runRow{ID: run.ID, URL: runURL(v, account, run.ID, ""), Spend: usdBrief(run.Spend), SpendExact: usd(run.Spend),
		Requests: count(run.Requests), Errors: count(run.Errors), Incidents: run.Incidents,
		FirstSeen: run.FirstSeen.UTC().Format(timeLayoutMs), LastSeen: run.LastSeen.UTC().Format(timeLayoutMs),
		Budget: "none", Remaining: "—", Status: "active", StatusClass: "ok"}
	if run.ParentID != "" {
		row.Parent, row.ParentURL = run.ParentID, runURL(v, account, run.ParentID, "")
	}
	if left, ok := run.Remaining(); ok {
		row.Budget, row.Remaining = usdBrief(run.Budget), usdBrief(left)
	}
	switch {
	case run.ExpiredAt(now):
		row.Status, row.StatusClass = "expired", "bad"
	case run.Budget > 0 && run.Spend >= run.Budget:
		row.Status, row.StatusClass = "budget spent", "bad"
	case run.MaxRequests > 0 && run.Requests >= run.MaxRequests:
		row.Status, row.StatusClass = "step limit", "bad"
	case run.InFlight > 0:
		row.Status = fmt.Sprintf("%d in flight", run.InFlight)
	}
	return row
}

// runReport reads the run the path names in the viewer's account; ok
// false when the page was answered (not found, or a failure).
func (d *Dashboard) runReport(w http.ResponseWriter, r *http.Request, v *viewer) (*runs.Report, string, bool) {
	account := v.scope(r.URL.Query())
	rs, ok := d.runStore()
	id := r.PathValue("id")
	if !ok || account == "" || !runs.ValidID(id) {
		d.notFound(w, r)
		return nil, "", false
	}
	rep, err := runs.Build(r.Context(), rs, account, id, d.now())
	if errors.Is(err, gw.ErrNotFound) {
		d.notFound(w, r)
		return nil, "", false
	}
	if err != nil {
		d.fail(w, r, v, err)
		return nil, "", false
	}
	return rep, account, true
}

func (d *Dashboard) run(w http.ResponseWriter, r *http.Request, v *viewer) {
	rep, account, ok := d.runReport(w, r, v)
	if !ok {
		return
	}
	rs, _ := d.runStore()
	run, err := rs.Run(r.Context(), account, rep.ID)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	now := d.now()
	p := &runPage{basePage: base(v, "Run "+rep.ID, "runs", account), Account: account, Run: runRowOf(run, v, account, now),
		CSVURL: runURL(v, account, rep.ID, ".csv"), More: rep.StepsTruncated}
	p.Cards = []runCard{
		{Label: "Spend", Value: usdBrief(run.Spend), Exact: usd(run.Spend), Detail: "children included"},
		{Label: "Budget left", Value: p.Run.Remaining, Detail: "of " + p.Run.Budget},
		{Label: "Requests", Value: count(run.Requests), Detail: fmt.Sprintf("%d failed, %d in flight", run.Errors, run.InFlight)},
		{Label: "Guard incidents", Value: count(run.Incidents)},
		{Label: "Tokens", Value: compact(rep.Tokens.Input + rep.Tokens.CacheRead + rep.Tokens.CacheWrite + rep.Tokens.Output),
			Detail: fmt.Sprintf("%s in, %s cached, %s out", compact(rep.Tokens.Input), compact(rep.Tokens.CacheRead), compact(rep.Tokens.Output))},
	}
	if run.MaxRequests > 0 {
		p.Cards[2].Detail += fmt.Sprintf("; at most %d", run.MaxRequests)
	}
	var own gw.Money
	spends := make([]gw.Money, len(rep.Steps))
	for i, s := range rep.Steps {
		c, _ := gw.ParseUSD(s.Charge)
		own += c
		spends[i] = own
		vendor, _, _ := strings.Cut(s.Model, "/")
		st := runStep{N: i + 1, Time: s.CreatedAt.UTC().Format("15:04:05.000"), TimeFull: s.CreatedAt.UTC().Format(timeLayoutMs),
			RequestID: s.RequestID, RequestURL: "/dashboard/logs/" + url.PathEscape(s.RequestID), Model: s.Model, Vendor: vendor, Endpoint: s.Endpoint,
			Input: count(s.Tokens.Input), CacheRead: count(s.Tokens.CacheRead), Output: count(s.Tokens.Output),
			Charge: usdBrief(c), ChargeExact: usd(c), Spent: usdBrief(own), Latency: duration(time.Duration(s.LatencyMS) * time.Millisecond),
			Status: s.Status, StatusClass: statusClass(s.Status), ErrorCode: s.ErrorCode, Fallbacks: max(s.Attempts-1, 0), Guard: s.Guard}
		if v.admin && account != "" {
			st.RequestURL += "?account=" + url.QueryEscape(account)
		}
		p.Steps = append(p.Steps, st)
	}
	var most gw.Money
	for _, m := range rep.Models {
		s, _ := gw.ParseUSD(m.Spend)
		most = max(most, s)
	}
	for _, m := range rep.Models {
		s, _ := gw.ParseUSD(m.Spend)
		share := "—"
		if own > 0 {
			share = strconv.FormatFloat(100*float64(s)/float64(own), 'f', 1, 64) + "%"
		}
		p.Models = append(p.Models, runModel{Model: m.Model, Spend: usdBrief(s), Share: share, Requests: m.Requests, Errors: m.Errors,
			Input: count(m.Tokens.Input + m.Tokens.CacheRead + m.Tokens.CacheWrite), Output: count(m.Tokens.Output)})
	}
	p.ModelSVG = modelBars(rep.Models, most)
	p.Spend = spendLine(spends)
	for i := range rep.Children {
		c := rep.Children[i]
		kid, err := rs.Run(r.Context(), account, c.ID)
		if err == nil {
			p.Children = append(p.Children, runRowOf(kid, v, account, now))
		}
	}
	d.render(w, r, http.StatusOK, "run", p)
}

// modelBars draws the spend by model as horizontal bars, the dearest
// first, scaled to the dearest.
func modelBars(models []runs.ModelUse, most gw.Money) runBars {
	const rowH, labelW, valueW = 26, 220, 110
	b := runBars{Width: runChartW, Height: max(len(models), 1)*rowH + 8}
	b.ViewBox = fmt.Sprintf("0 0 %d %d", b.Width, b.Height)
	span := float64(runChartW - labelW - valueW)
	for i, m := range models {
		s, _ := gw.ParseUSD(m.Spend)
		w := 0.0
		if most > 0 {
			w = span * float64(s) / float64(most)
		}
		y := 4 + i*rowH
		b.Bars = append(b.Bars, runBar{Y: strconv.Itoa(y), LabelY: strconv.Itoa(y + 15), W: ff(max(w, 1)), ValueX: ff(labelW + max(w, 1) + 6),
			Label: m.Model, Value: usdBrief(s), Title: fmt.Sprintf("%s: %s over %d requests", m.Model, usd(s), m.Requests)})
	}
	return b
}

// spendLine draws the run's own spend after each step.
func spendLine(spends []gw.Money) runLine {
	l := runLine{ViewBox: fmt.Sprintf("0 0 %d %d", runChartW, runChartH), PlotL: ff(runPlotL), PlotR: ff(runChartW - runPlotR),
		Baseline: ff(runChartH - runPlotB)}
	if len(spends) == 0 || spends[len(spends)-1] == 0 {
		l.Empty = true
		return l
	}
	top := spends[len(spends)-1]
	w, h := float64(runChartW-runPlotL-runPlotR), float64(runChartH-runPlotT-runPlotB)
	for i := 0; i <= 4; i++ {
		v := gw.Money(int64(top) * int64(i) / 4)
		y := runPlotT + h - h*float64(i)/4
		l.Grid = append(l.Grid, gridLine{Y: ff(y), LabelY: ff(y + 4), Label: usdShort(v)})
	}
	pts := []string{ff(runPlotL) + "," + ff(runPlotT+h)}
	for i, s := range spends {
		x := runPlotL + w*float64(i+1)/float64(len(spends))
		y := runPlotT + h - h*float64(s)/float64(top)
		pts = append(pts, ff(x)+","+ff(y))
		l.Dots = append(l.Dots, runDot{X: ff(x), Y: ff(y), Title: fmt.Sprintf("step %d: %s", i+1, usd(s))})
	}
	l.Points = strings.Join(pts, " ")
	return l
}

func ff(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// runOrCSV serves /dashboard/runs/{id}, and {id}.csv as the CSV export
// (a run id never ends in ".csv" alone: the export wins).
func (d *Dashboard) runOrCSV(w http.ResponseWriter, r *http.Request, v *viewer) {
	if id, ok := strings.CutSuffix(r.PathValue("id"), ".csv"); ok {
		r.SetPathValue("id", id)
		d.runCSV(w, r, v)
		return
	}
	d.run(w, r, v)
}

// runCSV exports a run's timeline: one row per step.
func (d *Dashboard) runCSV(w http.ResponseWriter, r *http.Request, v *viewer) {
	rep, _, ok := d.runReport(w, r, v)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="run-`+rep.ID+`.csv"`)
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"step", "created_at", "request_id", "endpoint", "model", "status", "error_code", "input_tokens", "cache_read_tokens",
		"cache_write_tokens", "output_tokens", "reasoning_tokens", "charge_usd", "run_spent_usd", "latency_ms", "attempts", "guard"})
	for i, s := range rep.Steps {
		_ = cw.Write([]string{strconv.Itoa(i + 1), s.CreatedAt.UTC().Format(time.RFC3339Nano), s.RequestID, s.Endpoint, csvSafe(s.Model),
			strconv.Itoa(s.Status), s.ErrorCode, strconv.FormatInt(s.Tokens.Input, 10), strconv.FormatInt(s.Tokens.CacheRead, 10),
			strconv.FormatInt(s.Tokens.CacheWrite, 10), strconv.FormatInt(s.Tokens.Output, 10), strconv.FormatInt(s.Tokens.Reasoning, 10),
			s.Charge, s.Spent, strconv.FormatInt(s.LatencyMS, 10), strconv.Itoa(s.Attempts), s.Guard})
	}
	cw.Flush()
}

// csvSafe keeps a spreadsheet from reading a cell as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// runDefaultsText is a key's run defaults in a line.
func (d *Dashboard) runDefaultsText(ctx context.Context, keyID string) string {
	rd, err := d.admin.RunDefaults(ctx, keyID)
	if err != nil {
		return "unknown"
	}
	return runDefaultsLine(rd)
}

func runDefaultsLine(rd *admin.RunDefaults) string {
	var parts []string
	if rd.BudgetUSD != nil {
		if m, err := gw.ParseUSD(*rd.BudgetUSD); err == nil {
			parts = append(parts, usdBrief(m)+" a run")
		}
	}
	if rd.MaxRequests > 0 {
		parts = append(parts, fmt.Sprintf("%d steps", rd.MaxRequests))
	}
	if rd.IdleSeconds > 0 {
		parts = append(parts, "idle "+(time.Duration(rd.IdleSeconds)*time.Second).String())
	}
	if len(parts) == 0 {
		return "no defaults"
	}
	return strings.Join(parts, ", ")
}

// setRunDefaults sets a key's run defaults from the accounts page: a
// budget in US dollars, max requests and an idle expiry ("30m"); empty
// fields are none.
func (d *Dashboard) setRunDefaults(ctx context.Context, r *http.Request, p *accountsPage) error {
	req := admin.RunDefaultsRequest{BudgetUSD: strings.TrimSpace(r.PostFormValue("budget_usd"))}
	if s := strings.TrimSpace(r.PostFormValue("max_requests")); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return gw.Errorf(gw.CodeInvalidRequest, "max requests must be a whole number, not %q", s)
		}
		req.MaxRequests = n
	}
	if s := strings.TrimSpace(r.PostFormValue("idle")); s != "" {
		idle, err := time.ParseDuration(s)
		if err != nil || idle < 0 {
			return gw.Errorf(gw.CodeInvalidRequest, "the idle expiry is a duration like 30m or 2h, not %q", s)
		}
		req.IdleSeconds = int64(idle / time.Second)
	}
	rd, err := d.admin.SetRunDefaults(ctx, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	p.Done = "Run defaults of " + rd.KeyID + ": " + runDefaultsLine(rd) + "."
	return nil
}
