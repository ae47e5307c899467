// Package postgres implements gw.Store on PostgreSQL through pgx, for a
// fleet of gateway instances sharing one database. The sqlite package is
// the single-instance alternative; both pass the storetest suite.
//
// # Design
//
// Several instances may start at once: migrations (embedded SQL, recorded
// in schema_migrations) run in one transaction under a transaction-scoped
// advisory lock, so exactly one instance applies each.
//
// An account's row is the lock that serialises its money. PlaceHold locks
// the row, then sums the account's live holds and inserts the new one only
// if the balance covers them all; the sum runs as a statement of its own
// after the lock is granted, so under READ COMMITTED it sees every hold
// committed by whoever held the lock before. Holds therefore never
// over-commit the balance, across any number of connections and
// instances.
//
// PlaceHold, Settle, Release and Log go through a group committer: one
// goroutine per store collects the calls that arrive while the previous
// transaction commits and sends them as one pipelined batch in one
// transaction, each caller waiting for its own result. The batch is the
// transaction: sent without BEGIN and COMMIT, its statements run as the
// implicit transaction of its one Sync, so a group commit costs one round
// trip. The batch first
// locks every account it touches in id order, so batches of different
// instances cannot deadlock on accounts. A call that fails cleanly (hold
// unknown, balance too low) changes nothing and leaves the others alone;
// any other failure rolls the batch back and its calls are retried one
// transaction each. The account row also keeps the running total of its
// open holds (held), so a new hold's check reads one row plus the short
// range of expired holds not yet swept, never every open hold.
//
// # Durability
//
// A call returns after its transaction committed on the server. The group
// commits (holds, settles, releases, logs) run with
// synchronous_commit=off: the commit is in the server's memory and its
// WAL buffers, so it survives a crash of the gateway (kill -9) and of the
// server process; only a crash of the database machine (or the server's
// operating system) can lose the commits of the last moments, at most
// three times wal_writer_delay (200 ms by default, so 600 ms). Top-ups,
// keys and the other writes keep the server's setting (on by default:
// flushed before the call returns). Options.SyncEachCommit makes the
// group commits wait for the flush too.
//
// # Money
//
// Amounts are bigint micro-cents. The accounts table keeps top_ups,
// charged and balance columns (balance = top_ups - charged), updated in the
// same transaction as the ledger row that explains the change; VerifyLedger
// recomputes them from the ledger. A settle never takes the balance below
// zero: it debits at most its hold plus the account's available balance
// at that moment (the balance less the other live holds), and records the
// rest as the operator's loss (Record.Loss, noted "operator_loss"). A
// hold whose request is still running is kept alive by RenewHold.
//
// # Failures
//
// When a commit's outcome is unknown (the connection broke after COMMIT
// was sent), retrying is still safe: a settled hold is gone, so a second
// Settle is ErrNotFound, and a record's request id is unique. Money is
// never counted twice.
//
// # Tests
//
// The tests need a server: set GATEWAY_TEST_POSTGRES_URL (for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); without it they
// skip. Each store a test opens lives in a fresh schema (Options.Schema),
// dropped when the test ends.
package postgres

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/gwlabs/gateway/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// commitTimeout bounds one group commit transaction.
const commitTimeout = 30 * time.Second

// ErrClosed is returned by calls made after Close.
var ErrClosed = groupcommit.ErrClosed

// DefaultMaxBatch is the default of Options.MaxBatch.
const DefaultMaxBatch = 256

// Options configures a store. The zero value is ready to use.
type Options struct {
	// Schema, when set, is created if missing and becomes every
	// connection's search_path, so that the store's tables live there.
	// Tests use it to isolate runs sharing one server.
	Schema string
	// MaxConns overrides the pool size (pool_max_conns in the URL, or
	// pgxpool's default).
	MaxConns int32
	// MaxBatch caps how many calls one group commit applies. Zero means
	// DefaultMaxBatch; 1 disables batching.
	MaxBatch int
	// Now is the clock, for hold expiry and default timestamps. Nil means
	// time.Now.
	Now func() time.Time
	// SyncEachCommit makes every group commit wait for the server's WAL
	// flush (synchronous_commit=on), as the settles did before; by
	// default the group commits run with synchronous_commit=off (see
	// Durability).
	SyncEachCommit bool
}

// Stats counts group commits.
type Stats = groupcommit.Stats

// DB is a gw.Store on a PostgreSQL database. It is safe for concurrent
// use.
type DB struct {
	queries // the statements both stores share

	pool     *pgxpool.Pool
	now      func() time.Time
	syncEach bool

	gc        *groupcommit.Committer
	closeOnce sync.Once
	inc       atomic.Pointer[gw.Incarnation] // stamped on the holds it places
}

// Open connects to the database at url (a postgres:// URL or key=value
// string), applies pending migrations and starts the group committer.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, opt Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if opt.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = opt.Schema
	}
	if opt.MaxConns > 0 {
		cfg.MaxConns = opt.MaxConns
	}
	maxBatch := opt.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := migrate(ctx, pool, opt.Schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	conn := newConn(pool)
	db := &DB{
		pool: pool, now: now, syncEach: opt.SyncEachCommit,
		queries: sqlstore.New(conn, conn, dialect, now),
	}
	db.gc = groupcommit.Start(maxBatch, db.apply)
	return db, nil
}

// migrate creates schema (when not empty) and applies the embedded
// migrations not yet recorded in schema_migrations, all in one transaction
// holding an advisory lock named after the schema, so that instances
// starting together apply each once.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(
		'gwlabs/gateway migrate ' || coalesce(nullif($1::text, ''), current_schema(), ''), 0))`, schema); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if schema != "" {
		// Under the lock: CREATE SCHEMA IF NOT EXISTS alone races with
		// itself.
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("migrate: create schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, name := range names {
		base, version, err := sqlstore.MigrationVersion(name)
		if err != nil {
			return err
		}
		var applied bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, version).Scan(&applied); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if applied {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		// No arguments: pgx sends the file with the simple protocol,
		// which accepts several statements.
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, base); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Close stops the group committer, after it answered every call it took,
// and closes the pool. Calls made after Close return ErrClosed. Close is
// idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.gc.Close()
		db.pool.Close()
	})
	return nil
}

// Stats returns the group commit counters.
func (db *DB) Stats() Stats {
	return db.gc.Stats()
}

// EnsureAccount returns the account with this name, creating it.
func (db *DB) EnsureAccount(ctx context.Context, name string) (*gw.Account, error) {
	if name == "" {
		return nil, errors.New("ensure account: empty name")
	}
	// Two statements: when another instance inserts the same name at
	// once, the INSERT waits for it and does nothing, and the SELECT,
	// with a snapshot taken after, sees its row.
	if _, err := db.pool.Exec(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, sqlstore.NewID("acct_"), name, db.now()); err != nil {
		return nil, fmt.Errorf("ensure account: %w", err)
	}
	a, err := db.AccountByName(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("ensure account: %w", err)
	}
	return a, nil
}

// CreateKey stores k with the SHA-256 hash of its secret. It fills in
// k.CreatedAt when zero and k.AccountName. An unknown account is
// ErrNotFound.
func (db *DB) CreateKey(ctx context.Context, k *gw.Key, hash [32]byte) error {
	if err := sqlstore.CheckKey(k, db.now); err != nil {
		return err
	}
	err := db.pool.QueryRow(ctx, `INSERT INTO api_keys (id, account_id, hash, hint, rpm, tpm, created_at, revoked_at, name, optimize_off, models, daily_budget, monthly_budget)
		SELECT $1::text, a.id, $3::bytea, $4::text, $5::bigint, $6::bigint, $7::timestamptz, $8::timestamptz, $9::text, $10::boolean, $11::text, $12::bigint, $13::bigint
		FROM accounts a WHERE a.id = $2
		RETURNING (SELECT name FROM accounts WHERE id = $2)`,
		k.ID, k.AccountID, hash[:], k.Hint, k.RPM, k.TPM, k.CreatedAt, k.RevokedAt, k.Name, k.OptimizeOff, gw.JoinModels(k.Models),
		int64(k.Budget.Daily), int64(k.Budget.Monthly)).Scan(&k.AccountName)
	if err != nil {
		return fmt.Errorf("create key: %w", notFound(err))
	}
	return nil
}

// KeyByHash returns the principal of the live key with this hash. Unknown
// and revoked keys are ErrNotFound.
func (db *DB) KeyByHash(ctx context.Context, hash [32]byte) (*gw.Principal, error) {
	var p gw.Principal
	var stored []byte
	var revoked *time.Time
	var models string
	err := db.pool.QueryRow(ctx, `SELECT k.id, k.account_id, a.name, k.rpm, k.tpm, k.hash, k.revoked_at, k.optimize_off, k.models,
		k.daily_budget, k.monthly_budget, a.daily_budget, a.monthly_budget
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`, hash[:]).
		Scan(&p.KeyID, &p.AccountID, &p.AccountName, &p.RPM, &p.TPM, &stored, &revoked, &p.OptimizeOff, &models,
			&p.KeyBudget.Daily, &p.KeyBudget.Monthly, &p.AccountBudget.Daily, &p.AccountBudget.Monthly)
	p.Models = gw.SplitModels(models)
	if err != nil {
		return nil, fmt.Errorf("key by hash: %w", notFound(err))
	}
	if subtle.ConstantTimeCompare(stored, hash[:]) != 1 || revoked != nil && !revoked.After(db.now()) {
		return nil, fmt.Errorf("key by hash: %w", gw.ErrNotFound)
	}
	if revoked != nil {
		p.EndsAt = *revoked
	}
	return &p, nil
}

// TopUp credits amount (positive) to the account and writes a ledger
// entry, in one statement. An unknown account is ErrNotFound.
func (db *DB) TopUp(ctx context.Context, accountID string, amount gw.Money, note string) error {
	if amount <= 0 {
		return fmt.Errorf("top up: amount %d must be positive", amount)
	}
	var id int64
	err := db.pool.QueryRow(ctx, `WITH a AS (
			UPDATE accounts SET top_ups = top_ups + $2, balance = balance + $2 WHERE id = $1 RETURNING id
		)
		INSERT INTO ledger (account_id, amount, note, created_at) SELECT id, $2::bigint, $3::text, $4::timestamptz FROM a RETURNING id`,
		accountID, int64(amount), note, db.now()).Scan(&id)
	if err != nil {
		return fmt.Errorf("top up %q: %w", accountID, notFound(err))
	}
	return nil
}

// PlaceHold reserves h.Amount on h.AccountID until h.ExpiresAt. It fails
// with a *gw.Error of CodeInsufficientBalance when the available balance is
// below the amount, and with ErrNotFound for an unknown account.
func (db *DB) PlaceHold(ctx context.Context, h gw.Hold) error {
	if err := sqlstore.CheckHold(&h, db.now); err != nil {
		return err
	}
	return db.gc.Submit(ctx, &groupcommit.Op{Kind: groupcommit.Hold, Hold: h}, "place hold")
}

// Settle finishes the hold: it deletes it, debits r.Charge (at most the
// hold plus the available balance; the rest is r.Loss), writes the
// ledger entry and the record, in one durable transaction, and sets
// r.Charge, r.Loss and r.Note to what it wrote. An unknown or
// already finished hold is ErrNotFound and changes nothing. A hold past
// its expiry that was not swept yet still settles. r.RequestID defaults to
// the hold id and r.AccountID, r.KeyID to the hold's.
func (db *DB) Settle(ctx context.Context, holdID string, r *gw.Record) error {
	return sqlstore.Settle(ctx, holdID, r, db.now, db.gc.Submit)
}

// Release deletes the hold without charging and, when r is not nil, writes
// r with a zero charge. An unknown or already finished hold is ErrNotFound
// and changes nothing.
func (db *DB) Release(ctx context.Context, holdID string, r *gw.Record) error {
	return sqlstore.Release(ctx, holdID, r, db.now, db.gc.Submit)
}

// Log writes a record for a request that placed no hold.
func (db *DB) Log(ctx context.Context, r *gw.Record) error {
	return sqlstore.Log(ctx, r, db.now, db.gc.Submit)
}

// ExpireHolds deletes the holds whose expiry is not after now, taking
// them off their accounts' held totals, and returns how many it deleted.
// It locks the accounts first, in id order, as a group commit batch does,
// so the two cannot deadlock; a hold a batch settled meanwhile is gone by
// the time the delete runs.
func (db *DB) ExpireHolds(ctx context.Context, now time.Time) (int, error) {
	var n int
	var lapsed []sqlstore.LapsedHold
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM accounts
			WHERE id IN (SELECT account_id FROM holds WHERE expires_at <= $1)
			ORDER BY id FOR NO KEY UPDATE`, now)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		// The accounts are locked: the holds read here are the ones
		// deleted below.
		if lapsed, err = lapsedHolds(ctx, tx, now, ids); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `WITH gone AS (
				DELETE FROM holds WHERE expires_at <= $1 AND account_id = ANY($2::text[])
				RETURNING account_id, amount),
			upd AS (UPDATE accounts SET held = held - g.s
				FROM (SELECT account_id, sum(amount)::bigint AS s FROM gone GROUP BY account_id) g
				WHERE accounts.id = g.account_id)
			SELECT count(*) FROM gone`, now, ids).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	db.logCut(ctx, lapsed)
	return n, nil
}

// recordColumns are a record's columns (see sqlstore.RecordColumns).
const recordColumns = sqlstore.RecordColumns

// recordArgs returns r's columns but the last as arguments $1 to $28, in
// recordColumns order; $21 is the charge. The last, disputed_cost, comes
// after a statement's own arguments.
func recordArgs(r *gw.Record) []any {
	u := r.Usage
	return []any{r.RequestID, r.AccountID, r.KeyID, string(r.Endpoint), r.Vendor, r.Model, r.Stream, r.Status, string(r.ErrorCode),
		u.InputTokens, u.CacheReadTokens, u.CacheWrite5mTokens, u.CacheWrite1hTokens, u.OutputTokens,
		u.ReasoningTokens, u.OptimizerTokens, u.Reported, int64(u.ReportedCost), u.HasReportedCost,
		int64(r.Cost), int64(r.Charge), r.Latency.Microseconds(), r.TTFB.Microseconds(), r.Guard, r.Note, r.CreatedAt, int64(r.Loss), int64(r.DirectiveShare)}
}

// notFound maps a missing row, and a foreign key naming a missing row, to
// gw.ErrNotFound.
func notFound(err error) error {
	var pe *pgconn.PgError
	if errors.Is(err, pgx.ErrNoRows) || errors.As(err, &pe) && pe.Code == "23503" {
		return gw.ErrNotFound
	}
	return err
}

// Interface guard.
var (
	_ gw.Store          = (*DB)(nil)
	_ gw.HoldRenewer    = (*DB)(nil)
	_ gw.MCPServerStore = (*DB)(nil)
)
