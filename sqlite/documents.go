package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Document returns the document kept under name (ratecard.ListStore);
// ok is false when there is none.
func (db *DB) Document(ctx context.Context, name string) (body []byte, at time.Time, ok bool, err error) {
	var us int64
	err = db.r.QueryRowContext(ctx, `SELECT body, fetched_at FROM documents WHERE name = ?`, name).Scan(&body, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("document %s: %w", name, err)
	}
	return body, time.UnixMicro(us).UTC(), true, nil
}

// SetDocument keeps body under name, read at at, replacing any earlier
// one.
func (db *DB) SetDocument(ctx context.Context, name string, body []byte, at time.Time) error {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO documents (name, body, fetched_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at, updated_at = excluded.updated_at`,
		name, body, micros(at), micros(db.now())); err != nil {
		return fmt.Errorf("set document %s: %w", name, err)
	}
	return nil
}
