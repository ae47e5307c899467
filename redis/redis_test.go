package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratelimit"
	"github.com/gwlabs/gateway/ratelimit/limitertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client returns a client for the test Redis, or skips the test.
func client(t testing.TB) *goredis.Client {
	t.Helper()
	u := os.Getenv("GATEWAY_TEST_REDIS_URL")
	if u == "" {
		t.Skip("GATEWAY_TEST_REDIS_URL is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis limiter tests")
	}
	c, err := ParseURL(u)
	if err != nil {
		t.Fatalf("GATEWAY_TEST_REDIS_URL: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping test redis: %v", err)
	}
	return c
}

// prefix returns a key prefix unique to this test run and deletes its
// keys when the test ends.
func prefix(t testing.TB, c *goredis.Client) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	p := "gwtest:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, p+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return p
}

func TestConformance(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	limitertest.Run(t, func(t *testing.T) gw.Limiter {
		return New(c, Options{Prefix: p})
	})
}

// TestConformanceDeferred: with Adjust's corrections deferred to the
// key's next Allow, the limiter's own answers are the same.
func TestConformanceDeferred(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	limitertest.Run(t, func(t *testing.T) gw.Limiter {
		l := New(c, Options{Prefix: p, AdjustDelay: time.Hour})
		t.Cleanup(func() { l.Close() })
		return l
	})
}

// TestDeferredAdjust: a deferred correction makes no round trip of its
// own, rides on the key's next Allow, and reaches another instance once
// flushed (by the timer, or by Close).
func TestDeferredAdjust(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	ctx := context.Background()
	lim := gw.Limit{TPM: 100}
	t.Run("RidesOnAllow", func(t *testing.T) {
		a := New(c, Options{Prefix: p, AdjustDelay: time.Hour})
		defer a.Close()
		b := New(c, Options{Prefix: p})
		if d, err := a.Allow(ctx, "ride", lim, 50); err != nil || !d.Allowed {
			t.Fatalf("Allow: %+v, %v", d, err)
		}
		if err := a.Adjust(ctx, "ride", lim, 50); err != nil {
			t.Fatal(err)
		}
		// No round trip: the key is as the Allow left it.
		if got := c.HGetAll(ctx, p+"ride").Val(); tokensIn(got) != 50 {
			t.Fatalf("after a deferred Adjust the key holds %d tokens, want the 50 of the Allow only", tokensIn(got))
		}
		// The other instance does not see it yet; this one does.
		if d, err := b.Allow(ctx, "ride", lim, 50); err != nil || !d.Allowed {
			t.Fatalf("other instance before the correction arrived: %+v, %v; want admitted", d, err)
		}
		if d, err := a.Allow(ctx, "ride", lim, 1); err != nil || d.Allowed {
			t.Fatalf("this instance after its correction: %+v, %v; want denied (50+50+50 > 100)", d, err)
		}
		if got := c.HGetAll(ctx, p+"ride").Val(); tokensIn(got) != 150 {
			t.Fatalf("the Allow carried the correction: key holds %d tokens, want 150", tokensIn(got))
		}
	})
	t.Run("RefundRidesOnDeniedAllow", func(t *testing.T) {
		a := New(c, Options{Prefix: p, AdjustDelay: time.Hour})
		defer a.Close()
		if d, err := a.Allow(ctx, "refund", lim, 100); err != nil || !d.Allowed {
			t.Fatalf("Allow: %+v, %v", d, err)
		}
		if err := a.Adjust(ctx, "refund", lim, -30); err != nil {
			t.Fatal(err)
		}
		// Denied (70 + 40 > 100), yet the refund is applied.
		if d, err := a.Allow(ctx, "refund", lim, 40); err != nil || d.Allowed {
			t.Fatalf("Allow: %+v, %v; want denied", d, err)
		}
		if got := c.HGetAll(ctx, p+"refund").Val(); tokensIn(got) != 70 {
			t.Fatalf("key holds %d tokens, want 70", tokensIn(got))
		}
	})
	t.Run("FlushedByTimer", func(t *testing.T) {
		a := New(c, Options{Prefix: p, AdjustDelay: 10 * time.Millisecond})
		defer a.Close()
		if _, err := a.Allow(ctx, "timer", lim, 10); err != nil {
			t.Fatal(err)
		}
		a.Adjust(ctx, "timer", lim, 20)
		a.Adjust(ctx, "other-timer", lim, 5)
		for deadline := time.Now().Add(30 * time.Second); tokensIn(c.HGetAll(ctx, p+"timer").Val()) != 30 || tokensIn(c.HGetAll(ctx, p+"other-timer").Val()) != 5; {
			if time.Now().After(deadline) {
				t.Fatalf("corrections not flushed: %v %v", c.HGetAll(ctx, p+"timer").Val(), c.HGetAll(ctx, p+"other-timer").Val())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("FlushedByClose", func(t *testing.T) {
		a := New(c, Options{Prefix: p, AdjustDelay: time.Hour})
		if _, err := a.Allow(ctx, "close", lim, 10); err != nil {
			t.Fatal(err)
		}
		a.Adjust(ctx, "close", lim, -4)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if got := tokensIn(c.HGetAll(ctx, p+"close").Val()); got != 6 {
			t.Fatalf("after Close the key holds %d tokens, want 6", got)
		}
		// Closed: Adjust calls Redis itself.
		a.Adjust(ctx, "close", lim, 4)
		if got := tokensIn(c.HGetAll(ctx, p+"close").Val()); got != 10 {
			t.Fatalf("Adjust after Close: key holds %d tokens, want 10", got)
		}
	})
}

// tokensIn sums a key hash's token buckets.
func tokensIn(h map[string]string) int64 {
	var n int64
	for f, v := range h {
		if strings.HasPrefix(f, "t") {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

func TestConformanceClock(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	limitertest.RunClock(t, func(t *testing.T, now func() time.Time) gw.Limiter {
		return New(c, Options{Prefix: p, Now: now})
	})
}

// TestTwoInstancesShareTheLimit is two gateway instances, each with its
// own connection pool, bursting three times the limit at once.
func TestTwoInstancesShareTheLimit(t *testing.T) {
	c1 := client(t)
	c2 := client(t)
	p := prefix(t, c1)
	instances := []*Limiter{New(c1, Options{Prefix: p}), New(c2, Options{Prefix: p})}
	for _, tc := range []struct {
		name   string
		lim    gw.Limit
		tokens int64
		want   int64
	}{
		{"RPM", gw.Limit{RPM: 40}, 0, 40},
		{"TPM", gw.Limit{TPM: 4000}, 100, 40},
		{"Both", gw.Limit{RPM: 30, TPM: 4000}, 100, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "two-" + tc.name
			var admitted, failed atomic.Int64
			var wg sync.WaitGroup
			// 3 x the limit: 60 calls from each instance, 6 goroutines each.
			for _, l := range instances {
				for range 6 {
					wg.Go(func() {
						for range tc.want / 2 {
							d, err := l.Allow(context.Background(), key, tc.lim, tc.tokens)
							if err != nil {
								failed.Add(1)
							} else if d.Allowed {
								admitted.Add(1)
							}
						}
					})
				}
			}
			wg.Wait()
			if failed.Load() != 0 {
				t.Fatalf("%d calls failed", failed.Load())
			}
			if got := admitted.Load(); got != tc.want {
				t.Fatalf("admitted %d of %d across two instances, want exactly %d", got, 6*tc.want, tc.want)
			}
			// Either instance now sees the other's counts.
			for i, l := range instances {
				d, err := l.Allow(context.Background(), key, tc.lim, tc.tokens)
				if err != nil || d.Allowed {
					t.Fatalf("instance %d after the burst: %+v, %v; want denied", i, d, err)
				}
			}
		})
	}
}

func TestKeyExpiresAfterTheWindow(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	l := New(c, Options{Prefix: p})
	ctx := context.Background()
	if _, err := l.Allow(ctx, "ttl", gw.Limit{RPM: 5}, 0); err != nil {
		t.Fatal(err)
	}
	got, err := c.PTTL(ctx, p+"ttl").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got <= 61*time.Second || got > 62*time.Second {
		t.Fatalf("PTTL = %v, want in (61s, 62s]", got)
	}
	// Unlimited calls write nothing.
	if _, err := l.Allow(ctx, "none", gw.Limit{}, 10); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, p+"none").Val(); n != 0 {
		t.Fatalf("unlimited Allow created a key")
	}
}

func TestOldBucketsAreDeleted(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	now := time.Unix(1_900_000_000, 0)
	l := New(c, Options{Prefix: p, Now: func() time.Time { return now }})
	ctx := context.Background()
	for range 200 {
		if _, err := l.Allow(ctx, "k", gw.Limit{RPM: 1000, TPM: 1e6}, 5); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	// The window's 61 buckets of each kind, plus the head and the two
	// sums.
	if n := c.HLen(ctx, p+"k").Val(); n > 2*61+3 {
		t.Fatalf("hash holds %d fields, want at most %d", n, 2*61+3)
	}
}

func TestScriptCacheFlushed(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	l := New(c, Options{Prefix: p})
	ctx := context.Background()
	lim := gw.Limit{RPM: 2, TPM: 100}
	if d, err := l.Allow(ctx, "k", lim, 10); err != nil || !d.Allowed {
		t.Fatalf("first Allow: %+v, %v", d, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d, err := l.Allow(ctx, "k", lim, 10); err != nil || !d.Allowed || d.RequestsRemaining != 0 {
		t.Fatalf("Allow after SCRIPT FLUSH: %+v, %v; want admitted, 0 remaining", d, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Adjust(ctx, "k", lim, -5); err != nil {
		t.Fatalf("Adjust after SCRIPT FLUSH: %v", err)
	}
}

// deadClient points at a loopback port nothing listens on.
func deadClient(t *testing.T) *goredis.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRedisDown(t *testing.T) {
	ctx := context.Background()
	lim := gw.Limit{RPM: 10, TPM: 1000}
	t.Run("FailClosedDenies", func(t *testing.T) {
		l := New(deadClient(t), Options{})
		d, err := l.Allow(ctx, "k", lim, 5)
		if d.Allowed || d.RetryAfter != time.Second || d.RequestsLimit != 10 {
			t.Fatalf("decision %+v, want denied with RetryAfter 1s", d)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		var ge *gw.Error
		if !errors.As(err, &ge) || ge.Code != gw.CodeOverloaded || ge.RetryAfter != time.Second {
			t.Fatalf("err = %#v, want *gw.Error overloaded with RetryAfter 1s", err)
		}
		if strings.Contains(ge.Message, "127.0.0.1") {
			t.Fatalf("caller-facing message names the host: %q", ge.Message)
		}
	})
	t.Run("FailOpenAdmits", func(t *testing.T) {
		l := New(deadClient(t), Options{FailOpen: true})
		d, err := l.Allow(ctx, "k", lim, 5)
		if !d.Allowed || d.RequestsLimit != 10 || d.RequestsRemaining != 10 {
			t.Fatalf("decision %+v, want admitted with the full limit remaining", d)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable for the log", err)
		}
		var ge *gw.Error
		if errors.As(err, &ge) {
			t.Fatalf("fail-open error is a *gw.Error (%v); it must not look like a caller-facing failure", ge)
		}
	})
	t.Run("AdjustReportsError", func(t *testing.T) {
		for _, open := range []bool{false, true} {
			l := New(deadClient(t), Options{FailOpen: open})
			if err := l.Adjust(ctx, "k", lim, 5); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("FailOpen=%v: Adjust err = %v, want ErrUnavailable", open, err)
			}
		}
	})
	t.Run("UnlimitedNeedsNoRedis", func(t *testing.T) {
		l := New(deadClient(t), Options{})
		if d, err := l.Allow(ctx, "k", gw.Limit{}, 5); err != nil || !d.Allowed {
			t.Fatalf("unlimited Allow: %+v, %v", d, err)
		}
		if err := l.Adjust(ctx, "k", gw.Limit{RPM: 5}, 5); err != nil {
			t.Fatalf("Adjust without TPM: %v", err)
		}
	})
}

// TestRedisHangs: a server that accepts and never answers must not hold
// the request longer than Options.Timeout.
func TestRedisHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	})
	c := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() {
		c.Close()
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, conn := range conns {
			conn.Close()
		}
		mu.Unlock()
	})
	for _, open := range []bool{false, true} {
		l := New(c, Options{FailOpen: open, Timeout: 100 * time.Millisecond})
		begin := time.Now()
		d, err := l.Allow(context.Background(), "k", gw.Limit{RPM: 1}, 0)
		if took := time.Since(begin); took > 2*time.Second {
			t.Fatalf("Allow took %v with a 100ms timeout", took)
		}
		if !errors.Is(err, ErrUnavailable) || d.Allowed != open {
			t.Fatalf("FailOpen=%v: %+v, %v", open, d, err)
		}
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		addr    string
		db      int
		wantErr bool
	}{
		{"HostPortDB", "redis://127.0.0.1:6390/3", "127.0.0.1:6390", 3, false},
		{"Password", "redis://:s3cret@localhost:6379/0", "localhost:6379", 0, false},
		{"BadScheme", "http://s3cret@localhost:6379", "", 0, true},
		{"BadDB", "redis://:s3cret@localhost:6379/x", "", 0, true},
		{"Unparseable", "redis://:s3cret@local host:port/0", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseURL(tc.url)
			if tc.wantErr {
				if err == nil {
					c.Close()
					t.Fatal("no error")
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error reveals the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if o := c.Options(); o.Addr != tc.addr || o.DB != tc.db || !o.ContextTimeoutEnabled {
				t.Fatalf("addr %q db %d context timeouts %v, want %q %d true", o.Addr, o.DB, o.ContextTimeoutEnabled, tc.addr, tc.db)
			}
		})
	}
}

func BenchmarkRedisAllow(b *testing.B) {
	c := client(b)
	l := New(c, Options{Prefix: prefix(b, c)})
	lim := gw.Limit{RPM: 1 << 40, TPM: 1 << 50}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Allow(ctx, "bench", lim, 100); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedisAllowParallel(b *testing.B) {
	c := client(b)
	l := New(c, Options{Prefix: prefix(b, c)})
	lim := gw.Limit{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		key := "bench-" + string(rune('a'+n.Add(1)%26))
		for pb.Next() {
			if _, err := l.Allow(ctx, key, lim, 100); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestFallbackWhileDown: with Redis unreachable the in-memory fallback
// decides with the limit divided by the instance count, without an error
// (429s stay 429s), the breaker keeps Redis out of the path (one dial per
// cooldown, not one per request), and Degraded says so.
func TestFallbackWhileDown(t *testing.T) {
	var dials atomic.Int64
	c := goredis.NewClient(&goredis.Options{
		Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return nil, errors.New("connection refused")
		},
	})
	t.Cleanup(func() { c.Close() })
	mem := ratelimit.NewMemory(ratelimit.MemoryOptions{SweepInterval: -1})
	l := New(c, Options{Fallback: mem, Instances: 2, Cooldown: time.Hour})
	if d, _ := l.Degraded(); d {
		t.Fatal("degraded before any failure")
	}
	lim := gw.Limit{RPM: 10}
	var allowed int
	for i := 0; i < 20; i++ {
		d, err := l.Allow(context.Background(), "k", lim, 0)
		if err != nil {
			t.Fatalf("call %d: %v, want the fallback's decision without an error", i, err)
		}
		if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 {
			t.Fatalf("denied without RetryAfter: %+v", d)
		}
	}
	if allowed != 5 {
		t.Errorf("admitted %d of 20 with RPM 10 over 2 instances, want 5", allowed)
	}
	if n := dials.Load(); n > 2 {
		t.Errorf("%d dials for 20 requests: the breaker did not open", n)
	}
	if d, err := l.Degraded(); !d || !errors.Is(err, ErrUnavailable) {
		t.Errorf("Degraded = %v, %v", d, err)
	}
	if err := l.Adjust(context.Background(), "k", gw.Limit{TPM: 100}, 5); err != nil {
		t.Errorf("Adjust with a fallback: %v", err)
	}
}

// TestSumsRecounted: a key whose window sums are missing (written by an
// older script, or dropped by an Adjust that moved the head) is recounted
// from its buckets.
func TestSumsRecounted(t *testing.T) {
	c := client(t)
	p := prefix(t, c)
	ctx := context.Background()
	now := time.Unix(1_900_000_000, 0)
	l := New(c, Options{Prefix: p, Now: func() time.Time { return now }})
	sec := now.Unix()
	// The older layout: head and buckets, no sums.
	if err := c.HSet(ctx, p+"old", "h", sec-1, fmt.Sprintf("r%d", sec-1), 3, fmt.Sprintf("t%d", sec-1), 50).Err(); err != nil {
		t.Fatal(err)
	}
	lim := gw.Limit{RPM: 4, TPM: 100}
	if d, err := l.Allow(ctx, "old", lim, 50); err != nil || !d.Allowed || d.RequestsRemaining != 0 {
		t.Fatalf("Allow on the older layout: %+v, %v; want admitted with 0 remaining", d, err)
	}
	if d, err := l.Allow(ctx, "old", gw.Limit{TPM: 100}, 1); err != nil || d.Allowed {
		t.Fatalf("Allow past the recounted tokens: %+v, %v; want denied", d, err)
	}

	// An Adjust that moves the head drops the sums; the next Allow
	// recounts them, the departed buckets left out.
	tl := gw.Limit{TPM: 40}
	if d, err := l.Allow(ctx, "moved", tl, 10); err != nil || !d.Allowed {
		t.Fatalf("Allow: %+v, %v", d, err)
	}
	now = now.Add(2 * time.Second)
	if err := l.Adjust(ctx, "moved", tl, 20); err != nil {
		t.Fatal(err)
	}
	if n := c.HExists(ctx, p+"moved", "T").Val(); n {
		t.Fatal("the token sum survived an Adjust that moved the head")
	}
	now = now.Add(time.Second)
	if d, err := l.Allow(ctx, "moved", tl, 10); err != nil || !d.Allowed {
		t.Fatalf("Allow at 40 of 40 tokens: %+v, %v; want admitted", d, err)
	}
	if d, err := l.Allow(ctx, "moved", tl, 1); err != nil || d.Allowed {
		t.Fatalf("Allow past 40 tokens: %+v, %v; want denied", d, err)
	}
	// 62 seconds after the first, its bucket (10 tokens) has left the
	// window; the Adjust's 20 and the third call's 10 remain.
	now = now.Add(59 * time.Second)
	if d, err := l.Allow(ctx, "moved", tl, 10); err != nil || !d.Allowed {
		t.Fatalf("Allow once the older buckets left: %+v, %v; want admitted", d, err)
	}
	if got := c.HGet(ctx, p+"moved", "T").Val(); got != "40" {
		t.Fatalf("token sum %q, want 40", got)
	}

	// A sum that missed a correction (an older instance's) is forgotten
	// once the head crosses a multiple of 61 seconds.
	next := (now.Unix()/61 + 2) * 61
	now = time.Unix(next-1, 0)
	if _, err := l.Allow(ctx, "moved", gw.Limit{TPM: 1000}, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.HSet(ctx, p+"moved", "T", 5).Err(); err != nil {
		t.Fatal(err)
	}
	now = time.Unix(next, 0)
	if _, err := l.Allow(ctx, "moved", gw.Limit{TPM: 1000}, 0); err != nil {
		t.Fatal(err)
	}
	var want int64
	for f, v := range c.HGetAll(ctx, p+"moved").Val() {
		if idx, err := strconv.ParseInt(f[1:], 10, 64); err == nil && f[0] == 't' && idx > next-61 {
			x, _ := strconv.ParseInt(v, 10, 64)
			want += x
		}
	}
	if got := c.HGet(ctx, p+"moved", "T").Val(); got != strconv.FormatInt(want, 10) || want != 3 {
		t.Fatalf("token sum %q after the recount, want the buckets' %d (3)", got, want)
	}
}

// BenchmarkRedisAllowBusyKey is the check and count of a key busy for a
// minute (every second of its window holds counts), serially, with the
// script's own time on the Redis server per call (redis-us/op, from INFO
// commandstats; other clients' scripts count too).
func BenchmarkRedisAllowBusyKey(b *testing.B) {
	c := client(b)
	p := prefix(b, c)
	at := time.Unix(1_900_000_000, 0)
	l := New(c, Options{Prefix: p, Now: func() time.Time { return at }})
	ctx := context.Background()
	lim := gw.Limit{RPM: 1 << 40, TPM: 1 << 50}
	for i := 60; i >= 0; i-- {
		at = time.Unix(1_900_000_000-int64(i), 0)
		if _, err := l.Allow(ctx, "bench", lim, 100); err != nil {
			b.Fatal(err)
		}
	}
	usec := func() float64 {
		res, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(res, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:"); ok {
				for _, kv := range strings.Split(v, ",") {
					if u, ok := strings.CutPrefix(kv, "usec="); ok {
						f, _ := strconv.ParseFloat(u, 64)
						return f
					}
				}
			}
		}
		return 0
	}
	b.ReportAllocs()
	u0 := usec()
	for b.Loop() {
		if _, err := l.Allow(ctx, "bench", lim, 100); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((usec()-u0)/float64(b.N), "redis-us/op")
}
