package dashboard

import (
	"math"
	"strconv"
)

// Chart geometry, in SVG user units. An SVG is drawn at its own size in
// CSS pixels and only shrinks, never grows, with its container, so that
// its text keeps the page's size: a wide chart spans the page at 1440
// pixels, a narrow one half of it.
const (
	chartWide   = 1320
	chartNarrow = 640
	chartH      = 240
	chartLeft   = 64 // room for the y-axis labels
	chartRight  = 8
	chartTop    = 12
	chartBottom = 28 // room for the x-axis labels
)

// series is one stacked part of a bar.
type series struct {
	Name, Class string
}

// chartSpec describes a stacked bar chart over the time buckets.
type chartSpec struct {
	ID, Title, Unit string
	Series          []series
	// Width is the chart's width: chartWide or chartNarrow.
	Width int
	// Value returns a bucket's value per series, in the series' unit
	// (micro-cents for money); Axis formats an axis value exactly; Tip
	// describes bucket i for its tooltip.
	Value func(totals) []int64
	Axis  func(int64) string
	Tip   func(i int, b totals) string
}

// chart is a chart ready for the template: every coordinate computed.
type chart struct {
	ID, Title, Unit string
	Legend          []series
	ViewBox         string
	Width, Height   int
	// Wide marks the chart that spans the page.
	Wide    bool
	Grid    []gridLine
	Bars    []bar
	XLabels []axisLabel
	// Baseline is the y of the zero line; PlotLeft and PlotRight bound it.
	Baseline, PlotLeft, PlotRight string
	Empty                         bool
}

// gridLine is a horizontal rule with its value.
type gridLine struct {
	Y, LabelY, Label string
}

// axisLabel is a label under the x axis.
type axisLabel struct {
	X, Text string
}

// bar is one bucket: a transparent hit area carrying the tooltip, and
// its stacked segments.
type bar struct {
	X, W, HitY, HitH string
	Title            string
	Segments         []segment
}

// segment is one series' part of a bar.
type segment struct {
	Y, H, Class string
}

// num formats a coordinate with at most two decimals.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }

// niceStep returns the smallest "nice" number at least v: 1, 1.5, 2,
// 2.5, 3, 4, 5, 6 or 8 times a power of ten, kept to integers (at least
// 1). It is integer-only, so axis values stay exact for money.
func niceStep(v int64) int64 {
	if v <= 1 {
		return 1
	}
	for p := int64(1); p <= (1<<62)/100; p *= 10 {
		for _, m := range []int64{10, 15, 20, 25, 30, 40, 50, 60, 80} {
			if c := m * p; c%10 == 0 && c/10 >= v {
				return c / 10
			}
		}
	}
	return v
}

// build lays out the chart for buckets; labels[i] names bucket i, shown
// for every every-th bucket.
func (s chartSpec) build(buckets []totals, labels []string, every int) chart {
	chartW := s.Width
	c := chart{ID: s.ID, Title: s.Title, Unit: s.Unit, Legend: s.Series, Width: chartW, Height: chartH, Wide: chartW == chartWide,
		ViewBox: "0 0 " + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH)}
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	base := float64(chartH - chartBottom)
	c.Baseline, c.PlotLeft, c.PlotRight = num(base), num(chartLeft), num(float64(chartW-chartRight))

	values := make([][]int64, len(buckets))
	var peak int64
	for i, b := range buckets {
		values[i] = s.Value(b)
		var sum int64
		for _, v := range values[i] {
			sum += v
		}
		peak = max(peak, sum)
	}
	c.Empty = peak == 0
	// Four rules at whole multiples of a nice step: labels never round.
	step := niceStep((peak + 3) / 4)
	top := 4 * step
	for q := int64(1); q <= 4; q++ {
		v := step * q
		y := base - plotH*float64(v)/float64(top)
		c.Grid = append(c.Grid, gridLine{Y: num(y), LabelY: num(y + 4), Label: s.Axis(v)})
	}
	c.Grid = append(c.Grid, gridLine{Y: num(base), LabelY: num(base + 4), Label: s.Axis(0)})

	n := len(buckets)
	slot := plotW / float64(max(n, 1))
	gap := slot * 0.2
	for i := range buckets {
		x := float64(chartLeft) + float64(i)*slot
		b := bar{X: num(x + gap/2), W: num(slot - gap), HitY: num(chartTop), HitH: num(plotH), Title: s.Tip(i, buckets[i])}
		y := base
		for j, v := range values[i] {
			if v <= 0 {
				continue
			}
			h := plotH * float64(v) / float64(top)
			y -= h
			b.Segments = append(b.Segments, segment{Y: num(y), H: num(h), Class: s.Series[j].Class})
		}
		c.Bars = append(c.Bars, b)
		if i%every == 0 {
			c.XLabels = append(c.XLabels, axisLabel{X: num(x + slot/2), Text: labels[i]})
		}
	}
	return c
}
