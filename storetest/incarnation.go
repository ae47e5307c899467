package storetest

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Incarnations checks a store whose holds outlive their process
// (PostgreSQL, SQLite in shared mode): holds placed by incarnation 1 of
// instance "gw-a" are released at once, as records of requests cut by a
// crash, when incarnation 2 of "gw-a" starts, although their leases run
// for an hour; instance "gw-b"'s live holds and incarnation 2's own are
// untouched.
func Incarnations(t *testing.T, open func(t *testing.T) gw.Store) {
	t.Run("RestartReleasesEarlierIncarnationsHolds", func(t *testing.T) {
		s := open(t)
		inc, ok := s.(gw.Incarnations)
		if !ok {
			t.Fatalf("%T does not implement gw.Incarnations", s)
		}
		ctx := t.Context()
		a := account(t, s, "small", 1000)
		b := account(t, s, "other", 1000)
		a1, bLive := gw.NewIncarnation("gw-a"), gw.NewIncarnation("gw-b")
		place := func(h gw.Hold) {
			t.Helper()
			h.Vendor, h.Model = "openai", "gpt-4o-mini"
			if err := s.PlaceHold(ctx, h); err != nil {
				t.Fatalf("PlaceHold(%s): %v", h.ID, err)
			}
		}
		inc.SetIncarnation(a1)
		place(hold("req_a1_1", a.ID, 400))
		place(hold("req_a1_2", a.ID, 500))
		inc.SetIncarnation(bLive)
		place(hold("req_b_1", b.ID, 300))
		place(hold("req_b_2", a.ID, 50))
		// A's small balance is locked by the killed incarnation's holds.
		if err := s.PlaceHold(ctx, hold("req_refused", a.ID, 200)); gw.ErrorCode(err) != gw.CodeInsufficientBalance {
			t.Fatalf("PlaceHold while incarnation 1's holds stand = %v; want insufficient balance", err)
		}

		// gw-a restarts: incarnation 2.
		a2 := gw.NewIncarnation("gw-a")
		if a2.ID == a1.ID {
			t.Fatal("two incarnations share an id")
		}
		inc.SetIncarnation(a2)
		place(hold("req_a2_1", a.ID, 10))
		n, err := inc.ReleaseEarlierIncarnations(ctx, a2)
		if err != nil || n != 2 {
			t.Fatalf("ReleaseEarlierIncarnations = %d, %v; want 2", n, err)
		}
		wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 60, Available: 940})
		wantBalance(t, s, b.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 300, Available: 700})
		place(hold("req_served", a.ID, 200))
		wantNotFound(t, "Release(released hold)", s.Release(ctx, "req_a1_1", nil))
		for _, id := range []string{"req_b_1", "req_b_2", "req_a2_1", "req_served"} {
			if err := s.Release(ctx, id, nil); err != nil {
				t.Errorf("Release(%s) = %v; want the live hold released", id, err)
			}
		}

		// The cut requests are on the records, with their model.
		recs, err := s.Records(ctx, gw.RecordFilter{AccountID: a.ID})
		if err != nil {
			t.Fatal(err)
		}
		cut := map[string]bool{}
		for _, r := range recs {
			cut[r.RequestID] = true
			if !strings.HasPrefix(r.Note, "cut_by_crash") || !strings.Contains(r.Note, "restarted") || r.Model != "gpt-4o-mini" || r.Vendor != "openai" || r.Charge != 0 {
				t.Errorf("cut record %+v; want cut_by_crash, openai/gpt-4o-mini, no charge", r)
			}
		}
		if len(recs) != 2 || !cut["req_a1_1:cut"] || !cut["req_a1_2:cut"] {
			t.Errorf("records of the restarted instance's account = %+v; want req_a1_1:cut and req_a1_2:cut", recs)
		}
		if recs, err := s.Records(ctx, gw.RecordFilter{AccountID: b.ID}); err != nil || len(recs) != 0 {
			t.Errorf("records of the other instance's account = %+v, %v; want none", recs, err)
		}
		if n, err := inc.ReleaseEarlierIncarnations(ctx, a2); err != nil || n != 0 {
			t.Errorf("ReleaseEarlierIncarnations again = %d, %v; want 0", n, err)
		}
	})
}
