package sqlite

import (
	"context"
	"fmt"
	"time"
)

// SweepDocuments deletes the documents whose name starts with prefix
// and for which drop (given the name and the time the document was
// read) is true; it returns how many it deleted.
func (db *DB) SweepDocuments(ctx context.Context, prefix string, drop func(name string, at time.Time) bool) (int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT name, fetched_at FROM documents WHERE substr(name, 1, ?) = ?`, len(prefix), prefix)
	if err != nil {
		return 0, fmt.Errorf("list documents %s: %w", prefix, err)
	}
	var gone []string
	for rows.Next() {
		var name string
		var us int64
		if err := rows.Scan(&name, &us); err != nil {
			rows.Close()
			return 0, fmt.Errorf("list documents %s: %w", prefix, err)
		}
		if drop(name, time.UnixMicro(us).UTC()) {
			gone = append(gone, name)
		}
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("list documents %s: %w", prefix, err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("list documents %s: %w", prefix, err)
	}
	n := 0
	for _, name := range gone {
		res, err := db.w.ExecContext(ctx, `DELETE FROM documents WHERE name = ?`, name)
		if err != nil {
			return n, fmt.Errorf("delete document %s: %w", name, err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	return n, nil
}
