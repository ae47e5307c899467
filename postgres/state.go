package postgres

import (
	"context"
	"fmt"
	"time"
)

// PutState inserts or replaces a client state entry (see convstate).
func (db *DB) PutState(ctx context.Context, kind, accountID, key string, value []byte, expiresAt time.Time) error {
	if value == nil {
		value = []byte{}
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO client_state (kind, account_id, key, value, expires_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, account_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
		kind, accountID, key, value, expiresAt); err != nil {
		return fmt.Errorf("put state: %w", err)
	}
	return nil
}

// GetState returns the value of an entry not expired at now, or
// gw.ErrNotFound.
func (db *DB) GetState(ctx context.Context, kind, accountID, key string, now time.Time) ([]byte, error) {
	var v []byte
	err := db.pool.QueryRow(ctx, `SELECT value FROM client_state WHERE kind = $1 AND account_id = $2 AND key = $3 AND expires_at > $4`,
		kind, accountID, key, now).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("get state: %w", notFound(err))
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// StateUsage returns the account's live entries and their bytes at now.
func (db *DB) StateUsage(ctx context.Context, accountID string, kinds []string, now time.Time) (entries, bytes int64, err error) {
	err = db.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(octet_length(value)), 0)::bigint FROM client_state
		WHERE account_id = $1 AND expires_at > $2 AND kind = ANY($3::text[])`,
		accountID, now, kinds).Scan(&entries, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("state usage: %w", err)
	}
	return entries, bytes, nil
}

// SweepState deletes the entries expired at now.
func (db *DB) SweepState(ctx context.Context, now time.Time) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM client_state WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("sweep state: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
