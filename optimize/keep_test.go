package optimize

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// docs is a CountStore in memory.
type docs struct {
	mu sync.Mutex
	m  map[string]doc
}

type doc struct {
	body []byte
	at   time.Time
}

func (d *docs) Document(_ context.Context, name string) ([]byte, time.Time, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	x, ok := d.m[name]
	return x.body, x.at, ok, nil
}

func (d *docs) SetDocument(_ context.Context, name string, body []byte, at time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]doc{}
	}
	d.m[name] = doc{body, at}
	return nil
}

// A count taken by real requests is kept in the store: a restarted
// optimizer (a new process on the same store) reads it instead of
// calibrating again the same day, and counts again once it is older than
// the TTL.
func TestCountKeptAcrossRestarts(t *testing.T) {
	var calls atomic.Int64
	perByte := counterFunc(func(_ context.Context, _ string, body []byte) (int64, error) {
		calls.Add(1)
		return int64(len(body)+3) / 4, nil
	})
	st := &docs{}
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	start := func() *Optimizer {
		return New(Config{Counters: map[string]Counter{"groq": perByte}, Store: st, Now: func() time.Time { return now }})
	}
	ctx := context.Background()
	first := start().Tokens(ctx, "groq", "llama")
	if calls.Load() != 2 || first <= 0 {
		t.Fatalf("first run: %d tokens after %d calls, want a count after 2", first, calls.Load())
	}
	if _, ok := st.m[countDocument("groq", "llama")]; !ok {
		t.Fatalf("the count was not kept: %v", st.m)
	}
	// Restarted 20 hours later: the kept count, no vendor call.
	now = now.Add(20 * time.Hour)
	o := start()
	if n := o.Tokens(ctx, "groq", "llama"); n != first || calls.Load() != 2 {
		t.Errorf("after a restart: %d tokens after %d calls, want the kept %d and no call", n, calls.Load(), first)
	}
	if n, ok := o.CachedTokens("groq", "llama"); !ok || n != first {
		t.Errorf("cached after loading: %d %v", n, ok)
	}
	// Another model is still counted.
	o.Tokens(ctx, "groq", "other")
	if calls.Load() != 4 {
		t.Errorf("a new model: %d calls, want 4", calls.Load())
	}
	// A day after the count: counted again, and kept again.
	now = now.Add(5 * time.Hour)
	if n := start().Tokens(ctx, "groq", "llama"); n != first || calls.Load() != 6 {
		t.Errorf("past the TTL: %d tokens after %d calls, want a new count (6 calls)", n, calls.Load())
	}
	if at := st.m[countDocument("groq", "llama")].at; !at.Equal(now) {
		t.Errorf("kept count taken at %v, want %v", at, now)
	}
	// A kept document that is not a count is ignored.
	st.m[countDocument("groq", "bad")] = doc{[]byte(`{"x":1}`), now}
	start().Tokens(ctx, "groq", "bad")
	if calls.Load() != 8 {
		t.Errorf("an unreadable kept count: %d calls, want it counted (8)", calls.Load())
	}
}
