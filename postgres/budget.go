package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/jackc/pgx/v5"
)

// Budgets (gw.Budget). A period's spend is the sum of the charges of the
// records made in it (records_key_created and records_account_created
// serve it): exact, shared by every instance, rolling over by itself, and
// with no counter written per request. Only a hold under a budget reads
// it, in its group commit batch, after the batch locked the account: the
// account's lock serialises every hold and settle of its keys across
// instances, so the sums cannot miss a concurrent hold. Holds without
// budgets run the statement they ran before, and so does a settle that
// the budgets cannot bound (no budget, or a charge within its live hold):
// only a budgeted hold's settle above its hold runs finishHoldBudgeted.

// The four budgets a hold can carry, as the holds table's columns, with
// the sums they bound.
var budgetColumns = []struct {
	col    string // the hold's column
	key    bool   // the key's (else the account's)
	period string // "day" or "month"
}{
	{"key_daily_budget", true, "day"}, {"key_monthly_budget", true, "month"},
	{"account_daily_budget", false, "day"}, {"account_monthly_budget", false, "month"},
}

// noBudget holds for a hold (a row of holds) without budgets.
var noBudget = func() string {
	var parts []string
	for _, c := range budgetColumns {
		parts = append(parts, c.col+" <= 0")
	}
	return strings.Join(parts, " AND ")
}()

// periodBounds returns SQL for the UTC day or month containing the
// timestamptz expression t: its start and its end.
func periodBounds(period, t string) (start, end string) {
	start = fmt.Sprintf("date_trunc('%s', %s, 'UTC')", period, t)
	end = fmt.Sprintf("((%s AT TIME ZONE 'UTC') + interval '1 %s') AT TIME ZONE 'UTC'", start, period)
	return start, end
}

// budgetCovers is finishHoldBudgeted's bound of the debit by the hold's budgets:
// for each, the hold (when live) plus what the budget still covers after
// the period's charges and the account's or key's other live holds. A
// charge within its live hold is within its budgets: nothing is summed.
var budgetCovers = func() string {
	own := `(CASE WHEN h.expires_at > $31::timestamptz THEN h.amount ELSE 0 END)`
	var parts []string
	for _, c := range budgetColumns {
		start, end := periodBounds(c.period, "h.created_at")
		owner, keyHold := "account_id = h.account_id", ""
		if c.key {
			owner, keyHold = "key_id = h.key_id", " AND key_id = h.key_id"
		}
		spent := fmt.Sprintf(`(SELECT coalesce(sum(charge), 0)::bigint FROM records WHERE %s AND created_at >= %s AND created_at < %s)`, owner, start, end)
		others := fmt.Sprintf(`(SELECT coalesce(sum(amount), 0)::bigint FROM holds WHERE account_id = h.account_id%s AND id <> $29
			AND expires_at > $31::timestamptz AND created_at >= %s AND created_at < %s)`, keyHold, start, end)
		parts = append(parts, fmt.Sprintf(`CASE WHEN h.%s > 0 AND $21::bigint > %s THEN greatest(%s, h.%s - %s - %s) ELSE $21::bigint END`, c.col, own, own, c.col, spent, others))
	}
	return "least(" + strings.Join(parts, ",\n\t\t\t\t") + ")"
}()

// placeHoldBudgeted is placeHold for a hold under budgets: $8 to $11 the
// caps (key daily, key monthly, account daily, account monthly; 0 none),
// $12/$13 the day's bounds and $14/$15 the month's. The key's and the
// account's charges and live holds in the month are read in one index
// range each (the day's within it), only for a scope with a cap. It
// returns, beside placeHold's columns, each cap's period charges and
// open holds.
const placeHoldBudgeted = `WITH acct AS (SELECT balance, held - (SELECT coalesce(sum(amount), 0)::bigint
		FROM holds WHERE account_id = $2 AND expires_at <= $6) AS live FROM accounts WHERE id = $2),
	dup AS (SELECT EXISTS (SELECT 1 FROM holds WHERE id = $1) AS e),
	ks AS (SELECT coalesce(sum(charge) FILTER (WHERE created_at >= $12::timestamptz AND created_at < $13::timestamptz), 0)::bigint AS day,
			coalesce(sum(charge), 0)::bigint AS month
		FROM records WHERE $8::bigint + $9::bigint > 0 AND key_id = $3 AND created_at >= $14::timestamptz AND created_at < $15::timestamptz),
	acs AS (SELECT coalesce(sum(charge) FILTER (WHERE created_at >= $12::timestamptz AND created_at < $13::timestamptz), 0)::bigint AS day,
			coalesce(sum(charge), 0)::bigint AS month
		FROM records WHERE $10::bigint + $11::bigint > 0 AND account_id = $2 AND created_at >= $14::timestamptz AND created_at < $15::timestamptz),
	kh AS (SELECT coalesce(sum(amount) FILTER (WHERE created_at >= $12::timestamptz AND created_at < $13::timestamptz), 0)::bigint AS day,
			coalesce(sum(amount), 0)::bigint AS month
		FROM holds WHERE $8::bigint + $9::bigint > 0 AND account_id = $2 AND key_id = $3 AND expires_at > $6
			AND created_at >= $14::timestamptz AND created_at < $15::timestamptz),
	ah AS (SELECT coalesce(sum(amount) FILTER (WHERE created_at >= $12::timestamptz AND created_at < $13::timestamptz), 0)::bigint AS day,
			coalesce(sum(amount), 0)::bigint AS month
		FROM holds WHERE $10::bigint + $11::bigint > 0 AND account_id = $2 AND expires_at > $6
			AND created_at >= $14::timestamptz AND created_at < $15::timestamptz),
	u AS (SELECT ks.day AS s0, kh.day AS h0, ks.month AS s1, kh.month AS h1, acs.day AS s2, ah.day AS h2, acs.month AS s3, ah.month AS h3
		FROM ks, acs, kh, ah),
	ins AS (
		INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at,
			key_daily_budget, key_monthly_budget, account_daily_budget, account_monthly_budget, vendor, model, instance, incarnation)
		SELECT $1::text, $2::text, $3::text, $4::bigint, $5::timestamptz, $7::timestamptz, $8::bigint, $9::bigint, $10::bigint, $11::bigint, $16::text, $17::text, $18::text, $19::text
		FROM acct, dup, u
		WHERE NOT dup.e AND acct.balance - acct.live >= $4::bigint
			AND ($8::bigint = 0 OR u.s0 + u.h0 + $4::bigint <= $8::bigint) AND ($9::bigint = 0 OR u.s1 + u.h1 + $4::bigint <= $9::bigint)
			AND ($10::bigint = 0 OR u.s2 + u.h2 + $4::bigint <= $10::bigint) AND ($11::bigint = 0 OR u.s3 + u.h3 + $4::bigint <= $11::bigint)
		RETURNING amount
	),
	add AS (UPDATE accounts SET held = held + ins.amount FROM ins WHERE accounts.id = $2 RETURNING 1)
	SELECT acct.balance, acct.live, dup.e, EXISTS (SELECT 1 FROM add), u.s0, u.h0, u.s1, u.h1, u.s2, u.h2, u.s3, u.h3 FROM acct, dup, u`

func budgetedArgs(h *gw.Hold, now time.Time, inc gw.Incarnation) []any {
	ds, de := gw.PeriodOf(gw.Daily, h.At)
	ms, me := gw.PeriodOf(gw.Monthly, h.At)
	return []any{h.ID, h.AccountID, h.KeyID, int64(h.Amount), h.ExpiresAt, now, h.At,
		int64(h.KeyBudget.Daily), int64(h.KeyBudget.Monthly), int64(h.AccountBudget.Daily), int64(h.AccountBudget.Monthly),
		ds, de, ms, me, h.Vendor, h.Model, inc.Instance, inc.ID}
}

// readBudgeted reads placeHoldBudgeted's answer.
func readBudgeted(br pgx.BatchResults, h *gw.Hold) error {
	var balance, held int64
	var dup, placed bool
	var use [4]gw.PeriodUse
	if err := br.QueryRow().Scan(&balance, &held, &dup, &placed,
		&use[0].Spent, &use[0].Held, &use[1].Spent, &use[1].Held, &use[2].Spent, &use[2].Held, &use[3].Spent, &use[3].Held); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("account %q: %w", h.AccountID, gw.ErrNotFound)
		}
		return err
	}
	switch {
	case dup:
		return fmt.Errorf("hold %q: %w", h.ID, groupcommit.ErrHoldExists)
	case placed:
		return nil
	case balance-held < int64(h.Amount):
		return groupcommit.Insufficient(h.Amount, gw.Money(balance-held))
	}
	limits := []gw.Money{h.KeyBudget.Daily, h.KeyBudget.Monthly, h.AccountBudget.Daily, h.AccountBudget.Monthly}
	for i, c := range budgetColumns {
		if limits[i] > 0 && !gw.FitsBudget(limits[i], use[i], h.Amount) {
			l := gw.BudgetLimit{Scope: gw.BudgetAccount, Owner: h.AccountID, Period: gw.Daily, Limit: limits[i]}
			if c.key {
				l.Scope, l.Owner = gw.BudgetKey, h.KeyID
			}
			if c.period == "month" {
				l.Period = gw.Monthly
			}
			return gw.BudgetExceeded(l, use[i], h.Amount, h.At)
		}
	}
	return fmt.Errorf("hold %q: not placed", h.ID)
}

// SetKeyBudget replaces the key's caps (zero clears them). An unknown key
// is ErrNotFound.
func (db *DB) SetKeyBudget(ctx context.Context, keyID string, b gw.Budget) error {
	if b.Daily < 0 || b.Monthly < 0 {
		return errors.New("set key budget: negative budget")
	}
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET daily_budget = $2, monthly_budget = $3 WHERE id = $1`, keyID, int64(b.Daily), int64(b.Monthly))
	if err != nil {
		return fmt.Errorf("set key budget: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set key budget %q: %w", keyID, gw.ErrNotFound)
	}
	return nil
}

// SetAccountBudget replaces the account's caps (zero clears them) and
// moves the key generation, so that running instances reload their keys'
// principals, which carry the account's caps. An unknown account is
// ErrNotFound.
func (db *DB) SetAccountBudget(ctx context.Context, accountID string, b gw.Budget) error {
	if b.Daily < 0 || b.Monthly < 0 {
		return errors.New("set account budget: negative budget")
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE accounts SET daily_budget = $2, monthly_budget = $3 WHERE id = $1`, accountID, int64(b.Daily), int64(b.Monthly))
		if err != nil {
			return fmt.Errorf("set account budget: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("set account budget %q: %w", accountID, gw.ErrNotFound)
		}
		if _, err := tx.Exec(ctx, `UPDATE key_generation SET gen = gen + 1 WHERE id = 1`); err != nil {
			return fmt.Errorf("set account budget: %w", err)
		}
		return nil
	})
}

// AccountBudget returns the account's caps. An unknown account is
// ErrNotFound.
func (db *DB) AccountBudget(ctx context.Context, accountID string) (gw.Budget, error) {
	var b gw.Budget
	if err := db.pool.QueryRow(ctx, `SELECT daily_budget, monthly_budget FROM accounts WHERE id = $1`, accountID).Scan(&b.Daily, &b.Monthly); err != nil {
		return b, fmt.Errorf("account budget %q: %w", accountID, notFound(err))
	}
	return b, nil
}

// BudgetUse returns the key's (keyID may be empty) and its account's
// charges and open holds in the day and month containing at.
func (db *DB) BudgetUse(ctx context.Context, accountID, keyID string, at time.Time) (gw.BudgetUse, error) {
	var u gw.BudgetUse
	ds, de := gw.PeriodOf(gw.Daily, at)
	ms, me := gw.PeriodOf(gw.Monthly, at)
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT coalesce(sum(charge), 0)::bigint FROM records WHERE key_id = $2 AND created_at >= $4 AND created_at < $5),
		(SELECT coalesce(sum(amount), 0)::bigint FROM holds WHERE account_id = $1 AND key_id = $2 AND expires_at > $3 AND created_at >= $4 AND created_at < $5),
		(SELECT coalesce(sum(charge), 0)::bigint FROM records WHERE key_id = $2 AND created_at >= $6 AND created_at < $7),
		(SELECT coalesce(sum(amount), 0)::bigint FROM holds WHERE account_id = $1 AND key_id = $2 AND expires_at > $3 AND created_at >= $6 AND created_at < $7),
		(SELECT coalesce(sum(charge), 0)::bigint FROM records WHERE account_id = $1 AND created_at >= $4 AND created_at < $5),
		(SELECT coalesce(sum(amount), 0)::bigint FROM holds WHERE account_id = $1 AND expires_at > $3 AND created_at >= $4 AND created_at < $5),
		(SELECT coalesce(sum(charge), 0)::bigint FROM records WHERE account_id = $1 AND created_at >= $6 AND created_at < $7),
		(SELECT coalesce(sum(amount), 0)::bigint FROM holds WHERE account_id = $1 AND expires_at > $3 AND created_at >= $6 AND created_at < $7)`,
		accountID, keyID, db.now(), ds, de, ms, me).Scan(
		&u.KeyDay.Spent, &u.KeyDay.Held, &u.KeyMonth.Spent, &u.KeyMonth.Held,
		&u.AccountDay.Spent, &u.AccountDay.Held, &u.AccountMonth.Spent, &u.AccountMonth.Held)
	if err != nil {
		return u, fmt.Errorf("budget use: %w", err)
	}
	return u, nil
}
