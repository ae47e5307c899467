package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
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
// incarnations, taking them off their accounts' held totals, and records
// each request as cut by a crash. Like ExpireHolds it locks the accounts
// first, in id order, so that it cannot deadlock with a group commit
// batch.
func (db *DB) ReleaseEarlierIncarnations(ctx context.Context, inc gw.Incarnation) (int, error) {
	if inc.Instance == "" {
		return 0, nil
	}
	var lapsed []sqlstore.LapsedHold
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM accounts
			WHERE id IN (SELECT account_id FROM holds WHERE instance = $1 AND incarnation <> $2)
			ORDER BY id FOR NO KEY UPDATE`, inc.Instance, inc.ID)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `WITH gone AS (
				DELETE FROM holds WHERE instance = $1 AND incarnation <> $2 AND account_id = ANY($3::text[])
				RETURNING id, account_id, key_id, amount, created_at, vendor, model),
			upd AS (UPDATE accounts SET held = held - g.s
				FROM (SELECT account_id, sum(amount)::bigint AS s FROM gone GROUP BY account_id) g
				WHERE accounts.id = g.account_id)
			SELECT id, account_id, key_id, amount, created_at, vendor, model FROM gone`, inc.Instance, inc.ID, ids)
		if err != nil {
			return err
		}
		lapsed, err = pgx.CollectRows(rows, scanLapsed)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("release earlier incarnations: %w", err)
	}
	for i := range lapsed {
		lapsed[i].Restarted = true
	}
	db.logCut(ctx, lapsed)
	return len(lapsed), nil
}
