package server

import (
	"context"
	"testing"
)

// A's counts past its share wait on A's own slots; B's count takes its
// own share at once, and A's waiting count goes when A's first is done.
func TestAccountSlotsShare(t *testing.T) {
	a := newAccountSlots(1)
	ctx := context.Background()
	first, err := a.acquire(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := a.acquire(ctx, "A")
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	b, err := a.acquire(ctx, "B")
	if err != nil {
		t.Fatal("B waited behind A's counts:", err)
	}
	b()
	select {
	case <-got:
		t.Fatal("A's second count went past A's share")
	default:
	}
	first()
	(<-got)()
	cctx, cancel := context.WithCancel(ctx)
	hold, _ := a.acquire(ctx, "A")
	cancel()
	if _, err := a.acquire(cctx, "A"); err == nil {
		t.Fatal("a cancelled wait got a slot")
	}
	hold()
	if n := len(a.m); n != 0 {
		t.Fatalf("%d accounts kept after their counts", n)
	}
}
