package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBatchesConcurrentCalls(t *testing.T) {
	var mu sync.Mutex
	sizes := []int{}
	c := Start(64, func(ops []*Op, results []error) error {
		mu.Lock()
		sizes = append(sizes, len(ops))
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // a sync to disk
		for i, o := range ops {
			if o.ID == "missing" {
				results[i] = gw.ErrNotFound // a clean refusal: the others still commit
			}
		}
		return nil
	})
	defer c.Close()
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "h"
			if i == 7 {
				id = "missing"
			}
			errs[i] = c.Submit(context.Background(), &Op{Kind: Settle, ID: id}, "settle")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != errors.Is(err, gw.ErrNotFound) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	st := c.Stats()
	if st.Ops != 100 || st.Batches >= 100 || st.Retried != 0 {
		t.Fatalf("stats %+v: calls were not batched", st)
	}
}

func TestFailedBatchRetriesEachAlone(t *testing.T) {
	boom := errors.New("constraint")
	c := Start(8, func(ops []*Op, results []error) error {
		for _, o := range ops {
			if o.ID == "bad" {
				return boom // aborts the whole transaction
			}
		}
		return nil
	})
	defer c.Close()
	results := c.Commit([]*Op{{Kind: Log, ID: "a"}, {Kind: Log, ID: "bad"}, {Kind: Hold, ID: "c"}})
	if results[0] != nil || !errors.Is(results[1], boom) || results[2] != nil {
		t.Fatalf("results %v", results)
	}
	if st := c.Stats(); st.Retried != 3 {
		t.Fatalf("retried %d, want 3", st.Retried)
	}
}

func TestClosed(t *testing.T) {
	c := Start(1, func(ops []*Op, results []error) error { return nil })
	c.Close()
	c.Close() // twice is fine
	if err := c.Submit(context.Background(), &Op{Kind: Log}, "log"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestCleanRefusals(t *testing.T) {
	for _, err := range []error{gw.ErrNotFound, ErrHoldExists, &gw.Error{Code: gw.CodeInsufficientBalance}} {
		if !Clean(err) {
			t.Errorf("%v not clean", err)
		}
	}
	if Clean(errors.New("disk I/O error")) {
		t.Error("an I/O error counted as clean")
	}
}

func TestNeedsSync(t *testing.T) {
	if NeedsSync([]*Op{{Kind: Hold}, {Kind: Release}, {Kind: Log}}) {
		t.Error("a batch without a charge asked for a sync")
	}
	if !NeedsSync([]*Op{{Kind: Hold}, {Kind: Settle}}) {
		t.Error("a batch with a settle skipped the sync")
	}
}

// TestArrivalsDecideLinger: a batch waits only once calls arrive at
// least two per linger interval, and never after a pause.
func TestArrivalsDecideLinger(t *testing.T) {
	var a arrivals
	t0 := time.Unix(1000, 0)
	if n := a.expected(t0, time.Millisecond); n != 0 {
		t.Fatalf("no history: expected %d, want 0", n)
	}
	// 4,000 calls a second, one per 250 us, for 200 ms.
	at := t0
	for range 800 {
		a.add(at, 1)
		at = at.Add(250 * time.Microsecond)
	}
	if n := a.expected(at, time.Millisecond); n < 3 || n > 5 {
		t.Errorf("at 4,000/s with a 1 ms linger: expected %d, want about 4", n)
	}
	if n := a.expected(at, 0); n != 0 {
		t.Errorf("no linger: expected %d, want 0", n)
	}
	// After a pause the old rate no longer counts.
	if n := a.expected(at.Add(time.Second), time.Millisecond); n != 0 {
		t.Errorf("after a pause: expected %d, want 0", n)
	}
	// 500 calls a second: fewer than two per millisecond.
	var slow arrivals
	at = t0
	for range 100 {
		slow.add(at, 1)
		at = at.Add(2 * time.Millisecond)
	}
	if n := slow.expected(at, time.Millisecond); n != 0 {
		t.Errorf("at 500/s with a 1 ms linger: expected %d, want 0", n)
	}
	if n := slow.expected(at, 10*time.Millisecond); n < 4 || n > 6 {
		t.Errorf("at 500/s with a 10 ms linger: expected %d, want about 5", n)
	}
}

// TestLingerWaitsForCallsInFlight: with the calls in flight known, a
// batch waits for no more of them than there are, and never when none is
// in flight, unless logs come at a rate of their own.
func TestLingerWaitsForCallsInFlight(t *testing.T) {
	for _, c := range []struct{ want, n, inFlight, others, got int }{
		{4, 1, 0, 0, 1},  // nobody in flight: no wait
		{4, 1, 1, 0, 2},  // one in flight: wait for it
		{4, 1, 10, 0, 4}, // many: the rate's figure
		{4, 2, -1, 0, 2}, // a count below zero counts as none
		{6, 1, 1, 3, 5},  // logs at their own rate, besides
	} {
		if got := lingerWant(c.want, c.n, c.inFlight, c.others); got != c.got {
			t.Errorf("lingerWant(%d, %d, %d, %d) = %d, want %d", c.want, c.n, c.inFlight, c.others, got, c.got)
		}
	}
	if n := notInFlight([]*Op{{Kind: Settle}, {Kind: Log}, {Kind: Release}, {Kind: Load}}); n != 2 {
		t.Errorf("notInFlight = %d, want 2 (the log and the load)", n)
	}
}

// TestLingerBatchesUnderLoad: with a linger, calls arriving steadily
// share commits, and every call still gets its own answer.
func TestLingerBatchesUnderLoad(t *testing.T) {
	lingerBatches(t, Options{MaxBatch: 64, Linger: 20 * time.Millisecond}, 400)
}

// TestLingerBatchesLogsBesideInFlight: a store that counts its calls in
// flight (none here) still has its logs batched at their own rate.
func TestLingerBatchesLogsBesideInFlight(t *testing.T) {
	lingerBatches(t, Options{MaxBatch: 64, Linger: 20 * time.Millisecond, InFlight: func() int { return 0 }}, 200)
}

// lingerBatches submits 400 logs 100µs apart and wants each answered and
// all of them committed in fewer than maxBatches commits.
func lingerBatches(t *testing.T, opts Options, maxBatches int64) {
	t.Helper()
	var batches, calls atomic.Int64
	c := StartWith(opts, func(ops []*Op, results []error) error {
		batches.Add(1)
		calls.Add(int64(len(ops)))
		return nil
	})
	defer c.Close()
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			if err := c.Submit(t.Context(), &Op{Kind: Log, ID: fmt.Sprint(i)}, "log"); err != nil {
				t.Error(err)
			}
		})
		time.Sleep(100 * time.Microsecond)
	}
	wg.Wait()
	if calls.Load() != 400 || batches.Load() >= maxBatches {
		t.Errorf("%d calls in %d batches, want 400 in fewer than %d", calls.Load(), batches.Load(), maxBatches)
	}
	t.Logf("%d calls in %d batches", calls.Load(), batches.Load())
}
