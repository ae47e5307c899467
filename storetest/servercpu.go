package storetest

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ServerCPU measures the CPU time of this machine's processes with the
// given names (as in /proc/PID/comm, e.g. "postgres", "redis-server"; a
// remote server is not seen) over a benchmark, and reports it per op as
// server-cpu-us/op when any runs here. Other clients of the same servers
// count too: compare runs on quiet servers. Call the returned function
// when the benchmark's loop ended.
func ServerCPU(b *testing.B, names ...string) func() {
	start, ok := serverCPUTimes(names)
	return func() {
		end, ok2 := serverCPUTimes(names)
		if !ok || !ok2 || b.N == 0 {
			return
		}
		var us int64
		for pid, t := range end {
			us += t - start[pid]
		}
		b.ReportMetric(float64(us)/float64(b.N), "server-cpu-us/op")
	}
}

// serverCPUTimes returns the user plus system time, in microseconds, of
// every process with one of names, and whether there was any.
func serverCPUTimes(names []string) (map[int]int64, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	out := map[int]int64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || !slices.Contains(names, strings.TrimSpace(string(comm))) {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		k, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			out[pid] = (u + k) * 10_000 // clock ticks of 10 ms
		}
	}
	return out, len(out) > 0
}
