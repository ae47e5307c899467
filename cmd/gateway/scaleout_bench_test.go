package main

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkScaleOut is the request path on the scale-out stores: billing
// on PostgreSQL and the key's limits in Redis (limits high enough never
// to deny, so that every request checks them), 16 requests per CPU at
// once, in one process with its client and fake vendor; compare its
// cpu-us/op with BenchmarkPassThrough's direct call. server-cpu-us/op is
// what the PostgreSQL and Redis server processes on this machine spent
// per request meanwhile (other clients of theirs count too). It needs
// GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL.
func BenchmarkScaleOut(b *testing.B) {
	pg, rd := os.Getenv("GATEWAY_TEST_POSTGRES_URL"), os.Getenv("GATEWAY_TEST_REDIS_URL")
	if pg == "" || rd == "" {
		b.Skip("GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL are needed")
	}
	m, _, key := startBenchGateway(b, pg, true, func(c *Config) {
		c.RedisURL = rd
		c.RPM, c.TPM = 1<<40, 1<<50
	})
	s0, ok := serverCPU()
	runBench(b, benchEnv{url: "http://" + m.Addr(), path: "/v1/chat/completions", key: key,
		body: chatBody("openai/"+nativeModels["openai"], "Say hello.", false, ""), hdr: http.Header{"Content-Type": {"application/json"}}})
	if s1, ok1 := serverCPU(); ok && ok1 && b.N > 0 {
		var us int64
		for pid, t := range s1 {
			us += t - s0[pid]
		}
		b.ReportMetric(float64(us)/float64(b.N), "server-cpu-us/op")
	}
	assertLedger(b, m)
}

// serverCPU returns the CPU time, in microseconds, of every PostgreSQL
// and Redis server process on this machine, and whether there was any.
func serverCPU() (map[int]int64, bool) {
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
		if name := strings.TrimSpace(string(comm)); err != nil || name != "postgres" && name != "redis-server" {
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
