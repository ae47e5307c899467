package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The admin API's reads and writes beyond gw.Store.

// Accounts returns every account, by name.
func (db *DB) Accounts(ctx context.Context) ([]gw.Account, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, created_at FROM accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	defer rows.Close()
	var out []gw.Account
	for rows.Next() {
		var a gw.Account
		var created int64
		if err := rows.Scan(&a.ID, &a.Name, &created); err != nil {
			return nil, fmt.Errorf("accounts: %w", err)
		}
		a.CreatedAt = fromMicros(created)
		out = append(out, a)
	}
	return out, rows.Err()
}

// AccountByID returns the account; an unknown id is ErrNotFound.
func (db *DB) AccountByID(ctx context.Context, id string) (*gw.Account, error) {
	a, err := scanAccount(db.r.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("account %q: %w", id, err)
	}
	return a, nil
}

// EndKeyAt schedules the key's end: it stops working at at (now or later),
// unless it already ends earlier. An unknown key is ErrNotFound.
func (db *DB) EndKeyAt(ctx context.Context, id string, at time.Time) error {
	res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET revoked_at = min(coalesce(revoked_at, ?1), ?1) WHERE id = ?2`, micros(at), id)
	if err != nil {
		return fmt.Errorf("end key: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("end key: %w", err)
	} else if n == 0 {
		return fmt.Errorf("end key %q: %w", id, gw.ErrNotFound)
	}
	return nil
}

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
		prev, err := scanLedger(tx.QueryRowContext(ctx, `SELECT `+ledgerColumns+` FROM ledger WHERE account_id = ? AND reference = ?`, accountID, reference))
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

const ledgerColumns = `id, account_id, amount, request_id, reference, note, created_at`

func scanLedger(row interface{ Scan(...any) error }) (gw.LedgerEntry, error) {
	var e gw.LedgerEntry
	var created int64
	err := row.Scan(&e.ID, &e.AccountID, &e.Amount, &e.RequestID, &e.Reference, &e.Note, &created)
	e.CreatedAt = fromMicros(created)
	return e, err
}

// Ledger returns the account's entries newest first, those with an id
// below before (0: from the newest), at most limit.
func (db *DB) Ledger(ctx context.Context, accountID string, before int64, limit int) ([]gw.LedgerEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+ledgerColumns+` FROM ledger WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
		accountID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []gw.LedgerEntry
	for rows.Next() {
		e, err := scanLedger(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// KeyUsage returns each used key's request count, spend and last use.
func (db *DB) KeyUsage(ctx context.Context) (map[string]gw.KeyUsage, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT key_id, count(*), coalesce(sum(charge), 0), max(created_at) FROM records GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	defer rows.Close()
	out := map[string]gw.KeyUsage{}
	for rows.Next() {
		var id string
		var u gw.KeyUsage
		var last int64
		if err := rows.Scan(&id, &u.Requests, &u.Spend, &last); err != nil {
			return nil, fmt.Errorf("key usage: %w", err)
		}
		u.LastUsed = fromMicros(last)
		out[id] = u
	}
	return out, rows.Err()
}

// SetKeyModels replaces the key's model allow list (empty: every model).
// An unknown key is ErrNotFound.
func (db *DB) SetKeyModels(ctx context.Context, id string, models []string) error {
	res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET models = ? WHERE id = ?`, gw.JoinModels(models), id)
	if err != nil {
		return fmt.Errorf("set key models: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set key models: %w", err)
	} else if n == 0 {
		return fmt.Errorf("set key models %q: %w", id, gw.ErrNotFound)
	}
	return nil
}

// KeyGeneration is a counter that every change to a key or a guard
// policy bumps (migration 0011's triggers): a cache of keys polls it to
// learn that it is stale.
func (db *DB) KeyGeneration(ctx context.Context) (int64, error) {
	var gen int64
	if err := db.r.QueryRowContext(ctx, `SELECT gen FROM key_generation WHERE id = 1`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("key generation: %w", err)
	}
	return gen, nil
}
