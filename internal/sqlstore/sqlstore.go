// Package sqlstore holds the SQL that the sqlite and postgres stores
// share: the statements that read and write the same way on both engines,
// written once, so that a fix lands in one place. Placeholders are $N on
// both (SQLite binds $N to the Nth argument); what the engines spell
// differently is a Dialect. Hold placement, settlement, records and
// migrations stay in each store: they are where the engines differ.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Row is one result row: *sql.Row or pgx.Row.
type Row interface{ Scan(dest ...any) error }

// Rows is a result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Conn runs statements: a database/sql pool (see SQL) or a pgx pool.
type Conn interface {
	QueryRow(ctx context.Context, q string, args ...any) Row
	Query(ctx context.Context, q string, args ...any) (Rows, error)
	// Exec returns the number of rows the statement changed.
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	// Tx runs fn in one transaction on the writing side, committing when
	// fn returns nil and rolling back otherwise. Inside a transaction it
	// runs fn in that same transaction.
	Tx(ctx context.Context, fn func(tx Conn) error) error
}

// Dialect is what the two engines spell differently.
type Dialect struct {
	// Time is a time as the store keeps it: INTEGER microseconds in
	// SQLite, timestamptz in PostgreSQL.
	Time func(time.Time) any
	// Least names the function returning the smaller of its arguments
	// ("min" in SQLite, "least" in PostgreSQL).
	Least string
	// Greatest names the function returning the larger of its arguments
	// ("max" in SQLite, "greatest" in PostgreSQL).
	Greatest string
	// NotFound maps the driver's error for a missing row (and whatever
	// else the store counts as one) to gw.ErrNotFound.
	NotFound func(error) error
}

// Queries runs the shared statements: reads on r, writes on w (SQLite
// keeps a read pool beside its single writer; PostgreSQL's pool is both).
type Queries struct {
	r, w Conn
	d    Dialect
	now  func() time.Time
}

// New returns the shared statements over r and w.
func New(r, w Conn, d Dialect, now func() time.Time) Queries {
	return Queries{r: r, w: w, d: d, now: now}
}

// When is a scan destination for a time kept either way (microseconds or
// a time), read as UTC. A NULL leaves the time as it was.
func When(t *time.Time) sql.Scanner { return when{t} }

type when struct{ t *time.Time }

// WhenSet is When for a time that may be NULL: a NULL sets *t to nil.
func WhenSet(t **time.Time) sql.Scanner { return whenSet{t} }

type whenSet struct{ t **time.Time }

func (w whenSet) Scan(src any) error {
	if src == nil {
		*w.t = nil
		return nil
	}
	var v time.Time
	if err := When(&v).Scan(src); err != nil {
		return err
	}
	*w.t = &v
	return nil
}

func (w when) Scan(src any) error {
	switch v := src.(type) {
	case nil:
	case int64:
		*w.t = time.UnixMicro(v).UTC()
	case time.Time:
		*w.t = v.UTC()
	default:
		return fmt.Errorf("sqlstore: cannot read %T as a time", src)
	}
	return nil
}

// Limit returns the page size for a requested limit: 100 by default, at
// most 1000.
func Limit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}

// SQL is a Conn on a database/sql pool.
func SQL(db *sql.DB) Conn { return sqlConn{db, db} }

// sqlRunner is what *sql.DB and *sql.Tx both do.
type sqlRunner interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// sqlConn runs on db, the pool or a transaction; pool is nil inside a
// transaction.
type sqlConn struct {
	db   sqlRunner
	pool *sql.DB
}

func (c sqlConn) Tx(ctx context.Context, fn func(Conn) error) error {
	if c.pool == nil {
		return fn(c)
	}
	tx, err := c.pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqlConn{db: tx}); err != nil {
		return err
	}
	return tx.Commit()
}

func (c sqlConn) QueryRow(ctx context.Context, q string, args ...any) Row {
	return c.db.QueryRowContext(ctx, q, args...)
}

func (c sqlConn) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (c sqlConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := c.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// collect scans every row of rows with scan.
func collect[T any](rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// changed turns an update of no row into gw.ErrNotFound under what and id.
func changed(n int64, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, errNotFound)
	}
	return nil
}

// MigrationVersion reads a migration's file name ("migrations/0007_x.sql"):
// its base name and the version its number prefix gives.
func MigrationVersion(name string) (base string, version int, err error) {
	base = strings.TrimPrefix(name, "migrations/")
	version, err = strconv.Atoi(strings.SplitN(base, "_", 2)[0])
	if err != nil {
		return base, 0, fmt.Errorf("migrate: bad migration name %q", base)
	}
	return base, version, nil
}
