package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// refusedRecord is the condition of a record of a refused or blocked
// request: an error status with neither charge nor vendor cost (records
// that moved money are kept with the ledger).
const refusedRecord = `status >= 400 AND charge = 0 AND cost = 0`

// unreviewed keeps the incidents an operator reviewed.
const unreviewed = `id NOT IN (SELECT incident_id FROM incident_reviews)`

// SweepRefused deletes the incidents (with their kept texts) and the
// records of refused requests created before before (zero: none by
// age), and, per account, all but the newest perAccount of each
// (0: no bound). Reviewed incidents are kept. It returns the rows
// deleted.
func (q Queries) SweepRefused(ctx context.Context, before time.Time, perAccount int) (int, error) {
	total := 0
	del := func(incCond, recCond string, args ...any) error {
		if _, err := q.w.Exec(ctx, `DELETE FROM incident_texts WHERE incident_id IN (SELECT id FROM incidents WHERE `+incCond+` AND `+unreviewed+`)`, args...); err != nil {
			return err
		}
		n, err := q.w.Exec(ctx, `DELETE FROM incidents WHERE `+incCond+` AND `+unreviewed, args...)
		if err != nil {
			return err
		}
		total += int(n)
		if recCond == "" {
			return nil
		}
		n, err = q.w.Exec(ctx, `DELETE FROM records WHERE `+recCond+` AND `+refusedRecord, args...)
		total += int(n)
		return err
	}
	if !before.IsZero() {
		if err := del(`created_at < $1`, `created_at < $1`, q.d.Time(before)); err != nil {
			return total, fmt.Errorf("sweep refused: %w", err)
		}
	}
	if perAccount <= 0 {
		return total, nil
	}
	// Incidents past the bound, account by account: the newest
	// perAccount stay.
	over := func(table, cond string) ([]string, error) {
		rows, err := q.r.Query(ctx, `SELECT account_id FROM `+table+` WHERE `+cond+` GROUP BY account_id HAVING COUNT(*) > $1`, perAccount)
		return collect(rows, err, func(r Row) (string, error) {
			var s string
			return s, r.Scan(&s)
		})
	}
	accts, err := over("incidents", "1 = 1")
	if err != nil {
		return total, fmt.Errorf("sweep refused: %w", err)
	}
	for _, a := range accts {
		var at time.Time
		var id string
		if err := q.r.QueryRow(ctx, `SELECT created_at, id FROM incidents WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET $2`, a, perAccount).Scan(When(&at), &id); err != nil {
			continue // fewer by now
		}
		if err := del(`account_id = $1 AND (created_at < $2 OR created_at = $2 AND id <= $3)`, "", a, q.d.Time(at), id); err != nil {
			return total, fmt.Errorf("sweep refused: %w", err)
		}
	}
	accts, err = over("records", refusedRecord)
	if err != nil {
		return total, fmt.Errorf("sweep refused: %w", err)
	}
	for _, a := range accts {
		var at time.Time
		var id string
		if err := q.r.QueryRow(ctx, `SELECT created_at, request_id FROM records WHERE account_id = $1 AND `+refusedRecord+` ORDER BY created_at DESC, request_id DESC LIMIT 1 OFFSET $2`, a, perAccount).Scan(When(&at), &id); err != nil {
			continue
		}
		n, err := q.w.Exec(ctx, `DELETE FROM records WHERE account_id = $1 AND (created_at < $2 OR created_at = $2 AND request_id <= $3) AND `+refusedRecord, a, q.d.Time(at), id)
		if err != nil {
			return total, fmt.Errorf("sweep refused: %w", err)
		}
		total += int(n)
	}
	return total, nil
}
