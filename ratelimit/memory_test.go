package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratelimit/limitertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestMemoryConformance(t *testing.T) {
	limitertest.Run(t, func(t *testing.T) gw.Limiter {
		m := NewMemory(MemoryOptions{})
		t.Cleanup(func() { m.Close() })
		return m
	})
}

func TestMemoryConformanceClock(t *testing.T) {
	limitertest.RunClock(t, func(t *testing.T, now func() time.Time) gw.Limiter {
		m := NewMemory(MemoryOptions{Now: now, SweepInterval: -1})
		t.Cleanup(func() { m.Close() })
		return m
	})
}

var t0 = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

func TestMemoryAllowAt(t *testing.T) {
	s := time.Second
	type call struct {
		at      time.Duration
		lim     gw.Limit
		tokens  int64
		allowed bool
		retry   time.Duration
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"BurstThenSlide", []call{
			{0, gw.Limit{RPM: 2}, 0, true, 0},
			{0, gw.Limit{RPM: 2}, 0, true, 0},
			{59 * s, gw.Limit{RPM: 2}, 0, false, 2 * s},
			{60 * s, gw.Limit{RPM: 2}, 0, false, s},
			{61 * s, gw.Limit{RPM: 2}, 0, true, 0},
		}},
		{"BoundaryBurstsCannotDouble", []call{
			// A fixed-window counter would admit 2 at 59.9s and 2 more
			// at 60.1s; the sliding window holds the second pair back.
			{59900 * time.Millisecond, gw.Limit{RPM: 2}, 0, true, 0},
			{59900 * time.Millisecond, gw.Limit{RPM: 2}, 0, true, 0},
			{60100 * time.Millisecond, gw.Limit{RPM: 2}, 0, false, 59900 * time.Millisecond},
			{119900 * time.Millisecond, gw.Limit{RPM: 2}, 0, false, 100 * time.Millisecond},
			{120 * s, gw.Limit{RPM: 2}, 0, true, 0},
		}},
		{"TokensSlideOut", []call{
			{0, gw.Limit{TPM: 10}, 6, true, 0},
			{30 * s, gw.Limit{TPM: 10}, 4, true, 0},
			{31 * s, gw.Limit{TPM: 10}, 5, false, 30 * s},
			{61 * s, gw.Limit{TPM: 10}, 6, true, 0},
			{61 * s, gw.Limit{TPM: 10}, 1, false, 30 * s},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory(MemoryOptions{Now: func() time.Time { return t0 }, SweepInterval: -1})
			for i, c := range tc.calls {
				d := m.allow("k", c.lim, c.tokens, t0.Add(c.at))
				if d.Allowed != c.allowed || d.RetryAfter != c.retry {
					t.Fatalf("call %d at %v: got allowed=%v retry=%v, want allowed=%v retry=%v",
						i, c.at, d.Allowed, d.RetryAfter, c.allowed, c.retry)
				}
			}
		})
	}
}

func TestMemorySweepDropsIdleKeys(t *testing.T) {
	now := t0
	m := NewMemory(MemoryOptions{Now: func() time.Time { return now }, SweepInterval: -1})
	lim := gw.Limit{RPM: 1, TPM: 100}
	m.allow("old", lim, 10, t0)
	m.allow("new", lim, 10, t0.Add(90*time.Second))
	m.allow("unlimited", gw.Limit{}, 10, t0)
	if got := m.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2 (unlimited calls store nothing)", got)
	}
	if got := m.sweep(t0.Add(119 * time.Second)); got != 0 {
		t.Fatalf("sweep at 119s dropped %d, want 0", got)
	}
	if got := m.sweep(t0.Add(120 * time.Second)); got != 1 {
		t.Fatalf("sweep at 120s dropped %d, want 1", got)
	}
	if got := m.Len(); got != 1 {
		t.Fatalf("Len after sweep = %d, want 1", got)
	}
	// The survivor's counts are intact.
	if d := m.allow("new", lim, 0, t0.Add(120*time.Second)); d.Allowed {
		t.Fatalf("kept key lost its count: %+v", d)
	}
	now = t0.Add(10 * time.Minute)
	if got := m.Sweep(); got != 1 || m.Len() != 0 {
		t.Fatalf("Sweep dropped %d, Len %d; want 1 and 0", got, m.Len())
	}
}

func TestMemoryIdleTimeoutNeverShorterThanWindow(t *testing.T) {
	m := NewMemory(MemoryOptions{IdleTimeout: time.Second, SweepInterval: -1})
	m.allow("k", gw.Limit{RPM: 1}, 0, m.epoch)
	if got := m.sweep(m.epoch.Add(60 * time.Second)); got != 0 {
		t.Fatalf("swept a key whose count is still in the window")
	}
	if d := m.allow("k", gw.Limit{RPM: 1}, 0, m.epoch.Add(60*time.Second)); d.Allowed {
		t.Fatalf("count lost: %+v", d)
	}
}

func TestMemoryBackgroundSweeper(t *testing.T) {
	var mu sync.Mutex
	now := t0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	m := NewMemory(MemoryOptions{Now: clock, SweepInterval: time.Millisecond})
	defer m.Close()
	m.Allow(context.Background(), "k", gw.Limit{RPM: 1}, 0)
	mu.Lock()
	now = t0.Add(3 * time.Minute)
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for m.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the background sweeper did not drop the idle key")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMemoryCloseIsIdempotent(t *testing.T) {
	m := NewMemory(MemoryOptions{})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Still usable after Close.
	if d, _ := m.Allow(context.Background(), "k", gw.Limit{RPM: 1}, 0); !d.Allowed {
		t.Fatalf("Allow after Close: %+v", d)
	}
	n := NewMemory(MemoryOptions{SweepInterval: -1})
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryShardsRoundedToPowerOfTwo(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 64}, {1, 1}, {3, 4}, {64, 64}, {100, 128}} {
		m := NewMemory(MemoryOptions{Shards: tc.in, SweepInterval: -1})
		if got := len(m.shards); got != tc.want {
			t.Errorf("Shards %d: got %d shards, want %d", tc.in, got, tc.want)
		}
	}
}

func TestMemoryManyKeysConcurrently(t *testing.T) {
	m := NewMemory(MemoryOptions{Shards: 4, SweepInterval: -1})
	lim := gw.Limit{RPM: 10, TPM: 1000}
	const keys = 20
	var wg sync.WaitGroup
	admitted := make([][keys]int, 8)
	for w := range admitted {
		wg.Go(func() {
			for i := range 40 * keys {
				k := i % keys
				d, _ := m.Allow(context.Background(), fmt.Sprint("key-", k), lim, 10)
				if d.Allowed {
					admitted[w][k]++
					m.Adjust(context.Background(), fmt.Sprint("key-", k), lim, -5)
				}
			}
		})
	}
	wg.Wait()
	for k := range keys {
		sum := 0
		for w := range admitted {
			sum += admitted[w][k]
		}
		if sum != 10 {
			t.Errorf("key-%d: admitted %d, want exactly 10", k, sum)
		}
	}
}

func BenchmarkMemoryAllow(b *testing.B) {
	m := NewMemory(MemoryOptions{SweepInterval: -1})
	lim := gw.Limit{RPM: 1 << 40, TPM: 1 << 50}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m.Allow(ctx, "key_bench", lim, 100)
	}
}

func BenchmarkMemoryAllowParallel(b *testing.B) {
	m := NewMemory(MemoryOptions{SweepInterval: -1})
	lim := gw.Limit{RPM: 1 << 40, TPM: 1 << 50}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%04d", i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := 0
		for pb.Next() {
			m.Allow(ctx, keys[i&1023], lim, 100)
			i++
		}
	})
}
