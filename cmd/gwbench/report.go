package main

import (
	"fmt"
	"runtime"
	"slices"
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
	fmt.Fprintf(&b, "gwbench %s, %d CPUs, %s; load average %s at the start, %s at the end; %d rounds alternating; rate runs %v each, open loop; the run took %v.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), pin, r.LoadStart, r.LoadEnd, c.Repeats, c.Duration, r.Took.Round(time.Second))
	if len(c.AgentSizes) > 0 {
		fmt.Fprintf(&b, "Agent rows: turns of %d coding-agent conversations (fixed seed; a long system prompt, 18 tools with JSON schemas, rounds of tool calls and file-sized results), each turn the whole history again plus one round, streamed; new conversations for every run and target. The floor gets the same bodies with the vendor's model name.\n\n", agentConversations)
	}
	fmt.Fprintf(&b, "\"other CPU\" is what processes not started by the harness took during the run, in cores (of the target's CPUs when pinned, else of the machine); a run above %.2f was redone up to %d times, and a figure marked * is from a run still above it. Max rate: the median of %d searches (each failing probe tried twice).\n\n",
		c.MaxOther, c.Redo, max(c.Searches, 1))
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
		svc  bool   // only for targets on PostgreSQL ("-" for the others)
	}
	res := func(i, j, rnd int) Result { return r.Results[i][j][rnd] }
	other := fig{"other CPU", func(i, j, rnd int) float64 { return res(i, j, rnd).Other }, func(v float64) string { return fmt.Sprintf("%.2f", v) }, "", false}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	showMS := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	okRate := fig{"ok / errors", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).OK) }, nil, "", false}
	figs := map[string][]fig{
		"rate": {
			okRate,
			{"p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P50) }, showMS, "added", false},
			{"p99", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P99) }, showMS, "added", false},
			{"CPU per request", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio", false},
			{"RSS peak", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).RSSPeak >> 20) }, func(v float64) string { return fmt.Sprintf("%.0f MB", v) }, "ratio", false},
			{"PostgreSQL + Redis CPU per request", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).ServerCPUPerReq()) }, showMS, "", true},
			{"Redis scripts per request", func(i, j, rnd int) float64 { return res(i, j, rnd).RedisPerReq() }, func(v float64) string {
				if v < 0 {
					return "?"
				}
				return fmt.Sprintf("%.2f", v)
			}, "", true},
			other,
		},
		"streams": {
			okRate,
			{"TTFB p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB50) }, showMS, "added", false},
			{"TTFB p99", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB99) }, showMS, "added", false},
			{"stream p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).P50) }, showMS, "added", false},
			{"CPU per stream", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio", false},
			{"RSS peak", func(i, j, rnd int) float64 { return float64(res(i, j, rnd).RSSPeak >> 20) }, func(v float64) string { return fmt.Sprintf("%.0f MB", v) }, "ratio", false},
			other,
		},
		"maxrate": {
			{"req/s", func(i, j, rnd int) float64 { return r.MaxRates[i][j][rnd] }, func(v float64) string { return fmt.Sprintf("%.0f", v) }, "ratio", false},
			{"CPU per request there", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).CPUPerReq()) }, showMS, "ratio", false},
			{"searches", nil, nil, "searches", false},
			other,
		},
	}
	// An agent rate row adds the time to the first byte (its turns
	// stream), from the scheduled send time.
	figs["agent rate"] = slices.Insert(slices.Clone(figs["rate"]), 3,
		fig{"TTFB p50", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB50) }, showMS, "added", false},
		fig{"TTFB p99", func(i, j, rnd int) float64 { return ms(res(i, j, rnd).TTFB99) }, showMS, "added", false})
	anySvc := slices.Contains(r.Services, true)
	for i, sc := range r.Scenarios {
		kind := sc.Kind
		if sc.Shape != "" && kind == "rate" {
			kind = "agent rate"
		}
		for _, f := range figs[kind] {
			if f.svc && !anySvc {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s |", sc.Name, f.name)
			for rnd := range c.Repeats {
				for j := range r.Targets {
					if f.cmp == "searches" {
						var all []string
						for _, v := range r.Searches[i][j][rnd] {
							all = append(all, fmt.Sprintf("%.0f", v))
						}
						fmt.Fprintf(&b, " %s |", strings.Join(all, " / "))
						continue
					}
					if f.svc && !r.Services[j] {
						b.WriteString(" - |")
						continue
					}
					if f.show == nil {
						x := res(i, j, rnd)
						fmt.Fprintf(&b, " %d / %d%s |", x.OK, x.Errors, busyMark(x))
						continue
					}
					mark := busyMark(res(i, j, rnd))
					if f.name == "other CPU" && res(i, j, rnd).Redone > 0 {
						mark += fmt.Sprintf(" (redone %d)", res(i, j, rnd).Redone)
					}
					fmt.Fprintf(&b, " %s%s |", f.show(f.val(i, j, rnd)), mark)
				}
			}
			for g := range gws {
				var parts []string
				for rnd := range c.Repeats {
					if f.val == nil {
						break
					}
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

// busyMark is "*" for a run whose machine stayed busy through its redos.
func busyMark(r Result) string {
	if r.Busy {
		return "*"
	}
	return ""
}
