package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Document returns the document kept under name (ratecard.ListStore);
// ok is false when there is none.
func (db *DB) Document(ctx context.Context, name string) (body []byte, at time.Time, ok bool, err error) {
	err = db.pool.QueryRow(ctx, `SELECT body, fetched_at FROM documents WHERE name = $1`, name).Scan(&body, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("document %s: %w", name, err)
	}
	return body, at.UTC(), true, nil
}

// SetDocument keeps body under name, read at at, replacing any earlier
// one.
func (db *DB) SetDocument(ctx context.Context, name string, body []byte, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO documents (name, body, fetched_at, updated_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at, updated_at = now()`,
		name, body, at); err != nil {
		return fmt.Errorf("set document %s: %w", name, err)
	}
	return nil
}
