package groupcommit

import (
	"context"
	"errors"
	"sync"
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
