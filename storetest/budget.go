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

// budgetStore is what the budget tests need beyond gw.Store.
type budgetStore interface {
	gw.Store
	gw.BudgetUser
	gw.BudgetSetter
}

func asBudgetStore(t *testing.T, s gw.Store) budgetStore {
	t.Helper()
	bs, ok := s.(budgetStore)
	if !ok {
		t.Fatalf("%T does not implement gw.BudgetUser and gw.BudgetSetter", s)
	}
	return bs
}

// wantBudgetRefusal checks a hold refused by the named budget.
func wantBudgetRefusal(t *testing.T, what string, err error, words ...string) {
	t.Helper()
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance || e.ErrorCode != gw.ErrorCodeBudgetExceeded {
		t.Errorf("%s: err = %v, want insufficient_balance with %s", what, err, gw.ErrorCodeBudgetExceeded)
		return
	}
	for _, w := range words {
		if !strings.Contains(e.Message, w) {
			t.Errorf("%s: message %q does not say %q", what, e.Message, w)
		}
	}
}

// testBudgetTable walks a key's daily ($0.01) and monthly ($0.015)
// budgets through hand-worked figures (micro-cents): which holds fit,
// which are refused and by which budget, what a settle above its hold may
// debit, and the day's and month's rollover.
func testBudgetTable(t *testing.T, s gw.Store) {
	bs := asBudgetStore(t, s)
	ctx := t.Context()
	a := account(t, s, "budget-table", 1*gw.USD)
	kb := gw.Budget{Daily: 1_000_000, Monthly: 1_500_000} // $0.01 a day, $0.015 a month
	noon := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	day2 := time.Date(2026, 11, 30, 23, 59, 59, 999_999_000, time.UTC) // the month's last microsecond
	dec1 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	h := func(id string, amount gw.Money, at time.Time) gw.Hold {
		return gw.Hold{ID: id, AccountID: a.ID, KeyID: "key_budget", Amount: amount, ExpiresAt: time.Now().Add(time.Hour), At: at, KeyBudget: kb}
	}
	settle := func(id string, charge gw.Money, at time.Time) *gw.Record {
		t.Helper()
		r := record(id, a.ID, charge, at)
		r.KeyID = "key_budget"
		if err := s.Settle(ctx, id, r); err != nil {
			t.Fatalf("Settle(%s): %v", id, err)
		}
		return r
	}
	use := func(what string, at time.Time, day, month gw.PeriodUse) {
		t.Helper()
		u, err := bs.BudgetUse(ctx, a.ID, "key_budget", at)
		if err != nil {
			t.Fatal(err)
		}
		if u.KeyDay != day || u.KeyMonth != month {
			t.Errorf("%s: key day %+v month %+v, want %+v %+v", what, u.KeyDay, u.KeyMonth, day, month)
		}
		if u.AccountDay != day || u.AccountMonth != month {
			t.Errorf("%s: account day %+v month %+v, want %+v %+v (one key)", what, u.AccountDay, u.AccountMonth, day, month)
		}
	}

	// 0 + 0 + 400,000 <= 1,000,000.
	if err := s.PlaceHold(ctx, h("b1", 400_000, noon)); err != nil {
		t.Fatal(err)
	}
	// 0 + 400,000 + 500,000 = 900,000.
	if err := s.PlaceHold(ctx, h("b2", 500_000, noon)); err != nil {
		t.Fatal(err)
	}
	// 900,000 + 200,000 = 1,100,000 > 1,000,000: the daily budget refuses.
	wantBudgetRefusal(t, "b3 over the day", s.PlaceHold(ctx, h("b3", 200_000, noon)),
		"daily budget of this key", "$0.01000000", "$0.00900000 held")
	use("two holds", noon, gw.PeriodUse{Held: 900_000}, gw.PeriodUse{Held: 900_000})
	settle("b1", 300_000, noon)
	// 300,000 spent + 500,000 held + 200,000 = 1,000,000: fits exactly.
	if err := s.PlaceHold(ctx, h("b3", 200_000, noon)); err != nil {
		t.Fatalf("b3 at exactly the budget: %v", err)
	}
	// One micro-cent more does not.
	wantBudgetRefusal(t, "b4 one micro-cent over", s.PlaceHold(ctx, h("b4", 1, noon)), "resets at 2026-11-30 00:00 UTC")
	if err := s.Release(ctx, "b2", nil); err != nil {
		t.Fatal(err)
	}
	use("after release", noon, gw.PeriodUse{Spent: 300_000, Held: 200_000}, gw.PeriodUse{Spent: 300_000, Held: 200_000})
	// Above its hold, within the budget: 200,000 + (1,000,000 - 300,000 - 200,000) covers 250,000.
	if r := settle("b3", 250_000, noon); r.Charge != 250_000 || r.Loss != 0 {
		t.Errorf("b3 charged %d, loss %d; want 250000, 0", r.Charge, r.Loss)
	}
	// 550,000 + 400,000 = 950,000 fits; its settle at 600,000 is bounded by
	// the day: 400,000 + (1,000,000 - 550,000 - 400,000) = 450,000.
	if err := s.PlaceHold(ctx, h("b5", 400_000, noon)); err != nil {
		t.Fatal(err)
	}
	if r := settle("b5", 600_000, noon); r.Charge != 450_000 || r.Loss != 150_000 || !strings.Contains(r.Note, gw.NoteOperatorLoss) {
		t.Errorf("b5 charged %d, loss %d, note %q; want 450000, 150000, operator_loss", r.Charge, r.Loss, r.Note)
	}
	use("day spent", noon, gw.PeriodUse{Spent: 1_000_000}, gw.PeriodUse{Spent: 1_000_000})
	wantBudgetRefusal(t, "b6 the day is spent", s.PlaceHold(ctx, h("b6", 1, noon)), "daily")

	// The next day: the day's budget is whole again; the month has
	// 1,500,000 - 1,000,000 = 500,000 left.
	wantBudgetRefusal(t, "c1 over the month", s.PlaceHold(ctx, h("c1", 600_000, day2)),
		"monthly budget of this key", "$0.01500000", "resets at 2026-12-01 00:00 UTC")
	if err := s.PlaceHold(ctx, h("c2", 500_000, day2)); err != nil {
		t.Fatalf("c2 fills the month: %v", err)
	}
	settle("c2", 500_000, day2)
	use("month spent", day2, gw.PeriodUse{Spent: 500_000}, gw.PeriodUse{Spent: 1_500_000})
	// One microsecond later it is December: both budgets are whole.
	if err := s.PlaceHold(ctx, h("d1", 1_000_000, dec1)); err != nil {
		t.Fatalf("d1 in a new month: %v", err)
	}
	use("new month", dec1, gw.PeriodUse{Held: 1_000_000}, gw.PeriodUse{Held: 1_000_000})
	settle("d1", 1_000_000, dec1)
	use("new month spent", dec1, gw.PeriodUse{Spent: 1_000_000}, gw.PeriodUse{Spent: 1_000_000})
	// November is as it was.
	use("november", day2, gw.PeriodUse{Spent: 500_000}, gw.PeriodUse{Spent: 1_500_000})
	// A hold without budgets is not bounded by them.
	if err := s.PlaceHold(ctx, gw.Hold{ID: "free", AccountID: a.ID, KeyID: "key_budget", Amount: 5_000_000, ExpiresAt: time.Now().Add(time.Hour), At: dec1}); err != nil {
		t.Fatalf("hold without budgets: %v", err)
	}
	if err := s.Release(ctx, "free", nil); err != nil {
		t.Fatal(err)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: gw.USD, Charged: 2_500_000, Balance: gw.USD - 2_500_000, Available: gw.USD - 2_500_000})
}

// testAccountBudget: an account's budget bounds the sum of its keys'.
func testAccountBudget(t *testing.T, s gw.Store) {
	bs := asBudgetStore(t, s)
	ctx := t.Context()
	a := account(t, s, "budget-account", 1*gw.USD)
	ab := gw.Budget{Daily: 2_000_000}
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	h := func(id, key string, amount gw.Money) gw.Hold {
		return gw.Hold{ID: id, AccountID: a.ID, KeyID: key, Amount: amount, ExpiresAt: time.Now().Add(time.Hour), At: at, AccountBudget: ab}
	}
	if err := s.PlaceHold(ctx, h("a1", "key_one", 1_500_000)); err != nil {
		t.Fatal(err)
	}
	// Another key: 1,500,000 + 600,000 > 2,000,000.
	wantBudgetRefusal(t, "a2", s.PlaceHold(ctx, h("a2", "key_two", 600_000)), "daily budget of this account", "$0.02000000")
	if err := s.PlaceHold(ctx, h("a3", "key_two", 500_000)); err != nil {
		t.Fatal(err)
	}
	r := record("a1", a.ID, 1_000_000, at)
	r.KeyID = "key_one"
	if err := s.Settle(ctx, "a1", r); err != nil {
		t.Fatal(err)
	}
	u, err := bs.BudgetUse(ctx, a.ID, "key_two", at)
	if err != nil {
		t.Fatal(err)
	}
	want := gw.BudgetUse{KeyDay: gw.PeriodUse{Held: 500_000}, KeyMonth: gw.PeriodUse{Held: 500_000},
		AccountDay: gw.PeriodUse{Spent: 1_000_000, Held: 500_000}, AccountMonth: gw.PeriodUse{Spent: 1_000_000, Held: 500_000}}
	if u != want {
		t.Errorf("BudgetUse = %+v, want %+v", u, want)
	}
	if got := u.AccountDay.Remaining(ab.Daily); got != 500_000 {
		t.Errorf("remaining %d, want 500000", got)
	}
	if err := s.Release(ctx, "a3", nil); err != nil {
		t.Fatal(err)
	}
	verifyLedger(t, s, a.ID)
}

// testBudgetSettings: budgets set on keys and accounts reach the key's
// principal and the key list, and clear.
func testBudgetSettings(t *testing.T, s gw.Store) {
	bs := asBudgetStore(t, s)
	ctx := t.Context()
	a := account(t, s, "budget-settings", 0)
	k := &gw.Key{ID: "key_bset", AccountID: a.ID, Hint: "gwk_b", Budget: gw.Budget{Daily: 123}}
	if err := s.CreateKey(ctx, k, hash("budget-secret")); err != nil {
		t.Fatal(err)
	}
	p, err := s.KeyByHash(ctx, hash("budget-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if p.KeyBudget != (gw.Budget{Daily: 123}) || !p.AccountBudget.IsZero() {
		t.Errorf("principal budgets %+v %+v", p.KeyBudget, p.AccountBudget)
	}
	if err := bs.SetKeyBudget(ctx, k.ID, gw.Budget{Monthly: 456}); err != nil {
		t.Fatal(err)
	}
	if err := bs.SetAccountBudget(ctx, a.ID, gw.Budget{Daily: 7, Monthly: 8}); err != nil {
		t.Fatal(err)
	}
	if p, err = s.KeyByHash(ctx, hash("budget-secret")); err != nil {
		t.Fatal(err)
	}
	if p.KeyBudget != (gw.Budget{Monthly: 456}) || p.AccountBudget != (gw.Budget{Daily: 7, Monthly: 8}) {
		t.Errorf("principal budgets %+v %+v", p.KeyBudget, p.AccountBudget)
	}
	if b, err := bs.AccountBudget(ctx, a.ID); err != nil || b != (gw.Budget{Daily: 7, Monthly: 8}) {
		t.Errorf("AccountBudget = %+v, %v", b, err)
	}
	for _, key := range mustKeys(t, s) {
		if key.ID == k.ID && key.Budget != (gw.Budget{Monthly: 456}) {
			t.Errorf("Keys: budget %+v", key.Budget)
		}
	}
	if err := bs.SetAccountBudget(ctx, a.ID, gw.Budget{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := bs.AccountBudget(ctx, a.ID); !b.IsZero() {
		t.Errorf("cleared account budget = %+v", b)
	}
	wantNotFound(t, "SetKeyBudget(unknown)", bs.SetKeyBudget(ctx, "key_none", gw.Budget{Daily: 1}))
	wantNotFound(t, "SetAccountBudget(unknown)", bs.SetAccountBudget(ctx, "acct_none", gw.Budget{Daily: 1}))
}

// testConcurrentBudget: many requests at once, each holding and then
// settling (some above their hold), on two keys of an account with a key
// budget and an account budget far below the balance: the charges never
// pass a budget, and the budgets, not the balance, refuse.
func testConcurrentBudget(t *testing.T, s gw.Store) {
	bs := asBudgetStore(t, s)
	ctx := t.Context()
	a := account(t, s, "budget-concurrent", 10*gw.USD)
	at := time.Now().UTC()
	keyBudget := gw.Budget{Daily: 300_000}
	acctBudget := gw.Budget{Monthly: 500_000}
	const n = 120
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"key_c1", "key_c2"}[i%2]
			id := fmt.Sprintf("bc_%03d", i)
			err := s.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, KeyID: key, Amount: 10_000, ExpiresAt: time.Now().Add(time.Hour), At: at,
				KeyBudget: keyBudget, AccountBudget: acctBudget})
			if err != nil {
				if gw.AsError(err).ErrorCode != gw.ErrorCodeBudgetExceeded {
					t.Errorf("%s: %v", id, err)
				}
				mu.Lock()
				refused++
				mu.Unlock()
				return
			}
			r := record(id, a.ID, gw.Money(7_000+i%5*1_500), at) // 7,000 to 13,000: some above the hold
			r.KeyID = key
			if err := s.Settle(ctx, id, r); err != nil {
				t.Errorf("settle %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	u1, err := bs.BudgetUse(ctx, a.ID, "key_c1", at)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := bs.BudgetUse(ctx, a.ID, "key_c2", at)
	if err != nil {
		t.Fatal(err)
	}
	if u1.KeyDay.Spent > keyBudget.Daily || u2.KeyDay.Spent > keyBudget.Daily {
		t.Errorf("key spends %d, %d above the key budget %d", u1.KeyDay.Spent, u2.KeyDay.Spent, keyBudget.Daily)
	}
	if u1.AccountMonth.Spent > acctBudget.Monthly {
		t.Errorf("account spend %d above its budget %d", u1.AccountMonth.Spent, acctBudget.Monthly)
	}
	if u1.KeyDay.Spent+u2.KeyDay.Spent != u1.AccountMonth.Spent || u1.KeyDay.Held+u1.AccountMonth.Held != 0 {
		t.Errorf("use %+v %+v: key spends do not add up to the account's, or holds left", u1, u2)
	}
	if refused == 0 {
		t.Errorf("no request refused: %d x 10,000 fit in 500,000", n)
	}
	b := balance(t, s, a.ID)
	if b.Charged != u1.AccountMonth.Spent {
		t.Errorf("charged %d, budget use says %d", b.Charged, u1.AccountMonth.Spent)
	}
	t.Logf("%d of %d refused; key spends %d and %d, account %d", refused, n, u1.KeyDay.Spent, u2.KeyDay.Spent, u1.AccountMonth.Spent)
	verifyLedger(t, s, a.ID)
}

// testBudgetProperty: random sequences of holds (some already expired,
// as a stalled request's), settles (up to twice the hold), releases and
// sweeps on two keys under key and account budgets never take a
// period's charges past a budget, and the ledger stays exact.
func testBudgetProperty(t *testing.T, s gw.Store) {
	bs := asBudgetStore(t, s)
	ctx := t.Context()
	a := account(t, s, "budget-property", 10*gw.USD)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	kb := gw.Budget{Daily: 200_000, Monthly: 300_000}
	ab := gw.Budget{Daily: 350_000}
	rng := rand.New(rand.NewPCG(29, 8))
	type open struct {
		id, key string
		amount  gw.Money
	}
	var holds []open
	check := func(step int) {
		t.Helper()
		for _, key := range []string{"key_p1", "key_p2"} {
			u, err := bs.BudgetUse(ctx, a.ID, key, at)
			if err != nil {
				t.Fatal(err)
			}
			if u.KeyDay.Spent > kb.Daily || u.KeyMonth.Spent > kb.Monthly || u.AccountDay.Spent > ab.Daily {
				t.Fatalf("step %d: %s spent %+v past a budget", step, key, u)
			}
		}
	}
	for step := range 300 {
		switch op := rng.IntN(10); {
		case op < 5 || len(holds) == 0:
			key := []string{"key_p1", "key_p2"}[rng.IntN(2)]
			h := gw.Hold{ID: fmt.Sprintf("bp_%03d", step), AccountID: a.ID, KeyID: key, Amount: gw.Money(1 + rng.IntN(60_000)),
				ExpiresAt: time.Now().Add(time.Hour), At: at, KeyBudget: kb, AccountBudget: ab}
			if rng.IntN(8) == 0 {
				h.ExpiresAt = time.Now().Add(-time.Second) // a stalled request's, already past
			}
			err := s.PlaceHold(ctx, h)
			switch {
			case err == nil:
				holds = append(holds, open{h.ID, key, h.Amount})
			case gw.AsError(err).ErrorCode != gw.ErrorCodeBudgetExceeded:
				t.Fatalf("step %d: %v", step, err)
			}
		case op < 8:
			i := rng.IntN(len(holds))
			h := holds[i]
			holds = append(holds[:i], holds[i+1:]...)
			r := record(h.id, a.ID, gw.Money(rng.IntN(2*int(h.amount)+1)), at)
			r.KeyID = h.key
			if err := s.Settle(ctx, h.id, r); err != nil && !errors.Is(err, gw.ErrNotFound) {
				t.Fatalf("step %d: settle: %v", step, err)
			}
		case op < 9:
			i := rng.IntN(len(holds))
			if err := s.Release(ctx, holds[i].id, nil); err != nil && !errors.Is(err, gw.ErrNotFound) {
				t.Fatalf("step %d: release: %v", step, err)
			}
			holds = append(holds[:i], holds[i+1:]...)
		default:
			if _, err := s.ExpireHolds(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		check(step)
	}
	verifyLedger(t, s, a.ID)
}
