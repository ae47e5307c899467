package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PutState inserts or replaces a client state entry (see convstate).
func (db *DB) PutState(ctx context.Context, kind, accountID, key string, value []byte, expiresAt time.Time) error {
	if value == nil {
		value = []byte{}
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO client_state (kind, account_id, key, value, expires_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (kind, account_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
		kind, accountID, key, value, micros(expiresAt)); err != nil {
		return fmt.Errorf("put state: %w", err)
	}
	return nil
}

// GetState returns the value of an entry not expired at now, or
// gw.ErrNotFound.
func (db *DB) GetState(ctx context.Context, kind, accountID, key string, now time.Time) ([]byte, error) {
	var v []byte
	err := db.r.QueryRowContext(ctx, `SELECT value FROM client_state WHERE kind = ? AND account_id = ? AND key = ? AND expires_at > ?`,
		kind, accountID, key, micros(now)).Scan(&v)
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
	ks, _ := json.Marshal(kinds)
	err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(length(value)), 0) FROM client_state
		WHERE account_id = ? AND expires_at > ? AND kind IN (SELECT value FROM json_each(?))`,
		accountID, micros(now), string(ks)).Scan(&entries, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("state usage: %w", err)
	}
	return entries, bytes, nil
}

// SweepState deletes the entries expired at now.
func (db *DB) SweepState(ctx context.Context, now time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM client_state WHERE expires_at <= ?`, micros(now))
	if err != nil {
		return 0, fmt.Errorf("sweep state: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
