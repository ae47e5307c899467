package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// reconDays is how many days the reconciliation page shows.
const reconDays = 14

// Geometry of the drift chart, in SVG user units.
const (
	driftW, driftH       = 1000, 240
	driftPlotL, driftPlR = 64, 120 // room for the y labels, and the legend on the right
	driftPlotT, driftPlB = 12, 28
	// driftSpan is the drift the chart's y axis spans each way, in
	// parts per million (10%); beyond it a point sits on the edge.
	driftSpan = 100_000
)

// reconPage is the operator's reconciliation page: the ledger against
// the vendors' reports, day by day (see docs/RECONCILIATION.md).
type reconPage struct {
	basePage
	Vendor      string
	Vendors     []string
	Cards       []runCard
	Chart       driftChart
	Rows        []reconRow
	Hidden      int // matching token lines left out of the table
	Adjustments []adjustmentRow
}

type reconRow struct {
	Day, Vendor, Level, Model, Class string
	Ledger, Reported, Drift          string
	Status, StatusClass, Alert, Note string
	Final                            bool
}

type adjustmentRow struct {
	admin.Adjustment
	ApproveURL, DismissURL string
}

// driftChart is the vendor-day drift by day, one line per vendor.
type driftChart struct {
	ViewBox              string
	PlotL, PlotR         string
	Zero, Up, Down       string // y of 0, +2% and -2%
	Grid                 []gridLine
	XLabels              []axisLabel
	Lines                []driftLine
	Empty                bool
	LegendX              string
	Width, Height        int
	ThresholdLabelUpY    string
	ThresholdLabelDownY  string
	ThresholdLabelX      string
	UnreconcilableVendor []string
}

type driftLine struct {
	Vendor, Class, Points string
	LegendY, LegendTextY  string
	Dots                  []runDot
}

func (d *Dashboard) reconciliation(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	now := d.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	first := today.Add(-(reconDays - 1) * 24 * time.Hour)
	vendor := r.URL.Query().Get("vendor")
	p := &reconPage{basePage: base(v, "Reconciliation", "reconciliation", ""), Vendor: vendor}
	all, err := d.admin.Reconciliation(ctx, admin.ReconQuery{Since: first.Format(time.DateOnly)})
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	adjs, err := d.admin.Adjustments(ctx, gw.AdjustmentPending)
	if err != nil {
		d.fail(w, r, v, err)
		return
	}
	alerts, unrec := 0, map[string]bool{}
	for _, l := range all {
		if !slices.Contains(p.Vendors, l.Vendor) {
			p.Vendors = append(p.Vendors, l.Vendor)
		}
		if vendor != "" && l.Vendor != vendor {
			continue
		}
		if l.Alert != "" {
			alerts++
		}
		if l.Status == gw.ReconUnreconcilable && (l.Level == gw.ReconVendor || l.Level == gw.ReconBalance) {
			unrec[l.Vendor] = true
		}
		if l.Level == gw.ReconTokens && l.Alert == "" {
			p.Hidden++
			continue
		}
		p.Rows = append(p.Rows, reconRowOf(l))
	}
	slices.Sort(p.Vendors)
	unrecList := make([]string, 0, len(unrec))
	for vn := range unrec {
		unrecList = append(unrecList, vn)
	}
	slices.Sort(unrecList)
	unrecText := "none"
	if len(unrecList) > 0 {
		unrecText = strings.Join(unrecList, ", ")
	}
	p.Cards = []runCard{
		{Label: "Alerts", Value: strconv.Itoa(alerts), Detail: fmt.Sprintf("last %d days", reconDays)},
		{Label: "Unreconcilable", Value: strconv.Itoa(len(unrecList)), Detail: unrecText},
		{Label: "Adjustments to review", Value: strconv.Itoa(len(adjs)), Detail: "OpenRouter generations"},
	}
	for _, a := range adjs {
		base := "/dashboard/reconciliation/adjustments/" + url.PathEscape(a.RequestID)
		p.Adjustments = append(p.Adjustments, adjustmentRow{Adjustment: a, ApproveURL: base + "/approve", DismissURL: base + "/dismiss"})
	}
	p.Chart = driftChartOf(all, vendor, first, reconDays)
	d.render(w, r, http.StatusOK, "reconciliation", p)
}

func reconRowOf(l admin.ReconLine) reconRow {
	row := reconRow{Day: l.Day, Vendor: l.Vendor, Level: l.Level, Model: l.Model, Class: l.Class, Status: l.Status,
		Alert: l.Alert, Note: l.Note, Final: l.Final, Drift: driftPct(l.DriftPPM)}
	if l.Unit == "tokens" && l.LedgerTokens != nil && l.ReportedTokens != nil {
		row.Ledger, row.Reported = strconv.FormatInt(*l.LedgerTokens, 10), strconv.FormatInt(*l.ReportedTokens, 10)
	} else {
		row.Ledger, row.Reported = "$"+l.LedgerUSD, "$"+l.ReportedUSD
	}
	switch l.Status {
	case gw.ReconMatch:
		row.StatusClass = "ok"
	case gw.ReconDrift, gw.ReconError:
		row.StatusClass = "bad"
	default:
		row.StatusClass = "warn"
		row.Reported, row.Drift = "-", "-"
	}
	if l.Alert == gw.AlertPriceStale {
		row.Note = joinDetail(fmt.Sprintf("our price $%s/Mtok, implied $%s/Mtok", l.OurPriceUSD, l.ImpliedPriceUSD), row.Note)
	}
	return row
}

// driftPct writes parts per million as a signed percentage, two decimals.
func driftPct(ppm int64) string {
	sign := "+"
	if ppm < 0 {
		sign, ppm = "-", -ppm
	}
	return fmt.Sprintf("%s%d.%02d%%", sign, ppm/10_000, (ppm%10_000)/100)
}

// driftChartOf draws each vendor's vendor-day (or balance) drift over
// the days from first.
func driftChartOf(lines []admin.ReconLine, only string, first time.Time, days int) driftChart {
	c := driftChart{ViewBox: fmt.Sprintf("0 0 %d %d", driftW, driftH), Width: driftW, Height: driftH,
		PlotL: itoa(driftPlotL), PlotR: itoa(driftW - driftPlR), LegendX: itoa(driftW - driftPlR + 16)}
	plotW := float64(driftW - driftPlR - driftPlotL)
	plotH := float64(driftH - driftPlotT - driftPlB)
	y := func(ppm int64) float64 {
		ppm = max(min(ppm, driftSpan), -driftSpan)
		return driftPlotT + plotH/2 - float64(ppm)/float64(driftSpan)*plotH/2
	}
	x := func(i int) float64 {
		if days <= 1 {
			return driftPlotL + plotW/2
		}
		return driftPlotL + plotW*float64(i)/float64(days-1)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	c.Zero, c.Up, c.Down = f(y(0)), f(y(20_000)), f(y(-20_000))
	c.ThresholdLabelX, c.ThresholdLabelUpY, c.ThresholdLabelDownY = f(float64(driftW-driftPlR)-4), f(y(20_000)-4), f(y(-20_000)+12)
	for _, g := range []int64{driftSpan, driftSpan / 2, 0, -driftSpan / 2, -driftSpan} {
		c.Grid = append(c.Grid, gridLine{Y: f(y(g)), LabelY: f(y(g) + 4), Label: driftPct(g)})
	}
	for i := 0; i < days; i += 2 {
		c.XLabels = append(c.XLabels, axisLabel{X: f(x(i)), Text: first.Add(time.Duration(i) * 24 * time.Hour).Format("Jan 2")})
	}
	byVendor := map[string]map[int]admin.ReconLine{}
	var vendors []string
	for _, l := range lines {
		if l.Level != gw.ReconVendor && l.Level != gw.ReconBalance || (only != "" && l.Vendor != only) {
			continue
		}
		if l.Status == gw.ReconUnreconcilable || l.Status == gw.ReconError {
			continue
		}
		day, err := time.Parse(time.DateOnly, l.Day)
		if err != nil {
			continue
		}
		i := int(day.Sub(first) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		if byVendor[l.Vendor] == nil {
			byVendor[l.Vendor] = map[int]admin.ReconLine{}
			vendors = append(vendors, l.Vendor)
		}
		byVendor[l.Vendor][i] = l
	}
	slices.Sort(vendors)
	for n, vn := range vendors {
		dl := driftLine{Vendor: vn, Class: "v" + strconv.Itoa(n%6), LegendY: f(float64(driftPlotT + 4 + 20*n)), LegendTextY: f(float64(driftPlotT + 13 + 20*n))}
		var pts []string
		for i := 0; i < days; i++ {
			l, ok := byVendor[vn][i]
			if !ok {
				continue
			}
			px, py := f(x(i)), f(y(l.DriftPPM))
			pts = append(pts, px+","+py)
			dl.Dots = append(dl.Dots, runDot{X: px, Y: py, Title: fmt.Sprintf("%s %s: %s (ledger $%s, vendor $%s)", vn, l.Day, driftPct(l.DriftPPM), l.LedgerUSD, l.ReportedUSD)})
		}
		dl.Points = strings.Join(pts, " ")
		c.Lines = append(c.Lines, dl)
	}
	c.Empty = len(c.Lines) == 0
	return c
}

// decideAdjustment approves or dismisses an adjustment from the page's
// forms, then shows the page again.
func (d *Dashboard) decideAdjustment(status string) func(http.ResponseWriter, *http.Request, *viewer) {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if _, err := d.admin.DecideAdjustment(r.Context(), r.PathValue("id"), status); err != nil {
			d.fail(w, r, v, err)
			return
		}
		http.Redirect(w, r, "/dashboard/reconciliation", http.StatusSeeOther)
	}
}
