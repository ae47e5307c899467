package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Budgets (gw.Budget). A period's spend is the sum of the charges of the
// records made in it (records_key_created and records_account_created
// serve it), so it is exact, needs no counter written per request, and
// rolls over by itself at midnight UTC and on the first of the month.
//
// An exclusive store reads that sum once per key or account and period,
// on the group committer between batches as it loads a balance, and then
// keeps it in the book, adding each settled charge: a hold under a budget
// costs no statement after the first. Holds without budgets cost nothing
// more than before. Without Exclusive (holds in the table, several
// processes), a hold under a budget sums the period's records and open
// holds inside its write transaction, which the writer lock serialises
// across processes.

// SetKeyBudget replaces the key's caps (zero clears them). An unknown key
// is ErrNotFound.
func (db *DB) SetKeyBudget(ctx context.Context, keyID string, b gw.Budget) error {
	if b.Daily < 0 || b.Monthly < 0 {
		return fmt.Errorf("set key budget: negative budget")
	}
	res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET daily_budget = ?, monthly_budget = ? WHERE id = ?`, int64(b.Daily), int64(b.Monthly), keyID)
	return updated(res, err, "set key budget", keyID)
}

// SetAccountBudget replaces the account's caps (zero clears them), and
// moves the key generation so that running gateways reload their keys'
// principals, which carry the account's caps. An unknown account is
// ErrNotFound.
func (db *DB) SetAccountBudget(ctx context.Context, accountID string, b gw.Budget) error {
	if b.Daily < 0 || b.Monthly < 0 {
		return fmt.Errorf("set account budget: negative budget")
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("set account budget: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET daily_budget = ?, monthly_budget = ? WHERE id = ?`, int64(b.Daily), int64(b.Monthly), accountID)
	if err := updated(res, err, "set account budget", accountID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE key_generation SET gen = gen + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("set account budget: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("set account budget: %w", err)
	}
	return nil
}

// AccountBudget returns the account's caps. An unknown account is
// ErrNotFound.
func (db *DB) AccountBudget(ctx context.Context, accountID string) (gw.Budget, error) {
	var b gw.Budget
	if err := db.r.QueryRowContext(ctx, `SELECT daily_budget, monthly_budget FROM accounts WHERE id = ?`, accountID).Scan(&b.Daily, &b.Monthly); err != nil {
		return b, fmt.Errorf("account budget %q: %w", accountID, notFound(err))
	}
	return b, nil
}

func updated(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	} else if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, gw.ErrNotFound)
	}
	return nil
}

// BudgetUse returns the key's (keyID may be empty) and its account's
// charges and open holds in the day and month containing at.
func (db *DB) BudgetUse(ctx context.Context, accountID, keyID string, at time.Time) (gw.BudgetUse, error) {
	var u gw.BudgetUse
	now := db.now()
	if db.book != nil {
		// A charge committed while its hold is still in the book would
		// count twice.
		db.finishing.RLock()
		defer db.finishing.RUnlock()
	}
	for _, c := range []struct {
		dst   *gw.PeriodUse
		scope gw.BudgetScope
		owner string
		p     gw.BudgetPeriod
	}{
		{&u.KeyDay, gw.BudgetKey, keyID, gw.Daily}, {&u.KeyMonth, gw.BudgetKey, keyID, gw.Monthly},
		{&u.AccountDay, gw.BudgetAccount, accountID, gw.Daily}, {&u.AccountMonth, gw.BudgetAccount, accountID, gw.Monthly},
	} {
		if c.owner == "" {
			continue
		}
		l := gw.BudgetLimit{Scope: c.scope, Owner: c.owner, Period: c.p}
		spent, err := spentIn(ctx, db.r, l, at)
		if err != nil {
			return u, fmt.Errorf("budget use: %w", err)
		}
		c.dst.Spent = spent
		if db.book != nil {
			c.dst.Held = gw.Money(db.book.heldIn(accountID, l, at, "", now))
		} else if c.dst.Held, err = heldIn(ctx, db.r, accountID, l, at, "", now); err != nil {
			return u, fmt.Errorf("budget use: %w", err)
		}
	}
	return u, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// spentIn sums the charges of l's owner's records in the period of l
// containing at.
func spentIn(ctx context.Context, q querier, l gw.BudgetLimit, at time.Time) (gw.Money, error) {
	start, end := gw.PeriodOf(l.Period, at)
	col := "account_id"
	if l.Scope == gw.BudgetKey {
		col = "key_id"
	}
	var sum int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(charge), 0) FROM records WHERE `+col+` = ? AND created_at >= ? AND created_at < ?`,
		l.Owner, micros(start), micros(end)).Scan(&sum)
	return gw.Money(sum), err
}

// heldIn sums the live holds (in the holds table) of l's owner placed in
// the period of l containing at, except the hold except.
func heldIn(ctx context.Context, q querier, accountID string, l gw.BudgetLimit, at time.Time, except string, now time.Time) (gw.Money, error) {
	start, end := gw.PeriodOf(l.Period, at)
	key := ""
	if l.Scope == gw.BudgetKey {
		key = l.Owner
	}
	var sum int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM holds
		WHERE account_id = ?1 AND (?2 = '' OR key_id = ?2) AND expires_at > ?3 AND created_at >= ?4 AND created_at < ?5 AND id <> ?6`,
		accountID, key, micros(now), micros(start), micros(end), except).Scan(&sum)
	return gw.Money(sum), err
}

// budgetUseQuery reads, in one statement, what counts against h's
// budgets (holds in the table): the key's and the account's charges in
// the day and the month of h (one index range each, only for a scope
// with a budget), and their live holds other than h. ?1 key, ?2 account,
// ?3 now, ?4/?5 the day, ?6/?7 the month, ?8 the key has a budget, ?9
// the account has, ?10 the hold to leave out.
const budgetUseQuery = `SELECT k.day, k.month, a.day, a.month, hk.day, hk.month, ha.day, ha.month FROM
	(SELECT coalesce(sum(CASE WHEN created_at >= ?4 AND created_at < ?5 THEN charge END), 0) AS day, coalesce(sum(charge), 0) AS month
	 FROM records WHERE ?8 AND key_id = ?1 AND created_at >= ?6 AND created_at < ?7) k,
	(SELECT coalesce(sum(CASE WHEN created_at >= ?4 AND created_at < ?5 THEN charge END), 0) AS day, coalesce(sum(charge), 0) AS month
	 FROM records WHERE ?9 AND account_id = ?2 AND created_at >= ?6 AND created_at < ?7) a,
	(SELECT coalesce(sum(CASE WHEN created_at >= ?4 AND created_at < ?5 THEN amount END), 0) AS day, coalesce(sum(amount), 0) AS month
	 FROM holds WHERE ?8 AND account_id = ?2 AND key_id = ?1 AND expires_at > ?3 AND created_at >= ?6 AND created_at < ?7 AND id <> ?10) hk,
	(SELECT coalesce(sum(CASE WHEN created_at >= ?4 AND created_at < ?5 THEN amount END), 0) AS day, coalesce(sum(amount), 0) AS month
	 FROM holds WHERE ?9 AND account_id = ?2 AND expires_at > ?3 AND created_at >= ?6 AND created_at < ?7 AND id <> ?10) ha`

// holdUse returns what counts against each of h's budgets, in the order
// of h.BudgetLimits, inside the write transaction.
func (db *DB) holdUse(ctx context.Context, tx *sql.Tx, h *gw.Hold, now time.Time) ([]gw.PeriodUse, error) {
	ds, de := gw.PeriodOf(gw.Daily, h.At)
	ms, me := gw.PeriodOf(gw.Monthly, h.At)
	var kd, km, ad, am, hkd, hkm, had, ham int64
	err := tx.StmtContext(ctx, db.ps.budgetUse).QueryRowContext(ctx, h.KeyID, h.AccountID, micros(now),
		micros(ds), micros(de), micros(ms), micros(me), !h.KeyBudget.IsZero(), !h.AccountBudget.IsZero(), h.ID).
		Scan(&kd, &km, &ad, &am, &hkd, &hkm, &had, &ham)
	if err != nil {
		return nil, fmt.Errorf("budget use: %w", err)
	}
	var out []gw.PeriodUse
	for _, l := range h.BudgetLimits() {
		u := gw.PeriodUse{Spent: gw.Money(kd), Held: gw.Money(hkd)}
		switch {
		case l.Scope == gw.BudgetKey && l.Period == gw.Monthly:
			u = gw.PeriodUse{Spent: gw.Money(km), Held: gw.Money(hkm)}
		case l.Scope == gw.BudgetAccount && l.Period == gw.Daily:
			u = gw.PeriodUse{Spent: gw.Money(ad), Held: gw.Money(had)}
		case l.Scope == gw.BudgetAccount:
			u = gw.PeriodUse{Spent: gw.Money(am), Held: gw.Money(ham)}
		}
		out = append(out, u)
	}
	return out, nil
}

// checkBudgets refuses h (holds in the table) when it does not fit in one
// of its budgets.
func (db *DB) checkBudgets(ctx context.Context, tx *sql.Tx, h *gw.Hold, now time.Time) error {
	limits := h.BudgetLimits()
	if len(limits) == 0 {
		return nil
	}
	use, err := db.holdUse(ctx, tx, h, now)
	if err != nil {
		return err
	}
	for i, l := range limits {
		if !gw.FitsBudget(l.Limit, use[i], h.Amount) {
			return gw.BudgetExceeded(l, use[i], h.Amount, h.At)
		}
	}
	return nil
}

// budgetBound caps r.Charge at what each of h's budgets covers (cover
// returns it, for the i-th of h.BudgetLimits), moving the rest to r.Loss
// with its note.
func budgetBound(r *gw.Record, h *gw.Hold, cover func(i int, l gw.BudgetLimit) (gw.Money, error)) error {
	for i, l := range h.BudgetLimits() {
		c, err := cover(i, l)
		if err != nil {
			return err
		}
		if r.Charge > c {
			short := r.Charge - c
			r.Loss += short
			r.Charge = c
			r.Note = gw.JoinNote(r.Note, fmt.Sprintf("%s: the charge exceeded the hold and what the %s budget of the %s covers by %d", gw.NoteOperatorLoss, l.Period, l.Scope, short))
		}
	}
	return nil
}
