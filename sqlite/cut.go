package sqlite

import (
	"context"
	"database/sql"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
)

// lapsedHolds reads the holds ExpireHolds is about to delete at now.
func lapsedHolds(ctx context.Context, tx *sql.Tx, now interface{ UnixMicro() int64 }) ([]sqlstore.LapsedHold, error) {
	return holdsWhere(ctx, tx, `expires_at <= ?`, now.UnixMicro())
}

// holdsWhere reads the holds the condition where selects.
func holdsWhere(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]sqlstore.LapsedHold, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, account_id, key_id, amount, created_at, vendor, model FROM holds WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqlstore.LapsedHold
	for rows.Next() {
		var h sqlstore.LapsedHold
		var amount, created int64
		if err := rows.Scan(&h.ID, &h.AccountID, &h.KeyID, &amount, &created, &h.Vendor, &h.Model); err != nil {
			return nil, err
		}
		h.Amount, h.CreatedAt = gw.Money(amount), fromMicros(created)
		out = append(out, h)
	}
	return out, rows.Err()
}

// logCut records each lapsed hold's request as cut by a crash (best
// effort: the holds are already released).
func (db *DB) logCut(ctx context.Context, lapsed []sqlstore.LapsedHold) {
	for _, h := range lapsed {
		_ = db.Log(ctx, sqlstore.CutRecord(h))
	}
}
