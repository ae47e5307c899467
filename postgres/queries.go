package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gwlabs/gateway/internal/sqlstore"
)

// queries names the shared statements embedded in DB.
type queries = sqlstore.Queries

// dialect is how PostgreSQL spells what the shared statements leave open:
// times are timestamptz.
var dialect = sqlstore.Dialect{
	Time:     func(t time.Time) any { return t },
	Least:    "least",
	Greatest: "greatest",
	NotFound: notFound,
}

// pgConn runs the shared statements on the pool.
type pgConn struct{ pool *pgxpool.Pool }

func (c pgConn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return c.pool.QueryRow(ctx, q, args...)
}

func (c pgConn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	return c.pool.Query(ctx, q, args...)
}

func (c pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.pool.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}
