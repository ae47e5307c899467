package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(floorEnv); spec != "" {
		// Re-run as the floor by the end-to-end test.
		if err := serveFloor(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHarnessEndToEnd runs the whole harness at a tiny rate: the real
// gateway binary (built here) and the floor against the mock, every
// vendor in JSON and SSE, streams and a max-rate probe, two rounds.
// Every request must succeed through both, and the table must carry
// every figure.
func TestHarnessEndToEnd(t *testing.T) {
	cfg := Config{
		Repeats: 2, Duration: 300 * time.Millisecond, Rates: []float64{20},
		Latencies: []time.Duration{0}, Vendors: []string{"openai", "anthropic", "google", "responses", "gemini", "embeddings"},
		Streams: 4, Chunks: 3, Spacing: time.Millisecond,
		MaxRate: true, Step: 200 * time.Millisecond, MaxStart: 100, Ceiling: 100, P99Limit: time.Second,
		Searches: 2, Warmup: 100 * time.Millisecond, MaxOther: 64, Redo: 1,
	}
	var log bytes.Buffer
	rep, err := Run(t.Context(), cfg, &log)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if got := strings.Join(rep.Targets, ","); got != "floor,gateway" {
		t.Errorf("targets %s", got)
	}
	// 1 rate (openai JSON) + openai SSE + 4 vendors x 2 + embeddings
	// (JSON only) + streams + responses streams + gemini streams + max
	// rate: each once.
	if len(rep.Scenarios) != 15 {
		t.Errorf("%d scenarios, want 15", len(rep.Scenarios))
	}
	seen := map[string]bool{}
	for _, sc := range rep.Scenarios {
		if seen[sc.Name] {
			t.Errorf("scenario %q twice", sc.Name)
		}
		seen[sc.Name] = true
	}
	for i, sc := range rep.Scenarios {
		for j, name := range rep.Targets {
			for rnd := range cfg.Repeats {
				r := rep.Results[i][j][rnd]
				if r.Errors != 0 || r.OK == 0 || r.OK != r.Sent {
					t.Errorf("%s on %s, round %d: %d sent, %d ok, %d errors (%s)", sc.Name, name, rnd+1, r.Sent, r.OK, r.Errors, r.FirstErr)
				}
				if r.P50 <= 0 || r.P99 < r.P50 {
					t.Errorf("%s on %s: p50 %v p99 %v", sc.Name, name, r.P50, r.P99)
				}
				if r.RSSPeak <= 0 {
					t.Errorf("%s on %s: no RSS sampled", sc.Name, name)
				}
				if sc.Kind == "streams" && (r.TTFB50 <= 0 || r.TTFB50 > r.P50) {
					t.Errorf("%s on %s: TTFB p50 %v, stream p50 %v", sc.Name, name, r.TTFB50, r.P50)
				}
				if sc.Kind == "maxrate" && rep.MaxRates[i][j][rnd] != 100 {
					t.Errorf("%s on %s: max rate %v, want the only probe, 100", sc.Name, name, rep.MaxRates[i][j][rnd])
				}
				if sc.Kind == "maxrate" && len(rep.Searches[i][j][rnd]) != 2 {
					t.Errorf("%s on %s: searches %v, want 2", sc.Name, name, rep.Searches[i][j][rnd])
				}
				if r.Other < 0 || r.Busy || r.Redone != 0 {
					t.Errorf("%s on %s: other CPU %v busy %v redone %d with a limit of 64 cores", sc.Name, name, r.Other, r.Busy, r.Redone)
				}
			}
		}
	}
	md := rep.Markdown()
	for _, want := range []string{"| scenario | figure | floor #1 | gateway #1 | floor #2 | gateway #2 | gateway vs floor |",
		"| 20 req/s, mock 0s, openai JSON | CPU per request |", "| 20 req/s, mock 0s, google SSE | p99 |",
		"| 4 streams x 3 chunks, 1ms apart | TTFB p50 |", "| max rate, p99 < 1s | req/s |", "| max rate, p99 < 1s | searches | 100 / 100 |",
		"| 20 req/s, mock 0s, openai JSON | other CPU |", "load average", "the run took"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if t.Failed() {
		t.Log(log.String())
	}
}

// TestHarnessAgentRows runs the agent rows alone at a tiny rate, with
// the guard-off gateway beside: every agent turn of every shape is
// served by the floor and both gateways, the rate rows measure the time
// to the first byte, and the table names the rows and the new target.
func TestHarnessAgentRows(t *testing.T) {
	cfg := Config{
		Repeats: 1, Duration: 300 * time.Millisecond, Rates: []float64{20}, Latencies: []time.Duration{0},
		Streams: 4, Chunks: 3, Spacing: time.Millisecond,
		MaxRate: true, Step: 200 * time.Millisecond, Ceiling: agentMaxStart, P99Limit: time.Second,
		Searches: 1, Warmup: 100 * time.Millisecond, MaxOther: 64, Redo: 1,
		AgentSizes: []int{20}, AgentShapes: []string{"C", "M", "R"}, AgentRates: []float64{10}, AgentStreams: 5,
		AgentOnly: true, NoGuard: true,
	}
	var log bytes.Buffer
	rep, err := Run(t.Context(), cfg, &log)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if got := strings.Join(rep.Targets, ","); got != "floor,gateway,gateway-noguard" {
		t.Errorf("targets %s", got)
	}
	// 3 shapes x (1 rate + streams + max rate), no small-body rows.
	if len(rep.Scenarios) != 9 {
		t.Errorf("%d scenarios, want 9", len(rep.Scenarios))
	}
	for i, sc := range rep.Scenarios {
		if sc.Shape == "" || sc.Size != 20 {
			t.Errorf("scenario %q is not an agent row of 20 KB", sc.Name)
		}
		for j, name := range rep.Targets {
			r := rep.Results[i][j][0]
			if sc.Kind == "maxrate" {
				// Whether a probe passed depends on the machine; that the
				// search ran does not.
				if len(rep.Searches[i][j][0]) != 1 {
					t.Errorf("%s on %s: searches %v, want 1", sc.Name, name, rep.Searches[i][j][0])
				}
				continue
			}
			if r.Errors != 0 || r.OK == 0 || r.OK != r.Sent {
				t.Errorf("%s on %s: %d sent, %d ok, %d errors (%s)", sc.Name, name, r.Sent, r.OK, r.Errors, r.FirstErr)
			}
			if r.TTFB50 <= 0 || r.TTFB50 > r.P50 {
				t.Errorf("%s on %s: TTFB p50 %v, p50 %v", sc.Name, name, r.TTFB50, r.P50)
			}
			if sc.Kind == "streams" && r.Sent != 5 {
				t.Errorf("%s on %s: %d streams, want 5", sc.Name, name, r.Sent)
			}
		}
	}
	md := rep.Markdown()
	for _, want := range []string{"| agent C 20 KB, 10 turns/s, streamed | TTFB p50 |", "| agent R 20 KB, 10 turns/s, streamed | CPU per request |",
		"| agent M 20 KB, 5 streams at once x 3 chunks, 20ms apart | RSS peak |", "| agent M 20 KB max rate, p99 < 1s | req/s |",
		"gateway-noguard vs floor", "Agent rows:"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if t.Failed() {
		t.Log(log.String())
	}
}

// TestMockWireFormats: every answer of the mock parses in its vendor's
// format, streams end as the vendor's do, and usage is present.
func TestMockWireFormats(t *testing.T) {
	m := NewMock(MockConfig{Chunks: 3})
	srv := httptest.NewServer(m)
	defer srv.Close()
	for _, c := range []struct {
		vendor string
		stream bool
		last   string // the last event's data
		usage  string
	}{
		{"openai", false, "", `"completion_tokens":3`},
		{"openai", true, "[DONE]", `"completion_tokens":3`},
		{"anthropic", false, "", `"output_tokens":3`},
		{"anthropic", true, `{"type":"message_stop"}`, `"output_tokens":3`},
		{"google", false, "", `"candidatesTokenCount":3`},
		{"google", true, "", `"candidatesTokenCount":3`},
	} {
		path, hdr, body := vendorRequest(c.vendor, c.stream)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(body))
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name := fmt.Sprintf("%s stream=%t", c.vendor, c.stream)
		if resp.StatusCode != 200 || !strings.Contains(string(raw), c.usage) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, raw)
			continue
		}
		if !c.stream {
			if !json.Valid(raw) || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
				t.Errorf("%s: not JSON: %s", name, raw)
			}
			continue
		}
		var datas []string
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				datas = append(datas, d)
			}
		}
		if len(datas) < 3 {
			t.Errorf("%s: %d events", name, len(datas))
			continue
		}
		for _, d := range datas {
			if d != "[DONE]" && !json.Valid([]byte(d)) {
				t.Errorf("%s: event not JSON: %s", name, d)
			}
		}
		if c.last != "" && datas[len(datas)-1] != c.last {
			t.Errorf("%s: last event %s, want %s", name, datas[len(datas)-1], c.last)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(d, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(d, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("empty p50 = %v", p)
	}
}

func TestProcSampling(t *testing.T) {
	// Burn some CPU in this process and see it counted.
	sample := startSampling([]int{os.Getpid()})
	deadline := time.Now().Add(100 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	cpu, rss := sample()
	if cpu <= 0 || rss <= 0 {
		t.Errorf("cpu %v rss %d after busy work (%d)", cpu, rss, x)
	}
}

// TestOtherCPU: the CPU of the harness's own processes is left out of
// the other processes' share, on the machine and on pinned CPUs.
func TestOtherCPU(t *testing.T) {
	per, total, err := procStat()
	if err != nil || len(per) == 0 || total <= 0 {
		t.Fatalf("procStat = %v, %v, %v", per, total, err)
	}
	at := time.Unix(1000, 0)
	ours := []ourProc{{pid: 1, cpu: 0}, {pid: 2, cpu: 1}, {pid: 3, cpu: 1}}
	s0 := cpuStat{at: at, busy: []time.Duration{10 * time.Second, 20 * time.Second}, total: 30 * time.Second,
		ours: []time.Duration{time.Second, 2 * time.Second, 0}}
	// Two seconds later: CPU 0 was busy 1.5 s (0.5 s of it ours), CPU 1
	// 2 s (1.2 s ours, in two processes).
	s1 := cpuStat{at: at.Add(2 * time.Second), busy: []time.Duration{11500 * time.Millisecond, 22 * time.Second}, total: 33500 * time.Millisecond,
		ours: []time.Duration{1500 * time.Millisecond, 2800 * time.Millisecond, 400 * time.Millisecond}}
	for _, c := range []struct {
		cpus []int
		want float64
	}{{nil, (3.5 - 1.7) / 2}, {[]int{1}, (2 - 1.2) / 2}, {[]int{0}, (1.5 - 0.5) / 2}, {[]int{0, 1}, (3.5 - 1.7) / 2}} {
		if got := otherCores(s0, s1, ours, c.cpus); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("otherCores on %v = %v, want %v", c.cpus, got, c.want)
		}
	}
	// Our own use above the CPU's busy time (ticks counted apart) is no
	// negative share.
	s1.ours[1] = 10 * time.Second
	if got := otherCores(s0, s1, ours, []int{1}); got != 0 {
		t.Errorf("otherCores with more of ours than busy = %v, want 0", got)
	}
}

// TestMaxRateRedoesDisturbedProbes: a probe the trial marks busy is
// reported so, and the trial function runs every probe.
func TestMaxRateRedoesDisturbedProbes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tg := Target{Name: "t", URLs: []string{srv.URL}, Request: func(bool) (string, http.Header, []byte) { return "/", http.Header{}, nil }}
	calls := 0
	trial := func(f func() Result) Result {
		calls++
		r := f()
		r.Busy, r.Redone = calls == 1, 1
		return r
	}
	c := newClient(16)
	defer c.CloseIdleConnections()
	best, r := MaxRate(t.Context(), c, tg, 50, 100, 100*time.Millisecond, 0, time.Second, trial)
	if best != 100 || calls != 2 || !r.Busy || r.Redone != 2 {
		t.Errorf("best %v after %d trials, busy %v redone %d; want 100 after 2 (50, 100), busy, 2 redone", best, calls, r.Busy, r.Redone)
	}
}
