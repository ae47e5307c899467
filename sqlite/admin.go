package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/sqlstore"
)

// The admin API's reads and writes beyond gw.Store.

// TopUpRef credits amount with the operator's reference and note. A
// reference already used on this account credits nothing and returns
// the first entry with duplicate true, so a retried top-up is counted
// once.
func (db *DB) TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (e gw.LedgerEntry, duplicate bool, err error) {
	if amount <= 0 {
		return e, false, fmt.Errorf("top up: amount %d must be positive", amount)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	defer tx.Rollback()
	if reference != "" {
		prev, err := sqlstore.ScanLedger(tx.QueryRowContext(ctx, `SELECT `+sqlstore.LedgerColumns+` FROM ledger WHERE account_id = ? AND reference = ?`, accountID, reference))
		if err == nil {
			return prev, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return e, false, fmt.Errorf("top up: %w", err)
		}
	}
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET top_ups = top_ups + ?1, balance = balance + ?1 WHERE id = ?2`, int64(amount), accountID)
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	} else if n == 0 {
		return e, false, fmt.Errorf("top up: account %q: %w", accountID, gw.ErrNotFound)
	}
	now := db.now().Truncate(time.Microsecond)
	res, err = tx.ExecContext(ctx, `INSERT INTO ledger (account_id, amount, reference, note, created_at) VALUES (?, ?, ?, ?, ?)`,
		accountID, int64(amount), reference, note, micros(now))
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return e, false, fmt.Errorf("top up: %w", err)
	}
	db.toppedUp(accountID)
	return gw.LedgerEntry{ID: id, AccountID: accountID, Amount: amount, Reference: reference, Note: note, CreatedAt: now}, false, nil
}
