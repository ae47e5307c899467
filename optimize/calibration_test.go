package optimize

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 46 D6 and issue 52 item 5 (before -> after): each spelling of a
// model (case variants, an alias) started a calibration of its own at
// the operator's cost, and a model off the rate card was calibrated too.
// Now a count is kept under the rate card's id: every spelling shares
// one count (two calls on a C vendor), a model off the card is never
// counted (the upper bound applies), and a vendor's counts per day are
// capped across all tenants.
func TestCalibrationCanonicalAndCapped(t *testing.T) {
	var calls atomic.Int32
	perByte := counterFunc(func(_ context.Context, _ string, body []byte) (int64, error) {
		calls.Add(1)
		return int64(len(body)+3) / 4, nil
	})
	card := map[string]string{"llama-3.3-70b-versatile": "llama-3.3-70b-versatile", "llama-latest": "llama-3.3-70b-versatile",
		"a": "a", "b": "b", "c": "c"}
	now := time.Unix(1e9, 0)
	o := New(Config{
		Counters: map[string]Counter{"groq": perByte},
		Canonical: func(_, model string) (string, bool) {
			id, ok := card[strings.ToLower(model)]
			return id, ok
		},
		CountsPerDay: 3,
		Now:          func() time.Time { return now },
	})
	ctx := context.Background()
	first := o.Tokens(ctx, "groq", "llama-3.3-70b-versatile")
	for _, m := range []string{"LLAMA-3.3-70B-VERSATILE", "Llama-3.3-70b-Versatile", "llama-latest"} {
		if n := o.Tokens(ctx, "groq", m); n != first {
			t.Errorf("%s: %d tokens, want the canonical model's %d", m, n, first)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("%d count calls for four spellings of one model, want 2", calls.Load())
	}
	if n := o.Tokens(ctx, "groq", "not-on-the-card"); n != UpperBound() || calls.Load() != 2 {
		t.Errorf("a model off the card: %d tokens after %d calls, want the upper bound %d and no call", n, calls.Load(), UpperBound())
	}
	o.Tokens(ctx, "groq", "a")
	o.Tokens(ctx, "groq", "b")
	if n := o.Tokens(ctx, "groq", "c"); n != UpperBound() || calls.Load() != 6 {
		t.Errorf("past the day's 3 counts: %d tokens after %d calls, want the upper bound and 6 calls", n, calls.Load())
	}
	if got := o.CountsToday()["groq"]; got != 3 {
		t.Errorf("counts today %d, want 3", got)
	}
	now = now.Add(24 * time.Hour)
	if n := o.Tokens(ctx, "groq", "c"); n == UpperBound() || calls.Load() != 8 {
		t.Errorf("the next day: %d tokens after %d calls, want a count", n, calls.Load())
	}
}

type paidCounter struct{ counterFunc }

func (paidCounter) PaidCount() bool { return true }

// Issue 46 item 4: a paid count (real vendor requests) is taken only
// after a request of the model succeeded: a request the vendor refuses
// costs the operator no calibration; until then the upper bound applies.
func TestPaidCountAfterSuccess(t *testing.T) {
	var calls atomic.Int32
	o := New(Config{Counters: map[string]Counter{"groq": paidCounter{func(_ context.Context, _ string, body []byte) (int64, error) {
		calls.Add(1)
		return int64(len(body)+3) / 4, nil
	}}}})
	ctx := context.Background()
	if n := o.Tokens(ctx, "groq", "llama"); n != UpperBound() || calls.Load() != 0 {
		t.Errorf("before a success: %d tokens after %d calls, want the upper bound and none", n, calls.Load())
	}
	o.Succeeded("groq", "llama")
	if n := o.Tokens(ctx, "groq", "llama"); n == UpperBound() || calls.Load() != 2 {
		t.Errorf("after a success: %d tokens after %d calls, want a count of 2 calls", n, calls.Load())
	}
}
