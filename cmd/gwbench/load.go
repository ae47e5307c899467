package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Target is what the load goes to: the request to send and the process
// to measure.
type Target struct {
	Name string
	// URLs are the bases (e.g. http://127.0.0.1:9000) of the target's
	// instances; requests go to them in turn.
	URLs []string
	// Pids are the measured processes (their CPU times add up; the
	// resident size is the largest one's); none: not measured.
	Pids []int
	// CPUs are the CPUs the target's processes are pinned to (nil: not
	// pinned), where the CPU of other processes is measured.
	CPUs []int
	// Request returns the path, headers and body of one request.
	Request func(stream bool) (path string, hdr http.Header, body []byte)
	// Services, when set, measures the store's servers (PostgreSQL and
	// Redis) during the target's runs.
	Services *services
	// TTFB makes the constant-rate runs measure the time to the first
	// body byte too (from the scheduled send time, as the latency).
	TTFB bool
}

// Result is one run's figures.
type Result struct {
	Sent, OK, Errors int
	Elapsed          time.Duration
	P50, P99         time.Duration // latency (open loop: from the scheduled send time)
	TTFB50, TTFB99   time.Duration // streams: to the first body byte
	CPU              time.Duration // the target's user+system time during the run
	RSSPeak          int64         // bytes, sampled every 50 ms
	FirstErr         string
	// Other is the CPU the machine's other processes used during the
	// run, in cores: on the target's CPUs when it is pinned, else on the
	// whole machine. Redone counts the runs thrown away because it was
	// above the limit; Busy says it still was on the last one.
	Other  float64
	Redone int
	Busy   bool
	// ServerCPU is the CPU time PostgreSQL's and Redis's processes took
	// during the run, and RedisCmds the scripts Redis ran (-1:
	// unknown), for a target with Services.
	ServerCPU time.Duration
	RedisCmds int64
}

// CPUPerReq is the target's CPU time per successful request.
func (r Result) CPUPerReq() time.Duration {
	if r.OK == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.OK)
}

// ServerCPUPerReq is the store's servers' CPU time per successful
// request.
func (r Result) ServerCPUPerReq() time.Duration {
	if r.OK == 0 {
		return 0
	}
	return r.ServerCPU / time.Duration(r.OK)
}

// RedisPerReq is the Redis scripts run per request sent (-1: unknown).
func (r Result) RedisPerReq() float64 {
	if r.RedisCmds < 0 || r.Sent == 0 {
		return -1
	}
	return float64(r.RedisCmds) / float64(r.Sent)
}

// newClient returns a client for loopback load: plenty of idle
// connections, a bounded time per request, no proxy from the
// environment.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
}

// maxInFlight bounds the open-loop generator: past it a due request is
// counted as an error instead of piling up goroutines.
const maxInFlight = 4096

// Rate sends rate requests per second for d, on schedule whatever the
// answers (open loop), and measures latency from each request's
// scheduled time. Requests still unanswered drain after the schedule
// ends are cancelled and count as errors, which bounds a run against a
// saturated target.
func Rate(ctx context.Context, c *http.Client, t Target, rate float64, d, drain time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, d+drain)
	defer cancel()
	n := int(rate * d.Seconds())
	lat := make([]time.Duration, n)
	ttfb := make([]time.Duration, n)
	ok := make([]bool, n)
	var inFlight atomic.Int64
	var firstErr atomic.Pointer[string]
	fail := func(err error) {
		s := err.Error()
		firstErr.CompareAndSwap(nil, &s)
	}
	sample := startSampling(t.Pids)
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			select {
			case <-time.After(w):
			case <-ctx.Done():
				n = i
			}
		}
		if ctx.Err() != nil {
			n = i
			break
		}
		if inFlight.Load() >= maxInFlight {
			fail(errors.New("more than 4096 requests in flight"))
			continue
		}
		inFlight.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inFlight.Add(-1)
			path, hdr, body := t.Request(false)
			var first func()
			if t.TTFB {
				first = func() { ttfb[i] = time.Since(due) }
			}
			if err := do(ctx, c, t.URLs[i%len(t.URLs)]+path, hdr, body, first); err != nil {
				fail(err)
				return
			}
			lat[i] = time.Since(due)
			ok[i] = true
		}()
	}
	wg.Wait()
	r := Result{Sent: n, Elapsed: time.Since(start)}
	var got, first []time.Duration
	for i := range n {
		if ok[i] {
			got = append(got, lat[i])
			first = append(first, ttfb[i])
		}
	}
	r.OK, r.Errors = len(got), n-len(got)
	r.P50, r.P99 = percentile(got, 0.50), percentile(got, 0.99)
	if t.TTFB {
		r.TTFB50, r.TTFB99 = percentile(first, 0.50), percentile(first, 0.99)
	}
	r.CPU, r.RSSPeak = sample()
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	return r
}

// Streams runs n streamed requests at once and measures the time to the
// first byte of each body and the whole stream.
func Streams(ctx context.Context, c *http.Client, t Target, n int) Result {
	lat := make([]time.Duration, n)
	ttfb := make([]time.Duration, n)
	ok := make([]bool, n)
	var firstErr atomic.Pointer[string]
	sample := startSampling(t.Pids)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			path, hdr, body := t.Request(true)
			t0 := time.Now()
			err := do(ctx, c, t.URLs[i%len(t.URLs)]+path, hdr, body, func() { ttfb[i] = time.Since(t0) })
			if err != nil {
				s := err.Error()
				firstErr.CompareAndSwap(nil, &s)
				return
			}
			lat[i] = time.Since(t0)
			ok[i] = true
		})
	}
	wg.Wait()
	r := Result{Sent: n, Elapsed: time.Since(start)}
	var got, first []time.Duration
	for i := range n {
		if ok[i] {
			got = append(got, lat[i])
			first = append(first, ttfb[i])
		}
	}
	r.OK, r.Errors = len(got), n-len(got)
	r.P50, r.P99 = percentile(got, 0.50), percentile(got, 0.99)
	r.TTFB50, r.TTFB99 = percentile(first, 0.50), percentile(first, 0.99)
	r.CPU, r.RSSPeak = sample()
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	return r
}

// MaxRate finds the highest constant rate the target serves with p99
// under limit and no errors: it doubles from start while runs pass, then
// bisects between the last pass and the first failure for steps more
// runs. A failing probe is run once more before it counts as a failure,
// so that one stall of a shared machine does not end the search. Each
// probe runs through trial (which redoes a run the machine's other work
// disturbed; nil: run once). It returns the best passing rate (0 if
// none) and its run, marked Busy when any probe that decided the search
// was.
func MaxRate(ctx context.Context, c *http.Client, t Target, start, ceiling float64, step time.Duration, steps int, limit time.Duration, trial func(func() Result) Result) (float64, Result) {
	if trial == nil {
		trial = func(f func() Result) Result { return f() }
	}
	ok := func(r Result) bool { return r.Errors == 0 && r.OK > 0 && r.P99 < limit }
	// A probe that passes answers within limit; past a second the run
	// has failed anyway.
	drain := max(time.Second, limit)
	busy, redone := false, 0
	probe := func(rate float64) (Result, bool) {
		run := func() Result { return Rate(ctx, c, t, rate, step, drain) }
		r := trial(run)
		if !ok(r) && ctx.Err() == nil {
			r = trial(run)
		}
		busy, redone = busy || r.Busy, redone+r.Redone
		return r, ok(r)
	}
	var best float64
	var bestRun Result
	lo, hi := 0.0, 0.0
	for rate := start; rate <= ceiling && ctx.Err() == nil; rate *= 2 {
		r, pass := probe(rate)
		if !pass {
			hi = rate
			break
		}
		lo, best, bestRun = rate, rate, r
	}
	for hi != 0 {
		if ctx.Err() != nil || steps == 0 || hi-lo < max(lo*0.05, 1) {
			break
		}
		steps--
		mid := (lo + hi) / 2
		r, pass := probe(mid)
		if pass {
			lo, best, bestRun = mid, mid, r
		} else {
			hi = mid
		}
	}
	bestRun.Busy, bestRun.Redone = busy, redone
	return best, bestRun
}

// do sends one request and reads the whole answer; first, when not nil,
// is called at the first body byte. A status other than 200 is an error.
func do(ctx context.Context, c *http.Client, url string, hdr http.Header, body []byte, first func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = hdr
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if first != nil {
		var b [1]byte
		if _, err := io.ReadFull(resp.Body, b[:]); err != nil {
			return fmt.Errorf("first byte: %w", err)
		}
		first()
	}
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, msg)
	}
	return nil
}

// percentile returns the p-quantile of d (nearest rank), 0 when empty.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// startSampling starts sampling the resident memory of pids every 50 ms;
// the returned function stops it and returns the CPU time the processes
// used meanwhile (summed) and the highest resident size one of them had.
// No pids measures nothing.
func startSampling(pids []int) func() (time.Duration, int64) {
	if len(pids) == 0 {
		return func() (time.Duration, int64) { return 0, 0 }
	}
	cpu := func() time.Duration {
		var sum time.Duration
		for _, pid := range pids {
			c, _ := procCPU(pid)
			sum += c
		}
		return sum
	}
	cpu0 := cpu()
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			for _, pid := range pids {
				if rss, err := procRSS(pid); err == nil && rss > peak.Load() {
					peak.Store(rss)
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() (time.Duration, int64) {
		close(stop)
		<-done
		return cpu() - cpu0, peak.Load()
	}
}

// clockTick is the unit of /proc/<pid>/stat times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU returns the user plus system time of pid from /proc.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from its ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// procRSS returns the resident set size of pid from /proc, in bytes.
func procRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}
