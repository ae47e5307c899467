package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
)

// lapsedHolds reads the holds of the locked accounts ids that
// ExpireHolds is about to delete at now.
func lapsedHolds(ctx context.Context, tx pgx.Tx, now time.Time, ids []string) ([]sqlstore.LapsedHold, error) {
	rows, err := tx.Query(ctx, `SELECT id, account_id, key_id, amount, created_at, vendor, model FROM holds WHERE expires_at <= $1 AND account_id = ANY($2::text[])`, now, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanLapsed)
}

// scanLapsed reads a hold's id, account_id, key_id, amount, created_at,
// vendor and model.
func scanLapsed(r pgx.CollectableRow) (sqlstore.LapsedHold, error) {
	var h sqlstore.LapsedHold
	var amount int64
	err := r.Scan(&h.ID, &h.AccountID, &h.KeyID, &amount, &h.CreatedAt, &h.Vendor, &h.Model)
	h.Amount, h.CreatedAt = gw.Money(amount), h.CreatedAt.UTC()
	return h, err
}

// logCut records each lapsed hold's request as cut by a crash (best
// effort: the holds are already released).
func (db *DB) logCut(ctx context.Context, lapsed []sqlstore.LapsedHold) {
	for _, h := range lapsed {
		_ = db.Log(ctx, sqlstore.CutRecord(h))
	}
}
