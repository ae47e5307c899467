package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// testHeldIsOpenUnexpiredHolds checks the invariant behind the stores'
// running held total: Balance.Held always equals the sum of the open
// holds whose expiry is still ahead, through holds placed, settled,
// released, expiring while open, settled after expiring, and swept, one
// at a time and under concurrency. The test keeps its own model of the
// open holds and compares after every step.
func testHeldIsOpenUnexpiredHolds(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1_000_000)

	type open struct {
		amount gw.Money
		exp    time.Time
	}
	var mu sync.Mutex
	model := map[string]open{}
	var charged gw.Money
	wantHeld := func(at time.Time) gw.Money {
		mu.Lock()
		defer mu.Unlock()
		var sum gw.Money
		for _, h := range model {
			if h.exp.After(at) {
				sum += h.amount
			}
		}
		return sum
	}
	check := func(step string) {
		t.Helper()
		// Read the model on both sides of the store's clock, so a hold
		// expiring in between cannot make the comparison flaky.
		before := wantHeld(time.Now())
		b := balance(t, s, a.ID)
		after := wantHeld(time.Now())
		if b.Held != before && b.Held != after {
			t.Errorf("%s: Held = %d, want the open unexpired holds' %d", step, b.Held, after)
		}
		mu.Lock()
		c := charged
		mu.Unlock()
		if b.Charged != c {
			t.Errorf("%s: Charged = %d, want %d", step, b.Charged, c)
		}
		verifyLedger(t, s, a.ID)
	}
	place := func(id string, amount gw.Money, exp time.Time) error {
		err := s.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, KeyID: "key_1", Amount: amount, ExpiresAt: exp})
		if err == nil {
			mu.Lock()
			model[id] = open{amount, exp}
			mu.Unlock()
		}
		return err
	}
	finish := func(id string, charge gw.Money, settle bool) error {
		var err error
		if settle {
			err = s.Settle(ctx, id, record(id, a.ID, charge, time.Now()))
		} else {
			err = s.Release(ctx, id, nil)
		}
		if err == nil {
			mu.Lock()
			delete(model, id)
			if settle {
				charged += charge
			}
			mu.Unlock()
		}
		return err
	}

	now := time.Now()
	steps := []struct {
		name string
		do   func() error
	}{
		{"hold, an hour", func() error { return place("req_a", 100, now.Add(time.Hour)) }},
		{"hold, already expired", func() error { return place("req_b", 200, now.Add(-time.Second)) }},
		{"hold, expiring soon", func() error { return place("req_c", 300, now.Add(300*time.Millisecond)) }},
		{"hold, expiring soon too", func() error { return place("req_d", 400, now.Add(300*time.Millisecond)) }},
		{"settle", func() error { return finish("req_a", 70, true) }},
		{"hold again", func() error { return place("req_e", 500, now.Add(time.Hour)) }},
		{"wait for expiry", func() error { time.Sleep(time.Until(now.Add(400 * time.Millisecond))); return nil }},
		{"settle an expired, unswept hold", func() error { return finish("req_c", 250, true) }},
		{"release an expired, unswept hold", func() error { return finish("req_b", 0, false) }},
		{"sweep", func() error {
			n, err := s.ExpireHolds(ctx, time.Now())
			if err == nil && n != 1 {
				return fmt.Errorf("swept %d holds, want 1 (req_d)", n)
			}
			mu.Lock()
			delete(model, "req_d")
			mu.Unlock()
			return err
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		check(st.name)
	}

	// Concurrency: callers place holds (some expiring during the test,
	// some already expired), then settle or release them, while a sweeper
	// expires holds.
	const callers, each = 8, 30
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var sweepErr error
	var sweepWG sync.WaitGroup
	sweepWG.Add(1)
	go func() {
		defer sweepWG.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			at := time.Now()
			if _, err := s.ExpireHolds(ctx, at); err != nil {
				sweepErr = err
				return
			}
			mu.Lock()
			for id, h := range model {
				if !h.exp.After(at) {
					delete(model, id)
				}
			}
			mu.Unlock()
		}
	}()
	errs := make(chan error, callers*each*2)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 23))
			for i := range each {
				id := fmt.Sprintf("req_%d_%d", c, i)
				exp := time.Now().Add(time.Hour)
				switch r.IntN(4) {
				case 0:
					exp = time.Now().Add(-time.Second)
				case 1:
					exp = time.Now().Add(time.Duration(r.IntN(100)) * time.Millisecond)
				}
				if err := place(id, gw.Money(1+r.IntN(1000)), exp); err != nil {
					errs <- fmt.Errorf("place %s: %w", id, err)
					continue
				}
				if r.IntN(5) == 0 {
					continue // left open
				}
				err := finish(id, gw.Money(r.IntN(800)), r.IntN(2) == 0)
				// A sweep may have taken an expiring hold first; that is
				// the one acceptable refusal, and only for such holds.
				if err != nil && !(exp.Before(time.Now()) && isNotFound(err)) {
					errs <- fmt.Errorf("finish %s: %w", id, err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	sweepWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if sweepErr != nil {
		t.Fatalf("ExpireHolds: %v", sweepErr)
	}
	check("after concurrent traffic")
	time.Sleep(150 * time.Millisecond)
	check("after the short holds expired")
	if _, err := s.ExpireHolds(ctx, time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clear(model)
	mu.Unlock()
	check("after sweeping everything")
	if b := balance(t, s, a.ID); b.Held != 0 || b.Balance < 0 || b.Available != b.Balance {
		t.Errorf("after sweeping everything: %+v, want nothing held", b)
	}
}

func isNotFound(err error) bool { return errors.Is(err, gw.ErrNotFound) }
