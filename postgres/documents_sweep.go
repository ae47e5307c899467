package postgres

import (
	"context"
	"fmt"
	"time"
)

// SweepDocuments deletes the documents whose name starts with prefix
// and for which drop (given the name and the time the document was
// read) is true; it returns how many it deleted.
func (db *DB) SweepDocuments(ctx context.Context, prefix string, drop func(name string, at time.Time) bool) (int, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, fetched_at FROM documents WHERE left(name, $1) = $2`, len([]rune(prefix)), prefix)
	if err != nil {
		return 0, fmt.Errorf("list documents %s: %w", prefix, err)
	}
	var gone []string
	for rows.Next() {
		var name string
		var at time.Time
		if err := rows.Scan(&name, &at); err != nil {
			rows.Close()
			return 0, fmt.Errorf("list documents %s: %w", prefix, err)
		}
		if drop(name, at.UTC()) {
			gone = append(gone, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("list documents %s: %w", prefix, err)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM documents WHERE name = ANY($1)`, gone)
	if err != nil {
		return 0, fmt.Errorf("delete documents %s: %w", prefix, err)
	}
	return int(tag.RowsAffected()), nil
}
