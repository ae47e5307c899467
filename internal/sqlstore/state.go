package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PutState inserts or replaces a client state entry (see convstate).
func (q Queries) PutState(ctx context.Context, kind, accountID, key string, value []byte, expiresAt time.Time) error {
	if value == nil {
		value = []byte{}
	}
	if _, err := q.w.Exec(ctx, `INSERT INTO client_state (kind, account_id, key, value, expires_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, account_id, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
		kind, accountID, key, value, q.d.Time(expiresAt)); err != nil {
		return fmt.Errorf("put state: %w", err)
	}
	return nil
}

// GetState returns the value of an entry not expired at now, or
// gw.ErrNotFound.
func (q Queries) GetState(ctx context.Context, kind, accountID, key string, now time.Time) ([]byte, error) {
	var v []byte
	err := q.r.QueryRow(ctx, `SELECT value FROM client_state WHERE kind = $1 AND account_id = $2 AND key = $3 AND expires_at > $4`,
		kind, accountID, key, q.d.Time(now)).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("get state: %w", q.d.NotFound(err))
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// StateUsage returns the account's live entries of the given kinds and
// their bytes at now.
func (q Queries) StateUsage(ctx context.Context, accountID string, kinds []string, now time.Time) (entries, bytes int64, err error) {
	if len(kinds) == 0 {
		return 0, 0, nil
	}
	args := []any{accountID, q.d.Time(now)}
	marks := make([]string, len(kinds))
	for i, k := range kinds {
		args, marks[i] = append(args, k), "$"+strconv.Itoa(len(args)+1)
	}
	err = q.r.QueryRow(ctx, `SELECT count(*), CAST(coalesce(sum(octet_length(value)), 0) AS BIGINT) FROM client_state
		WHERE account_id = $1 AND expires_at > $2 AND kind IN (`+strings.Join(marks, ", ")+`)`, args...).Scan(&entries, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("state usage: %w", err)
	}
	return entries, bytes, nil
}

// SweepState deletes the entries expired at now.
func (q Queries) SweepState(ctx context.Context, now time.Time) (int, error) {
	n, err := q.w.Exec(ctx, `DELETE FROM client_state WHERE expires_at <= $1`, q.d.Time(now))
	if err != nil {
		return 0, fmt.Errorf("sweep state: %w", err)
	}
	return int(n), nil
}
