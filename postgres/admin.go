package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
)

// The admin API's reads and writes beyond gw.Store.

// TopUpRef credits amount with the operator's reference and note. A
// reference already used on this account credits nothing and returns
// the first entry with duplicate true, so a retried top-up is counted
// once (the unique index decides between concurrent retries).
func (db *DB) TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (e gw.LedgerEntry, duplicate bool, err error) {
	if amount <= 0 {
		return e, false, fmt.Errorf("top up: amount %d must be positive", amount)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	defer tx.Rollback(ctx)
	now := db.now().Truncate(time.Microsecond)
	e, err = sqlstore.ScanLedger(tx.QueryRow(ctx, `INSERT INTO ledger (account_id, amount, reference, note, created_at)
		SELECT id, $2::bigint, $3::text, $4::text, $5::timestamptz FROM accounts WHERE id = $1
		ON CONFLICT (account_id, reference) WHERE reference <> '' DO NOTHING
		RETURNING `+sqlstore.LedgerColumns, accountID, int64(amount), reference, note, now))
	if errors.Is(err, pgx.ErrNoRows) {
		if reference == "" {
			return e, false, fmt.Errorf("top up: account %q: %w", accountID, gw.ErrNotFound)
		}
		prev, err := sqlstore.ScanLedger(tx.QueryRow(ctx, `SELECT `+sqlstore.LedgerColumns+` FROM ledger WHERE account_id = $1 AND reference = $2`, accountID, reference))
		if err != nil {
			return e, false, fmt.Errorf("top up: account %q: %w", accountID, notFound(err))
		}
		return prev, true, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET top_ups = top_ups + $2, balance = balance + $2 WHERE id = $1`, accountID, int64(amount)); err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	return e, false, nil
}
