package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Markdown renders the report: one row per figure, a column per target
// and round, and the gateway's ratio to the floor (or its added latency)
// per round.
func (r *Report) Markdown() string {
	var b strings.Builder
	c := r.Config
	pin := "not pinned (no taskset or one CPU): targets and load share the CPUs"
	if r.Pinned {
		pin = "targets pinned to CPU 1, load generator and mock vendor to CPU 0 (taskset)"
	}
	fmt.Fprintf(&b, "gwbench %s, %d CPUs, %s; load average %s at the start, %s at the end; %d rounds alternating; rate runs %v each, open loop.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), pin, r.LoadStart, r.LoadEnd, c.Repeats, c.Duration)
	b.WriteString("| scenario | figure |")
	for rnd := range c.Repeats {
		for _, t := range r.Targets {
			fmt.Fprintf(&b, " %s #%d |", t, rnd+1)
		}
	}
	gws := r.Targets[1:]
	for _, g := range gws {
		fmt.Fprintf(&b, " %s vs floor |", g)
	}
	b.WriteString("\n|---|---|")
	for range c.Repeats * len(r.Targets) {
		b.WriteString("---|")
	}
	for range gws {
		b.WriteString("---|")
	}
	b.WriteString("\n")

	type fig struct {
		name string
		val  func(i, j, rnd int) float64
		show func(float64) string
		cmp  string // "ratio" or "added"
	}
	res := func(i, j, rnd int) Result { return r.Results[i][j][rnd] }
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	showMS := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	okRate := fig{"ok / errors", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).OK) }, nil, ""}
	figs := map[string][]fig{
		"rate": {
			okRate,
			{"p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P50) }, showMS, "added"},
			{"p99", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P99) }, showMS, "added"},
			{"CPU per request", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio"},
			{"RSS peak", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).RSSPeak >> 20) }, func(v float64) string { return fmt.Sprintf("%.0f MB", v) }, "ratio"},
		},
		"streams": {
			okRate,
			{"TTFB p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB50) }, showMS, "added"},
			{"TTFB p99", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB99) }, showMS, "added"},
			{"stream p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P50) }, showMS, "added"},
			{"CPU per stream", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio"},
			{"RSS peak", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).RSSPeak >> 20) }, func(v float64) string { return fmt.Sprintf("%.0f MB", v) }, "ratio"},
		},
		"maxrate": {
			{"req/s", func(i, j, rnd int) float64 { return r.MaxRates[i][j][rnd] }, func(v float64) string { return fmt.Sprintf("%.0f", v) }, "ratio"},
			{"CPU per request there", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio"},
		},
	}
	for i, sc := range r.Scenarios {
		for _, f := range figs[sc.Kind] {
			fmt.Fprintf(&b, "| %s | %s |", sc.Name, f.name)
			for rnd := range c.Repeats {
				for j := range r.Targets {
					if f.show == nil {
						x := res(i, j, rnd)
						fmt.Fprintf(&b, " %d / %d |", x.OK, x.Errors)
						continue
					}
					fmt.Fprintf(&b, " %s |", f.show(f.val(i, j, rnd)))
				}
			}
			for g := range gws {
				var parts []string
				for rnd := range c.Repeats {
					fl, gv := f.val(i, 0, rnd), f.val(i, g+1, rnd)
					switch f.cmp {
					case "ratio":
						if fl > 0 {
							parts = append(parts, fmt.Sprintf("%.2fx", gv/fl))
						} else {
							parts = append(parts, "-")
						}
					case "added":
						parts = append(parts, fmt.Sprintf("%+.2f ms", gv-fl))
					}
				}
				fmt.Fprintf(&b, " %s |", strings.Join(parts, ", "))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
