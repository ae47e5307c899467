package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
)

// TestSettleUnderBudgetsAfterBatch drives one hand-made batch: the settle
// of a budgeted hold above its hold, which finishHold leaves to
// finishHoldBudgeted once the batch committed, among calls the batch
// runs itself (a budgeted hold's settle within its hold, an unbudgeted
// hold's above its hold, a budgeted hold's release, a budgeted hold, the
// settle of a missing hold). Every call gets its own answer and the
// budget bounds the late settle as of after the batch (micro-cents).
func TestSettleUnderBudgetsAfterBatch(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	a, err := db.EnsureAccount(ctx, "late")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TopUp(ctx, a.ID, 10*gw.USD, "t"); err != nil {
		t.Fatal(err)
	}
	kb := gw.Budget{Daily: 1_000_000}
	noon := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	exp := time.Now().Add(time.Hour)
	hold := func(id, key string, amount gw.Money, b gw.Budget) gw.Hold {
		return gw.Hold{ID: id, AccountID: a.ID, KeyID: key, Amount: amount, ExpiresAt: exp, At: noon, KeyBudget: b}
	}
	// Key k's day: 400,000 + 300,000 + 50,000 held of 1,000,000.
	for _, h := range []gw.Hold{hold("over", "k", 400_000, kb), hold("within", "k", 300_000, kb),
		hold("rel", "k", 50_000, kb), hold("free", "k2", 500_000, gw.Budget{})} {
		if err := db.PlaceHold(ctx, h); err != nil {
			t.Fatalf("PlaceHold(%s): %v", h.ID, err)
		}
	}
	rec := func(id string, charge gw.Money) *gw.Record {
		return &gw.Record{RequestID: id, Status: 200, Charge: charge, CreatedAt: noon}
	}
	batch := []*groupcommit.Op{
		{Kind: groupcommit.Settle, ID: "over", Rec: rec("over", 900_000)},
		{Kind: groupcommit.Settle, ID: "within", Rec: rec("within", 200_000)},
		{Kind: groupcommit.Settle, ID: "free", Rec: rec("free", 700_000)},
		{Kind: groupcommit.Settle, ID: "gone", Rec: rec("gone", 5)},
		{Kind: groupcommit.Release, ID: "rel"},
		// 200,000 spent + 400,000 held ("over", not settled yet) + 100,000.
		{Kind: groupcommit.Hold, Hold: hold("new", "k", 100_000, kb)},
	}
	results := db.gc.Commit(batch)
	for i, err := range results {
		if want := i == 3; errors.Is(err, gw.ErrNotFound) != want || (err != nil) != want {
			t.Errorf("call %d (%s %s): err = %v, want not found: %v", i, batch[i].Kind, batch[i].ID, err, want)
		}
	}
	// "over" after the batch: 400,000 + (1,000,000 - 200,000 spent - 100,000
	// held by "new") = 700,000 of its 900,000.
	if r := batch[0].Rec; r.Charge != 700_000 || r.Loss != 200_000 || !strings.Contains(r.Note, "what the budgets cover") {
		t.Errorf("over: charge %d, loss %d, note %q; want 700000, 200000, bounded by the budgets", r.Charge, r.Loss, r.Note)
	}
	if r := batch[1].Rec; r.Charge != 200_000 || r.Loss != 0 {
		t.Errorf("within: charge %d, loss %d; want 200000, 0", r.Charge, r.Loss)
	}
	if r := batch[2].Rec; r.Charge != 700_000 || r.Loss != 0 {
		t.Errorf("free: charge %d, loss %d; want 700000, 0 (no budget)", r.Charge, r.Loss)
	}
	for id, want := range map[string]gw.Money{"over": 700_000, "within": 200_000, "free": 700_000} {
		r, err := db.Record(ctx, id)
		if err != nil {
			t.Fatalf("Record(%s): %v", id, err)
		}
		if r.Charge != want || r.KeyID == "" {
			t.Errorf("record %s: charge %d, key %q; want %d and the hold's key", id, r.Charge, r.KeyID, want)
		}
	}
	if _, err := db.Record(ctx, "gone"); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("record of the missing hold's settle: err = %v, want not found", err)
	}
	b, err := db.Balance(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	charged := gw.Money(700_000 + 200_000 + 700_000)
	if want := (gw.Balance{TopUps: 10 * gw.USD, Charged: charged, Held: 100_000, Balance: 10*gw.USD - charged, Available: 10*gw.USD - charged - 100_000}); b != want {
		t.Errorf("balance %+v, want %+v", b, want)
	}
	if err := db.VerifyLedger(ctx, a.ID); err != nil {
		t.Error(err)
	}
}
