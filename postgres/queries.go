package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// pgRunner is what a pool and a transaction both do.
type pgRunner interface {
	QueryRow(ctx context.Context, q string, args ...any) pgx.Row
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error)
}

// pgConn runs the shared statements on the pool or, inside Tx, on a
// transaction (pool is then nil).
type pgConn struct {
	run  pgRunner
	pool *pgxpool.Pool
}

func newConn(pool *pgxpool.Pool) pgConn { return pgConn{pool, pool} }

func (c pgConn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return c.run.QueryRow(ctx, q, args...)
}

func (c pgConn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	return c.run.Query(ctx, q, args...)
}

func (c pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.run.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (c pgConn) Tx(ctx context.Context, fn func(sqlstore.Conn) error) error {
	if c.pool == nil {
		return fn(c)
	}
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return fn(pgConn{run: tx}) })
}
