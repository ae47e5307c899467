package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// testSettleBoundedByAvailable: a settle above its hold debits at most
// the hold plus the available balance at that moment; the rest is the
// record's loss, noted. Hand-worked: top-up 1,000, another request holds
// 300, this one holds 100 and settles at 900: it may take its 100 and the
// 600 available, 700; 200 is the operator's loss, and the balance stays
// at 300, the other hold's money.
func testSettleBoundedByAvailable(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	for _, h := range []gw.Hold{hold("req_other", a.ID, 300), hold("req_1", a.ID, 100)} {
		if err := s.PlaceHold(ctx, h); err != nil {
			t.Fatalf("PlaceHold(%s): %v", h.ID, err)
		}
	}
	r := record("req_1", a.ID, 900, time.Now())
	if err := s.Settle(ctx, "req_1", r); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if r.Charge != 700 || r.Loss != 200 || !strings.Contains(r.Note, gw.NoteOperatorLoss) {
		t.Errorf("settled charge %d loss %d note %q; want 700, 200, %s", r.Charge, r.Loss, r.Note, gw.NoteOperatorLoss)
	}
	wantRecord(t, s, r)
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Charged: 700, Held: 300, Balance: 300})

	// A settle with nothing left to take: all of it is the loss.
	if err := s.PlaceHold(ctx, hold("req_2", a.ID, 0)); err != nil {
		t.Fatal(err)
	}
	r2 := record("req_2", a.ID, 50, time.Now())
	if err := s.Settle(ctx, "req_2", r2); err != nil {
		t.Fatal(err)
	}
	if r2.Charge != 0 || r2.Loss != 50 {
		t.Errorf("second settle: charge %d loss %d; want 0, 50", r2.Charge, r2.Loss)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Charged: 700, Held: 300, Balance: 300})
}

// testRenewHold: a live hold's expiry moves later (never earlier); a
// hold past its expiry, or finished, cannot be renewed.
func testRenewHold(t *testing.T, s gw.Store) {
	ctx := t.Context()
	r := s
	a := account(t, s, "acme", 1000)
	soon := time.Now().Add(time.Minute)
	if err := s.PlaceHold(ctx, gw.Hold{ID: "req_1", AccountID: a.ID, KeyID: "key_1", Amount: 400, ExpiresAt: soon}); err != nil {
		t.Fatal(err)
	}
	if err := s.PlaceHold(ctx, gw.Hold{ID: "req_old", AccountID: a.ID, KeyID: "key_1", Amount: 100, ExpiresAt: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := r.RenewHold(ctx, "req_1", time.Now().Add(2*time.Hour)); err != nil {
		t.Fatalf("RenewHold: %v", err)
	}
	if err := r.RenewHold(ctx, "req_1", time.Now()); err != nil {
		t.Fatalf("RenewHold (earlier): %v", err)
	}
	// Swept an hour from now, the renewed hold is still there.
	if n, err := s.ExpireHolds(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("ExpireHolds(+1h) = %d, %v; want 1 (req_old only)", n, err)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Held: 400, Balance: 1000, Available: 600})
	wantNotFound(t, "RenewHold(swept)", r.RenewHold(ctx, "req_old", time.Now().Add(time.Hour)))
	if err := s.Release(ctx, "req_1", nil); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "RenewHold(released)", r.RenewHold(ctx, "req_1", time.Now().Add(time.Hour)))
	if err := s.PlaceHold(ctx, gw.Hold{ID: "req_exp", AccountID: a.ID, KeyID: "key_1", Amount: 100, ExpiresAt: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "RenewHold(expired, not swept)", r.RenewHold(ctx, "req_exp", time.Now().Add(time.Hour)))
}

// testNeverBelowZero is the property test: random interleavings of holds,
// renewals, settles at any charge (above the hold too), releases, sweeps
// at any time (holds outliving their expiry while their request runs)
// and top-ups. After every step the balance is never below zero, Balance
// = TopUps - Charged, the ledger verifies, and every settle debited
// exactly min(charge, hold + available) with the rest as its loss. Then
// the same operations from several goroutines at once: never below zero
// at any read, and the ledger verifies at the end.
func testNeverBelowZero(t *testing.T, s gw.Store) {
	ctx := t.Context()
	renewer := s
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 29))
	t.Logf("seed %d", seed)
	a := account(t, s, "acme", 5000)

	type open struct {
		amount gw.Money
		exp    time.Time
	}
	holds := map[string]open{}
	var ids []string
	pick := func() (string, bool) {
		if len(ids) == 0 {
			return "", false
		}
		return ids[rng.IntN(len(ids))], true
	}
	drop := func(id string) {
		delete(holds, id)
		for i, x := range ids {
			if x == id {
				ids = append(ids[:i], ids[i+1:]...)
				return
			}
		}
	}
	// Expiries are either well past or at least ten minutes ahead, so
	// that no hold expires between a step's reads and its write.
	expiry := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Now().Add(-time.Duration(1+rng.IntN(60)) * time.Minute)
		}
		return time.Now().Add(time.Duration(10+rng.IntN(50)) * time.Minute)
	}
	var topUps, charged, lost gw.Money = 5000, 0, 0
	steps := map[string]int{}
	for i := range 600 {
		step := ""
		switch op := rng.IntN(100); {
		case op < 30:
			step = "hold"
			id := fmt.Sprintf("req_%d", i)
			amount := gw.Money(rng.IntN(2000))
			exp := expiry()
			err := s.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, KeyID: "key_1", Amount: amount, ExpiresAt: exp})
			switch {
			case err == nil:
				holds[id] = open{amount, exp}
				ids = append(ids, id)
			case gw.ErrorCode(err) == gw.CodeInsufficientBalance:
				step = "hold refused"
			default:
				t.Fatalf("step %d PlaceHold: %v", i, err)
			}
		case op < 45:
			step = "renew"
			id, ok := pick()
			if !ok {
				continue
			}
			exp := time.Now().Add(time.Duration(10+rng.IntN(50)) * time.Minute)
			err := renewer.RenewHold(ctx, id, exp)
			h := holds[id]
			switch {
			case h.exp.After(time.Now()):
				if err != nil {
					t.Fatalf("step %d RenewHold(live): %v", i, err)
				}
				if exp.After(h.exp) {
					holds[id] = open{h.amount, exp}
				}
			case !errors.Is(err, gw.ErrNotFound):
				t.Fatalf("step %d RenewHold(expired): %v, want ErrNotFound", i, err)
			default:
				step = "renew refused"
			}
		case op < 75:
			step = "settle"
			id, ok := pick()
			if !ok {
				continue
			}
			h := holds[id]
			before := balance(t, s, a.ID)
			bound := before.Available
			if h.exp.After(time.Now()) {
				bound += h.amount
			}
			charge := gw.Money(rng.IntN(4000))
			r := record(id, a.ID, charge, time.Now())
			r.Note = ""
			if err := s.Settle(ctx, id, r); err != nil {
				t.Fatalf("step %d Settle: %v", i, err)
			}
			want := min(charge, max(bound, 0))
			if r.Charge != want || r.Loss != charge-want {
				t.Fatalf("step %d Settle(%d) on hold %d, available %d: debited %d lost %d; want %d, %d",
					i, charge, h.amount, before.Available, r.Charge, r.Loss, want, charge-want)
			}
			if r.Loss > 0 {
				step = "settle with loss"
			}
			wantRecord(t, s, r)
			charged += r.Charge
			lost += r.Loss
			drop(id)
		case op < 82:
			step = "release"
			id, ok := pick()
			if !ok {
				continue
			}
			if err := s.Release(ctx, id, nil); err != nil {
				t.Fatalf("step %d Release: %v", i, err)
			}
			drop(id)
		case op < 92:
			step = "sweep"
			at := time.Now().Add(time.Duration(rng.IntN(30)) * time.Minute)
			if _, err := s.ExpireHolds(ctx, at); err != nil {
				t.Fatalf("step %d ExpireHolds: %v", i, err)
			}
			for id, h := range holds {
				if !h.exp.After(at) {
					drop(id)
				}
			}
		default:
			step = "top-up"
			amount := gw.Money(1 + rng.IntN(1500))
			if err := s.TopUp(ctx, a.ID, amount, "t"); err != nil {
				t.Fatalf("step %d TopUp: %v", i, err)
			}
			topUps += amount
		}
		steps[step]++
		b := balance(t, s, a.ID)
		if b.Balance < 0 || b.TopUps != topUps || b.Charged != charged {
			t.Fatalf("step %d (%s): %+v; want never below zero, top-ups %d, charged %d", i, step, b, topUps, charged)
		}
		var held gw.Money
		for _, h := range holds {
			if h.exp.After(time.Now()) {
				held += h.amount
			}
		}
		if b.Held != held {
			t.Fatalf("step %d (%s): held %d, want the live holds' %d", i, step, b.Held, held)
		}
		verifyLedger(t, s, a.ID)
	}
	t.Logf("steps %v; charged %d, operator loss %d", steps, charged, lost)
	if steps["settle with loss"] == 0 || steps["sweep"] == 0 || steps["renew"] == 0 {
		t.Errorf("the walk never exercised a loss, a sweep or a renewal: %v", steps)
	}

	// Concurrently: 8 callers, each holding, renewing, settling above
	// their holds, while a sweeper and a top-up run.
	b := account(t, s, "busy", 3000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var low error
	watch := func() {
		got, err := s.Balance(ctx, b.ID)
		if err == nil && got.Balance < 0 {
			mu.Lock()
			low = fmt.Errorf("balance seen at %+v", got)
			mu.Unlock()
		}
	}
	for c := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			for j := range 25 {
				id := fmt.Sprintf("busy_%d_%d", c, j)
				exp := time.Now().Add(time.Duration(r.IntN(3)-1) * time.Hour)
				if err := s.PlaceHold(ctx, gw.Hold{ID: id, AccountID: b.ID, KeyID: "key_1", Amount: gw.Money(r.IntN(400)), ExpiresAt: exp}); err != nil {
					continue
				}
				_ = renewer.RenewHold(ctx, id, time.Now().Add(time.Hour))
				err := s.Settle(ctx, id, record(id, b.ID, gw.Money(r.IntN(900)), time.Now()))
				if err != nil && !errors.Is(err, gw.ErrNotFound) {
					t.Errorf("Settle(%s): %v", id, err)
				}
				watch()
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			_, _ = s.ExpireHolds(ctx, time.Now().Add(30*time.Minute))
			watch()
		}
	})
	wg.Go(func() {
		for range 5 {
			_ = s.TopUp(ctx, b.ID, 200, "t")
			watch()
		}
	})
	wg.Wait()
	if low != nil {
		t.Error(low)
	}
	if got := balance(t, s, b.ID); got.Balance < 0 {
		t.Errorf("busy account at %+v", got)
	}
	verifyLedger(t, s, b.ID)
}

// testIncidentsOfAccount (issue 29 item 8): an account's incidents come
// from their own index: after another account's flood of 1,200 newer
// incidents, the latest 1,000 of all accounts hold none of the first
// account's, and IncidentsOf still finds its one.
func testIncidentsOfAccount(t *testing.T, s gw.Store) {
	ctx := t.Context()
	ai := s
	t0 := time.Now().Add(-time.Hour).Truncate(time.Microsecond).UTC()
	if err := s.CreateIncident(ctx, &gw.Incident{ID: "inc_quiet", RequestID: "req_q", AccountID: "acct_quiet", KeyID: "key_q", Kind: "extraction", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		in := &gw.Incident{ID: fmt.Sprintf("inc_flood_%04d", i), RequestID: fmt.Sprintf("req_f%d", i), AccountID: "acct_flood", KeyID: "key_f", Kind: "extraction", CreatedAt: t0.Add(time.Duration(i+1) * time.Millisecond)}
		if err := s.CreateIncident(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Incidents(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		if in.AccountID == "acct_quiet" {
			t.Fatal("the flood did not push the quiet account's incident out of the all-accounts scan; the test proves nothing")
		}
	}
	got, err := ai.IncidentsOf(ctx, "acct_quiet", 1000)
	if err != nil || len(got) != 1 || got[0].ID != "inc_quiet" {
		t.Errorf("IncidentsOf(quiet) = %+v, %v; want inc_quiet", got, err)
	}
	flood, err := ai.IncidentsOf(ctx, "acct_flood", 10)
	if err != nil || len(flood) != 10 || flood[0].ID != "inc_flood_1199" {
		t.Errorf("IncidentsOf(flood, 10): %d, first %v, %v; want 10, newest first", len(flood), flood, err)
	}
}
