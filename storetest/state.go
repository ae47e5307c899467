package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
)

// RunState runs the client-state half of the suite (convstate.Store: the
// threads and reasoning the gateway keeps for clients). open returns a
// fresh, empty store, as for Run.
func RunState(t *testing.T, open func(t *testing.T) convstate.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s convstate.Store)
	}{
		{"StateRoundTripsAndReplaces", testStateRoundTrip},
		{"StateIsScopedToAccountAndKind", testStateScope},
		{"StateExpiresAndIsSwept", testStateExpiry},
		{"StateBoundedPerAccount", testStateBoundedPerAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

// stateT0 is a fixed clock for the state tests: expiry is decided by the
// now the caller passes, never by the store's own clock.
var stateT0 = time.Date(2026, 8, 12, 10, 0, 0, 0, time.UTC)

func getState(t *testing.T, s convstate.Store, kind, acct, key string, now time.Time) ([]byte, error) {
	t.Helper()
	return s.GetState(t.Context(), kind, acct, key, now)
}

func testStateRoundTrip(t *testing.T, s convstate.Store) {
	ctx := t.Context()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	big[12345] = 0                                         // binary-safe
	cases := map[string][]byte{"small": []byte(`{"v":1}`), "empty": {}, "big": big}
	for key, v := range cases {
		if err := s.PutState(ctx, convstate.KindThread, "acct_a", key, v, stateT0.Add(time.Hour)); err != nil {
			t.Fatalf("PutState(%s): %v", key, err)
		}
	}
	for key, want := range cases {
		got, err := getState(t, s, convstate.KindThread, "acct_a", key, stateT0)
		if err != nil {
			t.Fatalf("GetState(%s): %v", key, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("GetState(%s) = %d bytes, want %d bytes, equal", key, len(got), len(want))
		}
	}
	// Replacing changes the value and the expiry.
	if err := s.PutState(ctx, convstate.KindThread, "acct_a", "small", []byte("second"), stateT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := getState(t, s, convstate.KindThread, "acct_a", "small", stateT0)
	if err != nil || string(got) != "second" {
		t.Errorf("after replace: %q, %v; want \"second\"", got, err)
	}
	if _, err := getState(t, s, convstate.KindThread, "acct_a", "small", stateT0.Add(2*time.Minute)); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("after the replaced expiry: err = %v, want ErrNotFound", err)
	}
}

func testStateScope(t *testing.T, s convstate.Store) {
	ctx := t.Context()
	if err := s.PutState(ctx, convstate.KindThread, "acct_a", "req_1", []byte("a's"), stateT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutState(ctx, convstate.KindReasoning, "acct_a", "req_1", []byte("a's reasoning"), stateT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, acct, key string }{
		{convstate.KindThread, "acct_b", "req_1"},
		{convstate.KindThread, "acct_a", "req_2"},
		{"other", "acct_a", "req_1"},
	} {
		if v, err := getState(t, s, c.kind, c.acct, c.key, stateT0); !errors.Is(err, gw.ErrNotFound) {
			t.Errorf("GetState(%s, %s, %s) = %q, %v; want ErrNotFound", c.kind, c.acct, c.key, v, err)
		}
	}
	// The same key under another account is another entry.
	if err := s.PutState(ctx, convstate.KindThread, "acct_b", "req_1", []byte("b's"), stateT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for acct, want := range map[string]string{"acct_a": "a's", "acct_b": "b's"} {
		got, err := getState(t, s, convstate.KindThread, acct, "req_1", stateT0)
		if err != nil || string(got) != want {
			t.Errorf("GetState(%s) = %q, %v; want %q", acct, got, err, want)
		}
	}
	got, err := getState(t, s, convstate.KindReasoning, "acct_a", "req_1", stateT0)
	if err != nil || string(got) != "a's reasoning" {
		t.Errorf("reasoning entry = %q, %v", got, err)
	}
}

func testStateExpiry(t *testing.T, s convstate.Store) {
	ctx := t.Context()
	for i := range 10 {
		// Entries i expire at t0 + i minutes.
		if err := s.PutState(ctx, convstate.KindThread, "acct_a", fmt.Sprint("k", i), []byte("v"), stateT0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	at := stateT0.Add(4 * time.Minute)
	// At its expiry instant an entry is gone; a microsecond before, not.
	if _, err := getState(t, s, convstate.KindThread, "acct_a", "k4", at); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("k4 at its expiry: err = %v, want ErrNotFound", err)
	}
	if _, err := getState(t, s, convstate.KindThread, "acct_a", "k4", at.Add(-time.Microsecond)); err != nil {
		t.Errorf("k4 before its expiry: %v", err)
	}
	n, err := s.SweepState(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("SweepState swept %d entries, want 5 (k0..k4)", n)
	}
	// Swept entries are gone even for a caller with an earlier clock; the
	// others are still there.
	if _, err := getState(t, s, convstate.KindThread, "acct_a", "k3", stateT0); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("k3 after the sweep: err = %v, want ErrNotFound", err)
	}
	if _, err := getState(t, s, convstate.KindThread, "acct_a", "k5", at); err != nil {
		t.Errorf("k5 after the sweep: %v", err)
	}
	if n, err := s.SweepState(ctx, at); err != nil || n != 0 {
		t.Errorf("second sweep: %d, %v; want 0", n, err)
	}
}

// testStateBoundedPerAccount (issue 29 item 8, the 165 MB case): 100
// kept answers of 1.5 MB each (a thinking signature) grew the database by
// 165 MB for one account. With the account bound (64 MiB by default;
// 16 MiB here) the Keeper keeps what fits, 10 of 1,572,885 bytes =
// 15.7 MB, refuses the other 90 with ErrAccountFull, and another account
// keeps its own.
func testStateBoundedPerAccount(t *testing.T, s convstate.Store) {
	ctx := t.Context()
	if _, ok := s.(convstate.StateUsage); !ok {
		t.Fatalf("%T does not implement convstate.StateUsage", s)
	}
	k, err := convstate.New(convstate.Config{Store: s, AccountMaxBytes: 16 << 20, Now: func() time.Time { return stateT0 }})
	if err != nil {
		t.Fatal(err)
	}
	sig := bytes.Repeat([]byte("s"), 1_572_864)
	kept, full := 0, 0
	for i := range 100 {
		err := k.KeepResponse(ctx, "acct_big", fmt.Sprintf("resp_%d", i), &convstate.StoredResponse{Object: []byte(`"` + string(sig) + `"`)})
		switch {
		case err == nil:
			kept++
		case errors.Is(err, convstate.ErrAccountFull):
			full++
		default:
			t.Fatal(err)
		}
	}
	n, b, err := s.(convstate.StateUsage).StateUsage(ctx, "acct_big", []string{convstate.KindResponse}, stateT0)
	if err != nil {
		t.Fatal(err)
	}
	if kept != 10 || full != 90 || n != 10 || b > 16<<20 {
		t.Errorf("kept %d, refused %d; the account holds %d entries, %d bytes; want 10, 90, 10, at most %d", kept, full, n, b, 16<<20)
	}
	if err := k.KeepResponse(ctx, "acct_small", "resp_x", &convstate.StoredResponse{Object: []byte(`"` + string(sig) + `"`)}); err != nil {
		t.Errorf("another account: %v", err)
	}
	// Usage counts only the kinds asked for: none asked, nothing counted;
	// two kinds, the entries of either.
	if n, b, err := s.(convstate.StateUsage).StateUsage(ctx, "acct_big", nil, stateT0); err != nil || n != 0 || b != 0 {
		t.Errorf("usage of no kinds: %d entries, %d bytes, %v; want 0, 0", n, b, err)
	}
	if n2, b2, err := s.(convstate.StateUsage).StateUsage(ctx, "acct_big", []string{"no-such-kind", convstate.KindResponse}, stateT0); err != nil || n2 != n || b2 != b {
		t.Errorf("usage of two kinds: %d entries, %d bytes, %v; want %d, %d", n2, b2, err, n, b)
	}
}
