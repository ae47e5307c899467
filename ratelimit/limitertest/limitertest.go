// Package limitertest is the conformance suite for gw.Limiter
// implementations: the in-memory limiter in package ratelimit and the
// Redis one both run it, so they enforce the same window with the same
// answers.
//
// Run checks what can be checked in real time with small limits (bursts,
// token reservations, Adjust, concurrency); RunClock drives an injected
// clock through whole minutes to check the sliding window, exact
// RetryAfter values and the never-more-than-the-limit bound.
package limitertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Run runs the real-time behaviours against limiters made by newLimiter.
// Each subtest uses keys of its own, unique to this run, so limiters may
// share state (one Redis) across subtests and runs.
func Run(t *testing.T, newLimiter func(t *testing.T) gw.Limiter) {
	t.Helper()
	for _, tc := range realTime {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newLimiter(t), uniqueKey(t))
		})
	}
}

// RunClock runs the behaviours that need a controlled clock. newLimiter
// must return a limiter that reads the time only from now. The clock
// starts on a whole second when newLimiter is called and only moves
// forward from there unless a test says otherwise; the limiter's
// one-second buckets must begin on whole seconds of that clock (for
// instance on Unix seconds, or at the time the limiter was made).
func RunClock(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) gw.Limiter) {
	t.Helper()
	for _, tc := range clocked {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: start}
			lim := newLimiter(t, clk.Now)
			tc.run(t, lim, clk, uniqueKey(t))
		})
	}
}

// start is where the test clock begins: a whole second, far from the
// real time so that state left by a real-time test never meets it.
var start = time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to start+d.
func (c *clock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = start.Add(d)
}

func uniqueKey(t *testing.T) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random key: %v", err)
	}
	return "lt-" + hex.EncodeToString(b[:])
}

// step is one call in a scripted test: at the clock offset, Allow (or,
// with adjust set, Adjust) on the key, and what must come back.
type step struct {
	at      time.Duration
	lim     gw.Limit
	tokens  int64 // Allow: estimate
	adjust  int64 // non-zero: call Adjust with this delta instead
	allowed bool
	remain  int64         // RequestsRemaining, when RPM is set
	retry   time.Duration // exact RetryAfter when denied; 0: not checked
}

func allow(t *testing.T, l gw.Limiter, key string, lim gw.Limit, tokens int64) gw.LimitDecision {
	t.Helper()
	d, err := l.Allow(context.Background(), key, lim, tokens)
	if err != nil {
		t.Fatalf("Allow(%q, %+v, %d): %v", key, lim, tokens, err)
	}
	if d.RequestsLimit != max(lim.RPM, 0) {
		t.Fatalf("Allow(%+v): RequestsLimit = %d, want %d", lim, d.RequestsLimit, lim.RPM)
	}
	if !d.Allowed && d.RetryAfter <= 0 {
		t.Fatalf("Allow(%+v, %d) denied with RetryAfter %v, want > 0", lim, tokens, d.RetryAfter)
	}
	if d.Allowed && d.RetryAfter != 0 {
		t.Fatalf("Allow(%+v, %d) admitted with RetryAfter %v, want 0", lim, tokens, d.RetryAfter)
	}
	return d
}

func adjust(t *testing.T, l gw.Limiter, key string, lim gw.Limit, delta int64) {
	t.Helper()
	if err := l.Adjust(context.Background(), key, lim, delta); err != nil {
		t.Fatalf("Adjust(%q, %+v, %d): %v", key, lim, delta, err)
	}
}

// script runs steps in order, without a clock when clk is nil.
func script(t *testing.T, l gw.Limiter, clk *clock, key string, steps []step) {
	t.Helper()
	for i, s := range steps {
		if clk != nil {
			clk.Set(s.at)
		}
		if s.adjust != 0 {
			adjust(t, l, key, s.lim, s.adjust)
			continue
		}
		d := allow(t, l, key, s.lim, s.tokens)
		if d.Allowed != s.allowed {
			t.Fatalf("step %d (at %v, %+v, %d tokens): Allowed = %v, want %v (decision %+v)",
				i, s.at, s.lim, s.tokens, d.Allowed, s.allowed, d)
		}
		if s.lim.RPM > 0 && d.RequestsRemaining != s.remain {
			t.Fatalf("step %d: RequestsRemaining = %d, want %d", i, d.RequestsRemaining, s.remain)
		}
		if s.retry != 0 && d.RetryAfter != s.retry {
			t.Fatalf("step %d (at %v): RetryAfter = %v, want %v", i, s.at, d.RetryAfter, s.retry)
		}
	}
}

var realTime = []struct {
	name string
	run  func(t *testing.T, l gw.Limiter, key string)
}{
	{"ZeroLimitsAreUnlimited", func(t *testing.T, l gw.Limiter, key string) {
		for i := range 1000 {
			d := allow(t, l, key, gw.Limit{}, 1e9)
			if !d.Allowed || d.RequestsLimit != 0 || d.RequestsRemaining != 0 {
				t.Fatalf("call %d: %+v, want admitted with no request limit", i, d)
			}
		}
		adjust(t, l, key, gw.Limit{}, 1e9)
	}},
	{"BurstAdmitsExactlyRPM", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 5}
		script(t, l, nil, key, []step{
			{lim: lim, allowed: true, remain: 4},
			{lim: lim, allowed: true, remain: 3},
			{lim: lim, allowed: true, remain: 2},
			{lim: lim, allowed: true, remain: 1},
			{lim: lim, allowed: true, remain: 0},
			{lim: lim, allowed: false, remain: 0},
			{lim: lim, allowed: false, remain: 0},
		})
	}},
	{"DenialRetryAfterIsAboutAWindow", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 1}
		allow(t, l, key, lim, 0)
		d := allow(t, l, key, lim, 0)
		// The count was made in this second or the one before; it
		// leaves the window 61 buckets after its own began.
		if d.Allowed || d.RetryAfter <= 58*time.Second || d.RetryAfter > 61*time.Second {
			t.Fatalf("second request: %+v, want denied with RetryAfter in (58s, 61s]", d)
		}
	}},
	{"TokensCappedByTPM", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 50, allowed: true},
			{lim: lim, tokens: 50, allowed: true},
			{lim: lim, tokens: 1, allowed: false},
			{lim: lim, tokens: 0, allowed: true}, // no tokens: only RPM could deny
		})
	}},
	{"DeniedRequestCountsNothing", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 3, TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 90, allowed: true, remain: 2},
			{lim: lim, tokens: 20, allowed: false, remain: 2}, // tokens deny: no request counted
			{lim: lim, tokens: 20, allowed: false, remain: 2},
			{lim: lim, tokens: 10, allowed: true, remain: 1}, // no tokens were reserved either
			{lim: lim, tokens: 0, allowed: true, remain: 0},
			{lim: lim, tokens: 0, allowed: false, remain: 0},
		})
	}},
	{"EitherLimitDenies", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 2, TPM: 1000}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 1, allowed: true, remain: 1},
			{lim: lim, tokens: 1, allowed: true, remain: 0},
			{lim: lim, tokens: 1, allowed: false, remain: 0}, // RPM, with tokens to spare
		})
	}},
	{"AdjustRefundFreesTokens", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 100, allowed: true},
			{lim: lim, tokens: 60, allowed: false},
			{lim: lim, adjust: -60},
			{lim: lim, tokens: 60, allowed: true},
			{lim: lim, tokens: 1, allowed: false},
		})
	}},
	{"AdjustChargesExtraTokens", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 10, allowed: true},
			{lim: lim, adjust: 90},
			{lim: lim, tokens: 1, allowed: false},
		})
	}},
	{"AdjustNeverBelowZero", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 10, allowed: true},
			{lim: lim, adjust: -1000},
			{lim: lim, tokens: 100, allowed: true}, // the refund made no credit beyond the limit
			{lim: lim, tokens: 1, allowed: false},
		})
	}},
	{"AdjustOnUnknownKeyRefundsNothing", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, adjust: -50},
			{lim: lim, tokens: 100, allowed: true},
			{lim: lim, tokens: 1, allowed: false},
		})
	}},
	{"AdjustWithUnlimitedTPMIsNoop", func(t *testing.T, l gw.Limiter, key string) {
		script(t, l, nil, key, []step{
			{lim: gw.Limit{RPM: 10}, adjust: 1e6},
			{lim: gw.Limit{RPM: 10, TPM: 100}, tokens: 100, allowed: true, remain: 9},
		})
	}},
	{"OversizedRequestOnlyIntoEmptyWindow", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: 500, allowed: true},
			{lim: lim, tokens: 1, allowed: false},
			{lim: lim, tokens: 500, allowed: false},
		})
		other := key + "-b"
		script(t, l, nil, other, []step{
			{lim: lim, tokens: 1, allowed: true},
			{lim: lim, tokens: 500, allowed: false},
		})
	}},
	{"NegativeEstimateCountsAsZero", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, nil, key, []step{
			{lim: lim, tokens: -50, allowed: true},
			{lim: lim, tokens: 100, allowed: true},
			{lim: lim, tokens: 1, allowed: false},
		})
	}},
	{"KeysAreIndependent", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 1, TPM: 10}
		for i := range 5 {
			k := fmt.Sprintf("%s-%d", key, i)
			script(t, l, nil, k, []step{
				{lim: lim, tokens: 10, allowed: true, remain: 0},
				{lim: lim, tokens: 0, allowed: false, remain: 0},
			})
		}
	}},
	{"LimitChangeAppliesToExistingCounts", func(t *testing.T, l gw.Limiter, key string) {
		script(t, l, nil, key, []step{
			{lim: gw.Limit{RPM: 2}, allowed: true, remain: 1},
			{lim: gw.Limit{RPM: 2}, allowed: true, remain: 0},
			{lim: gw.Limit{RPM: 3}, allowed: true, remain: 0},
			{lim: gw.Limit{RPM: 1}, allowed: false, remain: 0},
		})
	}},
	{"ConcurrentBurstAdmitsExactlyRPM", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{RPM: 50}
		if got := burst(t, l, key, lim, 0, 8, 25); got != 50 {
			t.Fatalf("admitted %d of 200 concurrent requests, want exactly 50", got)
		}
	}},
	{"ConcurrentTokensStayWithinTPM", func(t *testing.T, l gw.Limiter, key string) {
		lim := gw.Limit{TPM: 1000}
		if got := burst(t, l, key, lim, 30, 8, 20); got != 33 {
			t.Fatalf("admitted %d requests of 30 tokens on TPM 1000, want exactly 33", got)
		}
	}},
}

// burst calls Allow workers x each times from workers goroutines and
// returns how many were admitted.
func burst(t *testing.T, l gw.Limiter, key string, lim gw.Limit, tokens int64, workers, each int) int64 {
	t.Helper()
	var admitted, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				d, err := l.Allow(context.Background(), key, lim, tokens)
				if err != nil {
					failed.Add(1)
					continue
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d Allow calls failed", n)
	}
	return admitted.Load()
}

var clocked = []struct {
	name string
	run  func(t *testing.T, l gw.Limiter, clk *clock, key string)
}{
	{"WindowSlides", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 3}
		ms := time.Millisecond
		script(t, l, clk, key, []step{
			{at: 250 * ms, lim: lim, allowed: true, remain: 2},
			{at: 250 * ms, lim: lim, allowed: true, remain: 1},
			{at: 900 * ms, lim: lim, allowed: true, remain: 0},
			{at: 900 * ms, lim: lim, allowed: false, remain: 0, retry: 60100 * ms},
			{at: 30 * time.Second, lim: lim, allowed: false, remain: 0, retry: 31 * time.Second},
			// Counts of bucket 0 leave when bucket 61 begins.
			{at: 61*time.Second - ms, lim: lim, allowed: false, remain: 0, retry: ms},
			{at: 61 * time.Second, lim: lim, allowed: true, remain: 2},
			{at: 61 * time.Second, lim: lim, allowed: true, remain: 1},
			{at: 61 * time.Second, lim: lim, allowed: true, remain: 0},
			{at: 62 * time.Second, lim: lim, allowed: false, remain: 0, retry: 60 * time.Second},
		})
	}},
	{"RetryAfterWaitsForTheOldestCount", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 2}
		ms := time.Millisecond
		script(t, l, clk, key, []step{
			{at: 250 * ms, lim: lim, allowed: true, remain: 1},
			{at: 10500 * ms, lim: lim, allowed: true, remain: 0},
			{at: 20 * time.Second, lim: lim, allowed: false, remain: 0, retry: 41 * time.Second},
			{at: 61 * time.Second, lim: lim, allowed: true, remain: 0},
			{at: 61 * time.Second, lim: lim, allowed: false, remain: 0, retry: 10 * time.Second},
			{at: 71 * time.Second, lim: lim, allowed: true, remain: 0},
		})
	}},
	{"TokenRetryAfterWaitsForEnoughTokens", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{TPM: 100}
		ms := time.Millisecond
		script(t, l, clk, key, []step{
			{at: 250 * ms, lim: lim, tokens: 40, allowed: true},
			{at: 10500 * ms, lim: lim, tokens: 40, allowed: true},
			{at: 20500 * ms, lim: lim, tokens: 40, allowed: false, retry: 40500 * ms},
			{at: 20500 * ms, lim: lim, tokens: 70, allowed: false, retry: 50500 * ms},
			{at: 20500 * ms, lim: lim, tokens: 20, allowed: true},
			{at: 61 * time.Second, lim: lim, tokens: 40, allowed: true},
		})
	}},
	{"RetryAfterIsTheLongerOfBothLimits", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 2, TPM: 100}
		script(t, l, clk, key, []step{
			{at: 0, lim: lim, tokens: 100, allowed: true, remain: 1},
			{at: 30 * time.Second, lim: lim, tokens: 0, allowed: true, remain: 0},
			{at: 40 * time.Second, lim: lim, tokens: 1, allowed: false, remain: 0, retry: 21 * time.Second},
			{at: 40 * time.Second, lim: gw.Limit{RPM: 3, TPM: 100}, tokens: 0, allowed: true, remain: 0},
			// With RPM 4 only TPM denies, until second 0 leaves.
			{at: 50 * time.Second, lim: gw.Limit{RPM: 4, TPM: 100}, tokens: 1, allowed: false, remain: 1, retry: 11 * time.Second},
			// RPM 2 needs seconds 0 and 30 gone: longer than TPM's wait.
			{at: 50 * time.Second, lim: gw.Limit{RPM: 2, TPM: 100}, tokens: 1, allowed: false, remain: 0, retry: 41 * time.Second},
		})
	}},
	{"AdjustOvershootDelaysNextRequest", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, clk, key, []step{
			{at: 500 * time.Millisecond, lim: lim, tokens: 50, allowed: true},
			{at: 5 * time.Second, lim: lim, adjust: 100},
			{at: 10 * time.Second, lim: lim, tokens: 1, allowed: false, retry: 56 * time.Second},
			{at: 61 * time.Second, lim: lim, tokens: 1, allowed: false, retry: 5 * time.Second},
			{at: 66 * time.Second, lim: lim, tokens: 100, allowed: true},
		})
	}},
	{"AdjustRefundsNewestTokensFirst", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{TPM: 100}
		script(t, l, clk, key, []step{
			{at: 0, lim: lim, tokens: 60, allowed: true},
			{at: 30 * time.Second, lim: lim, tokens: 40, allowed: true},
			{at: 40 * time.Second, lim: lim, adjust: -50}, // 40 from second 30, 10 from second 0
			{at: 40 * time.Second, lim: lim, tokens: 50, allowed: true},
			{at: 40 * time.Second, lim: lim, tokens: 1, allowed: false, retry: 21 * time.Second},
			// Second 0 (50 left) leaves; second 40 (50) stays.
			{at: 61 * time.Second, lim: lim, tokens: 50, allowed: true},
			{at: 61 * time.Second, lim: lim, tokens: 1, allowed: false, retry: 40 * time.Second},
		})
	}},
	{"IdleKeyStartsFresh", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 1, TPM: 10}
		script(t, l, clk, key, []step{
			{at: 0, lim: lim, tokens: 10, allowed: true, remain: 0},
			{at: 10 * time.Minute, lim: lim, tokens: 10, allowed: true, remain: 0},
			{at: 10*time.Minute + 60*time.Second, lim: lim, tokens: 1, allowed: false, remain: 0, retry: time.Second},
		})
	}},
	{"ClockGoingBackFreesNothing", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 1}
		clk.Set(100 * time.Second)
		allow(t, l, key, lim, 0)
		clk.Set(90 * time.Second)
		if d := allow(t, l, key, lim, 0); d.Allowed {
			t.Fatalf("after the clock went back: %+v, want denied", d)
		}
		clk.Set(160 * time.Second)
		if d := allow(t, l, key, lim, 0); d.Allowed {
			t.Fatalf("60s after the count: %+v, want denied", d)
		}
		clk.Set(161 * time.Second)
		if d := allow(t, l, key, lim, 0); !d.Allowed {
			t.Fatalf("61s after the count: %+v, want admitted", d)
		}
	}},
	{"NeverMoreThanRPMInAnyMinute", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{RPM: 7}
		admitted := traffic(t, l, clk, key, lim, func(*mrand.Rand) int64 { return 0 })
		checkWindows(t, admitted, func(int64) int64 { return 1 }, lim.RPM, "requests")
	}},
	{"NeverMoreThanTPMInAnyMinute", func(t *testing.T, l gw.Limiter, clk *clock, key string) {
		lim := gw.Limit{TPM: 500}
		admitted := traffic(t, l, clk, key, lim, func(r *mrand.Rand) int64 { return 1 + r.Int64N(120) })
		checkWindows(t, admitted, func(n int64) int64 { return n }, lim.TPM, "tokens")
	}},
}

type admission struct {
	at     time.Duration
	tokens int64
}

// traffic sends a seeded random stream of requests, far above the limit,
// for 12 minutes of clock time, from one caller that obeys RetryAfter:
// after a denial it waits exactly RetryAfter and sends the same request
// again, which must then be admitted, and would have been denied a
// millisecond earlier. It returns the admitted requests.
func traffic(t *testing.T, l gw.Limiter, clk *clock, key string, lim gw.Limit, size func(*mrand.Rand) int64) []admission {
	t.Helper()
	r := mrand.New(mrand.NewPCG(1, 2))
	var out []admission
	for at := time.Duration(0); at < 12*time.Minute; at += time.Duration(r.Int64N(int64(3 * time.Second))) {
		tokens := size(r)
		clk.Set(at)
		d := allow(t, l, key, lim, tokens)
		if !d.Allowed {
			retryAt := at + d.RetryAfter
			clk.Set(retryAt - time.Millisecond)
			if e := allow(t, l, key, lim, tokens); e.Allowed {
				t.Fatalf("at %v: admitted 1ms before the RetryAfter %v given at %v", retryAt-time.Millisecond, d.RetryAfter, at)
			}
			at = retryAt
			clk.Set(at)
			if e := allow(t, l, key, lim, tokens); !e.Allowed {
				t.Fatalf("at %v: denied after waiting the RetryAfter %v given at %v: %+v", at, d.RetryAfter, at-d.RetryAfter, e)
			}
		}
		out = append(out, admission{at, tokens})
	}
	if len(out) == 0 {
		t.Fatal("nothing admitted")
	}
	return out
}

// checkWindows checks that no 60-second interval holds more than limit,
// and that the limiter was not much stricter than that: over the run it
// admitted at least limit per 62 seconds.
func checkWindows(t *testing.T, admitted []admission, weight func(int64) int64, limit int64, what string) {
	t.Helper()
	var total int64
	for i, a := range admitted {
		var sum int64
		for _, b := range admitted[i:] {
			if b.at-a.at >= window {
				break
			}
			sum += weight(b.tokens)
		}
		if sum > limit {
			t.Fatalf("%d %s admitted in the minute from %v, limit %d", sum, what, a.at, limit)
		}
		total += weight(a.tokens)
	}
	span := admitted[len(admitted)-1].at - admitted[0].at
	if want := int64(span/(62*time.Second)) * limit * 3 / 4; total < want {
		t.Fatalf("%d %s admitted over %v, want at least %d: the window is too strict", total, what, span, want)
	}
}

// window mirrors the limiters' window for the checks above.
const window = time.Minute
