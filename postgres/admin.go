package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
)

// The admin API's reads and writes beyond gw.Store.

// Accounts returns every account, by name.
func (db *DB) Accounts(ctx context.Context) ([]gw.Account, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, created_at FROM accounts ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gw.Account, error) {
		var a gw.Account
		err := row.Scan(&a.ID, &a.Name, &a.CreatedAt)
		a.CreatedAt = a.CreatedAt.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	return out, nil
}

// AccountByID returns the account; an unknown id is ErrNotFound.
func (db *DB) AccountByID(ctx context.Context, id string) (*gw.Account, error) {
	var a gw.Account
	if err := db.pool.QueryRow(ctx, `SELECT id, name, created_at FROM accounts WHERE id = $1`, id).Scan(&a.ID, &a.Name, &a.CreatedAt); err != nil {
		return nil, fmt.Errorf("account %q: %w", id, notFound(err))
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return &a, nil
}

// EndKeyAt schedules the key's end: it stops working at at (now or later),
// unless it already ends earlier. An unknown key is ErrNotFound.
func (db *DB) EndKeyAt(ctx context.Context, id string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = least(coalesce(revoked_at, $2), $2) WHERE id = $1`, id, at)
	if err != nil {
		return fmt.Errorf("end key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("end key %q: %w", id, gw.ErrNotFound)
	}
	return nil
}

const ledgerColumns = `id, account_id, amount, request_id, reference, note, created_at`

func scanLedger(row pgx.Row) (gw.LedgerEntry, error) {
	var e gw.LedgerEntry
	var amount int64
	err := row.Scan(&e.ID, &e.AccountID, &amount, &e.RequestID, &e.Reference, &e.Note, &e.CreatedAt)
	e.Amount, e.CreatedAt = gw.Money(amount), e.CreatedAt.UTC()
	return e, err
}

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
	e, err = scanLedger(tx.QueryRow(ctx, `INSERT INTO ledger (account_id, amount, reference, note, created_at)
		SELECT id, $2::bigint, $3::text, $4::text, $5::timestamptz FROM accounts WHERE id = $1
		ON CONFLICT (account_id, reference) WHERE reference <> '' DO NOTHING
		RETURNING `+ledgerColumns, accountID, int64(amount), reference, note, now))
	if errors.Is(err, pgx.ErrNoRows) {
		if reference == "" {
			return e, false, fmt.Errorf("top up: account %q: %w", accountID, gw.ErrNotFound)
		}
		prev, err := scanLedger(tx.QueryRow(ctx, `SELECT `+ledgerColumns+` FROM ledger WHERE account_id = $1 AND reference = $2`, accountID, reference))
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

// Ledger returns the account's entries newest first, those with an id
// below before (0: from the newest), at most limit.
func (db *DB) Ledger(ctx context.Context, accountID string, before int64, limit int) ([]gw.LedgerEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := db.pool.Query(ctx, `SELECT `+ledgerColumns+` FROM ledger WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
		accountID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gw.LedgerEntry, error) { return scanLedger(row) })
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return out, nil
}

// KeyUsage returns each used key's request count, spend and last use.
func (db *DB) KeyUsage(ctx context.Context) (map[string]gw.KeyUsage, error) {
	rows, err := db.pool.Query(ctx, `SELECT key_id, count(*), coalesce(sum(charge), 0)::bigint, max(created_at) FROM records GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	defer rows.Close()
	out := map[string]gw.KeyUsage{}
	for rows.Next() {
		var id string
		var u gw.KeyUsage
		var spend int64
		if err := rows.Scan(&id, &u.Requests, &spend, &u.LastUsed); err != nil {
			return nil, fmt.Errorf("key usage: %w", err)
		}
		u.Spend, u.LastUsed = gw.Money(spend), u.LastUsed.UTC()
		out[id] = u
	}
	return out, rows.Err()
}

// SetKeyModels replaces the key's model allow list (empty: every model).
// An unknown key is ErrNotFound.
func (db *DB) SetKeyModels(ctx context.Context, id string, models []string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET models = $2 WHERE id = $1`, id, gw.JoinModels(models))
	if err != nil {
		return fmt.Errorf("set key models: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set key models %q: %w", id, gw.ErrNotFound)
	}
	return nil
}

// KeyGeneration is a counter that every change to a key or a guard
// policy bumps (migration 0011's triggers): a cache of keys polls it to
// learn that it is stale.
func (db *DB) KeyGeneration(ctx context.Context) (int64, error) {
	var gen int64
	if err := db.pool.QueryRow(ctx, `SELECT gen FROM key_generation WHERE id = 1`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("key generation: %w", err)
	}
	return gen, nil
}
