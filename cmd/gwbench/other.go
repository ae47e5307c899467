package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// ourProc is a process of the harness's own (this one, the floor, the
// gateways), with the CPU it is pinned to (-1: not pinned).
type ourProc struct {
	pid int
	cpu int
}

// meter measures how much CPU the machine's other processes (builds,
// tests, anything not started by the harness) take while a run lasts:
// the busy time of /proc/stat minus the CPU time of the harness's own
// processes. It needs no privileges and no idle machine; on a shared
// machine it tells a disturbed run from a clean one.
type meter struct {
	ours []ourProc
}

// cpuStat is a snapshot: busy time per CPU and in all, and each of our
// processes' CPU time.
type cpuStat struct {
	at    time.Time
	busy  []time.Duration // per CPU
	total time.Duration
	ours  []time.Duration
}

func (m *meter) snap() cpuStat {
	s := cpuStat{at: time.Now()}
	s.busy, s.total, _ = procStat()
	for _, p := range m.ours {
		c, _ := procCPU(p.pid)
		s.ours = append(s.ours, c)
	}
	return s
}

// start begins a measurement for a run on cpus (the target's pinned
// CPUs; nil: the whole machine); the returned function ends it and
// returns the other processes' CPU in cores (CPU seconds per second).
func (m *meter) start(cpus []int) func() float64 {
	s0 := m.snap()
	return func() float64 { return otherCores(s0, m.snap(), m.ours, cpus) }
}

// otherCores is the CPU, in cores, that processes other than ours took
// between two snapshots: on cpus, or on the whole machine when nil.
func otherCores(s0, s1 cpuStat, ours []ourProc, cpus []int) float64 {
	wall := s1.at.Sub(s0.at)
	if wall <= 0 || len(s0.busy) == 0 || len(s1.busy) != len(s0.busy) || len(s0.ours) != len(ours) || len(s1.ours) != len(ours) {
		return 0
	}
	var busy, mine time.Duration
	if cpus == nil {
		busy = s1.total - s0.total
		for i := range ours {
			mine += s1.ours[i] - s0.ours[i]
		}
	} else {
		on := map[int]bool{}
		for _, c := range cpus {
			on[c] = true
			if c >= 0 && c < len(s0.busy) {
				busy += s1.busy[c] - s0.busy[c]
			}
		}
		for i, p := range ours {
			if on[p.cpu] {
				mine += s1.ours[i] - s0.ours[i]
			}
		}
	}
	return max(float64(busy-mine)/float64(wall), 0)
}

// procStat returns each CPU's busy time (user, nice, system, irq,
// softirq, steal) and their sum, from /proc/stat.
func procStat() ([]time.Duration, time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, 0, err
	}
	var per []time.Duration
	var total time.Duration
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || n < 0 || n > 4096 {
			continue
		}
		var ticks int64
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return nil, 0, err
			}
			ticks += v
		}
		for len(per) <= n {
			per = append(per, 0)
		}
		per[n] = time.Duration(ticks) * clockTick
		total += per[n]
	}
	if len(per) == 0 {
		return nil, 0, errors.New("no cpu lines in /proc/stat")
	}
	return per, total, nil
}
