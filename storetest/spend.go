package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Spender is what GET /v1/balance needs beyond gw.Store.
type Spender interface {
	Spend(ctx context.Context, accountID string, since time.Time) (gw.Money, error)
}

// testSpend checks that Spend sums one account's charges from a time on,
// counting only charged records.
func testSpend(t *testing.T, s gw.Store) {
	sp, ok := s.(Spender)
	if !ok {
		t.Fatalf("%T has no Spend method", s)
	}
	ctx := t.Context()
	a := account(t, s, "spend-a", 10*gw.USD)
	b := account(t, s, "spend-b", 10*gw.USD)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		acct   string
		charge gw.Money
		at     time.Duration
	}{
		{a.ID, 1_000, -time.Hour}, // before since: not counted
		{a.ID, 2_000, 0},          // at since: counted
		{a.ID, 3_000, time.Hour},
		{b.ID, 4_000, time.Hour}, // another account
	} {
		r := record(fmt.Sprintf("req_spend_%d", i), c.acct, c.charge, t0.Add(c.at))
		r.Cost = c.charge
		if err := s.PlaceHold(ctx, gw.Hold{ID: r.RequestID, AccountID: c.acct, KeyID: "key_1", Amount: c.charge, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(ctx, r.RequestID, r); err != nil {
			t.Fatal(err)
		}
	}
	failed := record("req_spend_failed", a.ID, 0, t0.Add(2*time.Hour))
	failed.Status = 502
	if err := s.Log(ctx, failed); err != nil {
		t.Fatal(err)
	}
	got, err := sp.Spend(ctx, a.ID, t0)
	if err != nil || got != 5_000 {
		t.Fatalf("Spend(a, since) = %d, %v; want 5000", got, err)
	}
	if got, err := sp.Spend(ctx, "acct_none", t0); err != nil || got != 0 {
		t.Fatalf("Spend(unknown) = %d, %v; want 0", got, err)
	}
}
