package sqlite

import (
	"context"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// SetIncarnation stamps the holds this store places from now on with
// inc (see gw.Incarnations).
func (db *DB) SetIncarnation(inc gw.Incarnation) { db.inc.Store(&inc) }

// incarnation is the store's incarnation (zero until SetIncarnation).
func (db *DB) incarnation() gw.Incarnation {
	if p := db.inc.Load(); p != nil {
		return *p
	}
	return gw.Incarnation{}
}

// ReleaseEarlierIncarnations deletes the holds of inc.Instance's other
// incarnations, in one transaction with their accounts' held totals, and
// records each request as cut by a crash. An exclusive store's holds
// live in its own memory and die with its process: it has none to
// release.
func (db *DB) ReleaseEarlierIncarnations(ctx context.Context, inc gw.Incarnation) (int, error) {
	if db.book != nil || inc.Instance == "" {
		return 0, nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("release earlier incarnations: %w", err)
	}
	defer tx.Rollback()
	const which = `instance = ?1 AND incarnation <> ?2`
	lapsed, err := holdsWhere(ctx, tx, which, inc.Instance, inc.ID)
	if err != nil || len(lapsed) == 0 {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts
		SET held = held - (SELECT coalesce(sum(amount), 0) FROM holds WHERE account_id = accounts.id AND `+which+`)
		WHERE id IN (SELECT account_id FROM holds WHERE `+which+`)`, inc.Instance, inc.ID); err != nil {
		return 0, fmt.Errorf("release earlier incarnations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM holds WHERE `+which, inc.Instance, inc.ID); err != nil {
		return 0, fmt.Errorf("release earlier incarnations: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("release earlier incarnations: %w", err)
	}
	for i := range lapsed {
		lapsed[i].Restarted = true
	}
	db.logCut(ctx, lapsed)
	return len(lapsed), nil
}
