// Package sqlite implements gw.Store on a single SQLite database file,
// through the pure-Go driver modernc.org/sqlite. It is the store of a
// single gateway instance (or a few sharing one file on one machine); the
// postgres package serves a fleet. Both pass the storetest suite.
//
// # Design
//
// SQLite allows one writer at a time, so the store keeps one write
// connection and a pool of read-only connections. The database runs in WAL
// mode, so readers never block the writer nor the writer them, and every
// write transaction starts with BEGIN IMMEDIATE, so two processes sharing
// the file wait for each other (busy timeout) instead of failing with a
// lock upgrade deadlock.
//
// PlaceHold (holds in the table), Settle, Release and Log go through a group committer: one
// goroutine collects the calls that arrive while the previous transaction
// commits and applies them together in one transaction, each caller waiting
// for its own result. A call that fails cleanly (hold unknown, balance too
// low) changes nothing and does not disturb the others; any other failure
// rolls the batch back and its items are retried one transaction each, so
// one bad item cannot fail its neighbours. Under load a batch also
// waits up to Options.Linger for more calls (see groupcommit), so that
// many settles share one commit; a batch writes its ledger entries and
// records with multi-row inserts, and (holds in memory) each account's
// charges with one update. Because the checks and writes of
// a batch run inside one write transaction on the single writer, a hold is
// checked and inserted atomically: holds never over-commit the balance.
//
// # Holds
//
// A store opened with Options.Exclusive (the serving gateway's, unless
// GATEWAY_SQLITE_SHARED=on) keeps its holds in memory: placing one checks
// the account's committed balance, which the store keeps after loading it
// once, minus the holds it has open, under one mutex, and writes nothing;
// a settle is then the request's only transaction (the charge, its ledger
// entry and the record), group-committed with other requests' settles.
// A crash loses the holds, which is what a hold's expiry is for anyway:
// their requests died with the process, and the charges the callers were
// told of are committed. A lock on the file's "-holds" companion keeps an
// exclusive store from placing holds beside another store that places
// them (see Options.Exclusive). Without Exclusive, holds are rows of the
// holds table, checked and written inside the group commit, so several
// processes can share the file.
//
// # Durability
//
// The database runs in WAL mode with synchronous=NORMAL: a commit appends
// its frames to the write-ahead log with write(2) before Commit returns,
// so a Settle that returned is in the operating system's page cache and
// survives a kill -9 of the process (TestSettleSurvivesKill). The log is
// not fsynced on every commit; a background goroutine fsyncs it every
// Options.SyncInterval (100 ms by default) when something was committed,
// so a power loss or kernel crash can lose at most the commits of the
// last interval plus one fsync's duration. The same goroutine runs the
// checkpoints (copying the log into the database file, which syncs both),
// so a group commit waits for a disk sync only in the backstop case of a
// log grown past 10,000 pages that the syncer could not finish. Options.SyncInterval < 0
// restores synchronous=FULL, an fsync per commit amortised over a group
// commit batch, with SQLite's own automatic checkpoints.
//
// # Money
//
// Amounts are INTEGER micro-cents. The accounts table keeps top_ups,
// charged and balance columns (balance = top_ups - charged), updated in the
// same transaction as the ledger row that explains the change; VerifyLedger
// recomputes them from the ledger. A settle never takes the balance below
// zero: it debits at most its hold plus the account's available balance
// at that moment (the balance less the other live holds), and records the
// rest as the operator's loss (Record.Loss, noted "operator_loss"). A
// hold whose request is still running is kept alive by RenewHold; one
// that expired (a crashed process) no longer reserves anything, so its
// late settle is bounded like any other.
package sqlite

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/gwlabs/gateway/internal/sqlstore"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// backstopPages is the log size (in pages) past which a commit runs a
// checkpoint itself when the background syncer runs them.
const backstopPages = 10_000

// commitTimeout bounds one group commit transaction.
const commitTimeout = 30 * time.Second

// ErrClosed is returned by calls made after Close.
var ErrClosed = groupcommit.ErrClosed

// Defaults for Options.
const (
	DefaultBusyTimeout = 10 * time.Second
	DefaultMaxBatch    = 256
	// DefaultSyncInterval bounds how long a commit waits for its fsync.
	DefaultSyncInterval = 100 * time.Millisecond
	// DefaultLinger lets a group commit wait up to 3 ms for more calls
	// from about 700 calls a second up (why 3 ms, measured with
	// BenchmarkSettleAtRate: docs/PERFORMANCE.md, "The store's cost per
	// request").
	DefaultLinger = 3 * time.Millisecond
)

// Options configures a store. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a write waits for another process holding
	// the database's write lock. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxBatch caps how many calls one group commit applies. Zero means
	// DefaultMaxBatch; 1 disables batching.
	MaxBatch int
	// ReadConns is the size of the read pool. Zero means 2 x GOMAXPROCS,
	// at least 4.
	ReadConns int
	// Now is the clock, for hold expiry and default timestamps. Nil means
	// time.Now.
	Now func() time.Time
	// SyncInterval is the longest a commit stays unsynced to disk (see
	// Durability). Zero means DefaultSyncInterval; below zero means
	// synchronous=FULL, every commit synced before it returns.
	SyncInterval time.Duration
	// Exclusive keeps holds in memory (see Holds): this store must be
	// the only one placing holds on the file. Open fails when another
	// store places holds on it, and a store without Exclusive cannot
	// place holds while an exclusive one has the file. Stores that
	// place no holds (admin commands) can always open the file.
	Exclusive bool
	// Linger is the longest a group commit waits for more calls once
	// they arrive at least two per Linger (see groupcommit.Options); an
	// Exclusive store's waits for no more calls than it has requests in
	// flight (holds not yet being settled or released). Zero means
	// DefaultLinger; below zero, never.
	Linger time.Duration

	// rateLinger makes an exclusive store's group commit wait for the
	// calls its arrival rate promises, not only those in flight
	// (benchmarks comparing the two).
	rateLinger bool
	// backstop overrides backstopPages (benchmarks counting log frames
	// keep the log from restarting).
	backstop int
}

// Stats counts group commits.
type Stats = groupcommit.Stats

// DB is a gw.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	queries // the statements both stores share, reading on r, writing on w

	w    *sql.DB // the single write connection
	r    *sql.DB // read-only pool
	ps   *prepared
	now  func() time.Time
	path string

	gc   *groupcommit.Committer
	book *book // holds in memory; nil: holds in the holds table
	// finishing is held for writing from a batch's commit until its
	// settled holds have left the book, and for reading by Balance, so
	// that a reader never sees a charge committed while its hold still
	// counts as held (the same money twice).
	finishing sync.RWMutex
	lock      *holdsLock // the holds lock file, once taken
	lockMu    sync.Mutex
	closed    atomic.Bool
	syncStop  chan struct{} // closed by Close; nil without a syncer
	syncDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
	inc       atomic.Pointer[gw.Incarnation] // stamped on the holds it places
}

// Open opens (creating if missing) the database file at path with default
// options, applies pending migrations and starts the group committer.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opt Options) (*DB, error) {
	// The path is a plain file name: the driver splits its options at
	// '?', and an in-memory database would be private to each connection
	// of the read pool.
	if path == "" || path == ":memory:" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite: invalid path %q: want a file name", path)
	}
	busy := opt.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	maxBatch := opt.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	readConns := opt.ReadConns
	if readConns <= 0 {
		readConns = max(4, 2*runtime.GOMAXPROCS(0))
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}

	syncInterval := opt.SyncInterval
	if syncInterval == 0 {
		syncInterval = DefaultSyncInterval
	}
	synchronous := "NORMAL"
	if syncInterval < 0 {
		synchronous = "FULL"
	}
	params := "?_busy_timeout=" + strconv.FormatInt(busy.Milliseconds(), 10) +
		"&_journal_mode=WAL&_synchronous=" + synchronous + "&_foreign_keys=1"
	writer := path + params + "&_txlock=immediate"
	if syncInterval > 0 {
		// Checkpoints run in the background syncer, not inside a group
		// commit (a checkpoint syncs both files). The writer's own
		// automatic checkpoint stays as a backstop for a log the syncer
		// could not finish under sustained writes, at ten times the
		// default size.
		backstop := backstopPages
		if opt.backstop > 0 {
			backstop = opt.backstop
		}
		writer += "&_pragma=wal_autocheckpoint(" + strconv.Itoa(backstop) + ")"
	}
	w, err := sql.Open("sqlite", writer)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrateRetrying(ctx, w, busy); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	r, err := sql.Open("sqlite", path+params+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	ps, err := prepareStatements(ctx, w, r)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	db := &DB{
		w: w, r: r, ps: ps, now: now, path: path,
		queries: sqlstore.New(sqlstore.SQL(r), sqlstore.SQL(w), dialect, now),
	}
	if opt.Exclusive {
		if db.lock, err = lockHolds(path, true); err != nil {
			w.Close()
			r.Close()
			ps.close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		db.book = newBook()
	}
	linger := opt.Linger
	if linger == 0 {
		linger = DefaultLinger
	}
	gopt := groupcommit.Options{MaxBatch: maxBatch, Linger: linger}
	if db.book != nil && !opt.rateLinger {
		gopt.InFlight = func() int { return int(db.book.open.Load()) }
	}
	db.gc = groupcommit.StartWith(gopt, db.apply)
	if syncInterval > 0 {
		ck, err := sql.Open("sqlite", path+params)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		ck.SetMaxOpenConns(1)
		db.syncStop, db.syncDone = make(chan struct{}), make(chan struct{})
		go db.syncLoop(ck, path+"-wal", syncInterval)
	}
	return db, nil
}

// migrateRetrying runs migrate, again while the file is busy for up to
// the busy timeout: processes opening a new file together race to switch
// it to WAL, and the loser sees SQLITE_BUSY without the busy handler.
func migrateRetrying(ctx context.Context, w *sql.DB, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	for {
		err := migrate(ctx, w)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// syncLoop runs the store's checkpoints and its background sync: every
// interval in which the write-ahead log was written (its size or
// modification time changed), a PASSIVE checkpoint on its own connection
// ck copies committed pages into the database file (syncing the log
// first and the database after, as synchronous=NORMAL does), then an
// fsync of the log covers whatever the checkpoint could not take. It
// runs once more when the store closes. An fsync through any descriptor
// of the file flushes all of its written pages, whichever connection or
// process wrote them.
func (db *DB) syncLoop(ck *sql.DB, wal string, interval time.Duration) {
	defer close(db.syncDone)
	defer ck.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	var last os.FileInfo
	for {
		stop := false
		select {
		case <-t.C:
		case <-db.syncStop:
			stop = true
		}
		if fi, err := os.Stat(wal); err == nil && (last == nil || fi.Size() != last.Size() || !fi.ModTime().Equal(last.ModTime())) {
			ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
			var busy, frames, done int
			err := ck.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done)
			cancel()
			// The log restarts (at the next write) only once every frame
			// is checkpointed: until then, try again at the next tick
			// even if nothing new was written.
			complete := err == nil && busy == 0 && done >= frames
			if syncFile(wal) == nil && complete {
				if fi, err := os.Stat(wal); err == nil {
					last = fi
				}
			}
		}
		if stop {
			return
		}
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own IMMEDIATE transaction, so that
// processes opening the file together apply each exactly once.
func migrate(ctx context.Context, w *sql.DB) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, name := range names {
		base, version, err := sqlstore.MigrationVersion(name)
		if err != nil {
			return err
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := applyMigration(ctx, w, version, base, string(body)); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, w *sql.DB, version int, name, body string) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		version, name, time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	var one int
	if err := db.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Close stops the group committer, after it answered every call it took,
// and closes the database. Calls made after Close return ErrClosed. Close
// is idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		db.gc.Close()
		if db.syncStop != nil {
			close(db.syncStop)
			<-db.syncDone
		}
		db.lockMu.Lock()
		defer db.lockMu.Unlock()
		db.closeErr = errors.Join(db.ps.close(), db.r.Close(), db.w.Close(), db.lock.release())
	})
	return db.closeErr
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
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("ensure account: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, sqlstore.NewID("acct_"), name, micros(db.now())); err != nil {
		return nil, fmt.Errorf("ensure account: %w", err)
	}
	a, err := sqlstore.ScanAccount(tx.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE name = ?`, name))
	if err != nil {
		return nil, fmt.Errorf("ensure account: %w", notFound(err))
	}
	if err := tx.Commit(); err != nil {
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
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT name FROM accounts WHERE id = ?`, k.AccountID).Scan(&k.AccountName); err != nil {
		return fmt.Errorf("create key: account %q: %w", k.AccountID, notFound(err))
	}
	var revoked any
	if k.RevokedAt != nil {
		revoked = micros(*k.RevokedAt)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, hash, hint, rpm, tpm, created_at, revoked_at, name, optimize_off, models, daily_budget, monthly_budget)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.AccountID, hash[:], k.Hint, k.RPM, k.TPM, micros(k.CreatedAt), revoked, k.Name, k.OptimizeOff, gw.JoinModels(k.Models),
		int64(k.Budget.Daily), int64(k.Budget.Monthly)); err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	return nil
}

// KeyByHash returns the principal of the live key with this hash. Unknown
// and revoked keys (revoked_at now or past) are ErrNotFound.
func (db *DB) KeyByHash(ctx context.Context, hash [32]byte) (*gw.Principal, error) {
	var p gw.Principal
	var stored []byte
	var revoked sql.NullInt64
	var models string
	err := db.ps.keyByHash.QueryRowContext(ctx, hash[:]).
		Scan(&p.KeyID, &p.AccountID, &p.AccountName, &p.RPM, &p.TPM, &stored, &revoked, &p.OptimizeOff, &models,
			&p.KeyBudget.Daily, &p.KeyBudget.Monthly, &p.AccountBudget.Daily, &p.AccountBudget.Monthly)
	p.Models = gw.SplitModels(models)
	if err != nil {
		return nil, fmt.Errorf("key by hash: %w", notFound(err))
	}
	if subtle.ConstantTimeCompare(stored, hash[:]) != 1 || revoked.Valid && revoked.Int64 <= micros(db.now()) {
		return nil, fmt.Errorf("key by hash: %w", gw.ErrNotFound)
	}
	if revoked.Valid {
		p.EndsAt = fromMicros(revoked.Int64)
	}
	return &p, nil
}

// TopUp credits amount (positive) to the account and writes a ledger
// entry. An unknown account is ErrNotFound.
func (db *DB) TopUp(ctx context.Context, accountID string, amount gw.Money, note string) error {
	if amount <= 0 {
		return fmt.Errorf("top up: amount %d must be positive", amount)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("top up: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET top_ups = top_ups + ?1, balance = balance + ?1 WHERE id = ?2`, int64(amount), accountID)
	if err != nil {
		return fmt.Errorf("top up: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("top up: %w", err)
	} else if n == 0 {
		return fmt.Errorf("top up: account %q: %w", accountID, gw.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger (account_id, amount, note, created_at) VALUES (?, ?, ?, ?)`,
		accountID, int64(amount), note, micros(db.now())); err != nil {
		return fmt.Errorf("top up: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("top up: %w", err)
	}
	db.toppedUp(accountID)
	return nil
}

// toppedUp makes the next hold on the account load its balance again.
func (db *DB) toppedUp(accountID string) {
	if db.book != nil {
		db.book.forget(accountID)
	}
}

// Balance returns the account's money; holds past their expiry do not
// count. An unknown account is ErrNotFound.
func (db *DB) Balance(ctx context.Context, accountID string) (gw.Balance, error) {
	if db.book != nil {
		var b gw.Balance
		db.finishing.RLock()
		err := db.r.QueryRowContext(ctx, `SELECT top_ups, charged, balance FROM accounts WHERE id = ?`, accountID).
			Scan(&b.TopUps, &b.Charged, &b.Balance)
		if err == nil {
			b.Held = gw.Money(db.book.heldOf(accountID, db.now()))
		}
		db.finishing.RUnlock()
		if err != nil {
			return gw.Balance{}, fmt.Errorf("balance of %q: %w", accountID, notFound(err))
		}
		b.Available = b.Balance - b.Held
		return b, nil
	}
	return db.queries.Balance(ctx, accountID)
}

// PlaceHold reserves h.Amount on h.AccountID until h.ExpiresAt. It fails
// with a *gw.Error of CodeInsufficientBalance when the available balance is
// below the amount, and with ErrNotFound for an unknown account.
func (db *DB) PlaceHold(ctx context.Context, h gw.Hold) error {
	if err := sqlstore.CheckHold(&h, db.now); err != nil {
		return err
	}
	if db.book != nil {
		if db.closed.Load() {
			return fmt.Errorf("place hold: %w", ErrClosed)
		}
		return db.placeHoldMem(ctx, h)
	}
	if err := db.lockShared(); err != nil {
		return fmt.Errorf("place hold: %w", err)
	}
	return db.gc.Submit(ctx, &groupcommit.Op{Kind: groupcommit.Hold, Hold: h}, "place hold")
}

// Settle finishes the hold: it deletes it, debits r.Charge (at most the
// hold plus the available balance; the rest is r.Loss), writes the
// ledger entry and the record, in one durable transaction, and sets
// r.Charge, r.Loss and r.Note to what it wrote. An unknown or already
// finished hold is ErrNotFound and changes nothing. A hold past its
// expiry that was not swept yet still settles. r.RequestID defaults to
// the hold id and r.AccountID, r.KeyID to the hold's.
func (db *DB) Settle(ctx context.Context, holdID string, r *gw.Record) error {
	return sqlstore.Settle(ctx, holdID, r, db.now, db.finishHold)
}

// finishHold submits a Settle or Release; on an exclusive store it takes
// the hold from the book first (the commit removes it) and gives it back
// when the call fails.
func (db *DB) finishHold(ctx context.Context, o *groupcommit.Op, what string) error {
	if db.book == nil {
		return db.gc.Submit(ctx, o, what)
	}
	if db.closed.Load() {
		return fmt.Errorf("%s: %w", what, ErrClosed)
	}
	h, err := db.book.take(o.ID, what)
	if err != nil {
		return err
	}
	if o.Rec == nil {
		db.book.release(o.ID) // nothing to write
		return nil
	}
	o.Hold = h
	if err := db.gc.Submit(ctx, o, what); err != nil {
		db.book.untake(o.ID)
		return err
	}
	return nil
}

// Release deletes the hold without charging and, when r is not nil, writes
// r with a zero charge. An unknown or already finished hold is ErrNotFound
// and changes nothing.
func (db *DB) Release(ctx context.Context, holdID string, r *gw.Record) error {
	return sqlstore.Release(ctx, holdID, r, db.now, db.finishHold)
}

// RenewHold moves a live hold's expiry to expiresAt (never earlier). A
// hold past its expiry, swept or finished is ErrNotFound.
func (db *DB) RenewHold(ctx context.Context, holdID string, expiresAt time.Time) error {
	if db.book != nil {
		if !db.book.renew(holdID, expiresAt, db.now()) {
			return fmt.Errorf("renew hold %q: %w", holdID, gw.ErrNotFound)
		}
		return nil
	}
	return db.queries.RenewHold(ctx, holdID, expiresAt)
}

// Log writes a record for a request that placed no hold.
func (db *DB) Log(ctx context.Context, r *gw.Record) error {
	return sqlstore.Log(ctx, r, db.now, db.gc.Submit)
}

// ExpireHolds deletes the holds whose expiry is not after now, taking
// them off their accounts' held totals in the same transaction, and
// returns how many it deleted.
func (db *DB) ExpireHolds(ctx context.Context, now time.Time) (int, error) {
	if db.book != nil {
		lapsed := db.book.expire(now)
		db.logCut(ctx, lapsed)
		return len(lapsed), nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	defer tx.Rollback()
	lapsed, err := lapsedHolds(ctx, tx, now)
	if err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts
		SET held = held - (SELECT coalesce(sum(amount), 0) FROM holds WHERE account_id = accounts.id AND expires_at <= ?1)
		WHERE id IN (SELECT account_id FROM holds WHERE expires_at <= ?1)`, micros(now)); err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM holds WHERE expires_at <= ?`, micros(now))
	if err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("expire holds: %w", err)
	}
	db.logCut(ctx, lapsed)
	return int(n), nil
}

// recordColumns are a record's columns (see sqlstore.RecordColumns).
const recordColumns = sqlstore.RecordColumns

// recordArgCount is the number of recordColumns.
const recordArgCount = 30

// appendRecordArgs appends r's values for recordColumns to args.
func appendRecordArgs(args []any, r *gw.Record) []any {
	u := r.Usage
	return append(args, r.RequestID, r.AccountID, r.KeyID, string(r.Endpoint), r.Vendor, r.Model, r.Stream, r.Status, string(r.ErrorCode),
		u.InputTokens, u.CacheReadTokens, u.CacheWrite5mTokens, u.CacheWrite1hTokens, u.OutputTokens,
		u.ReasoningTokens, u.OptimizerTokens, u.Reported, int64(u.ReportedCost), u.HasReportedCost,
		int64(r.Cost), int64(r.Charge), r.Latency.Microseconds(), r.TTFB.Microseconds(), r.Guard, r.Note, micros(r.CreatedAt), int64(r.Loss), int64(r.DirectiveShare), int64(r.DisputedCost), r.VendorResponseID)
}

// notFound maps sql.ErrNoRows to gw.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return gw.ErrNotFound
	}
	return err
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// queries names the shared statements embedded in DB.
type queries = sqlstore.Queries

// dialect is how SQLite spells what the shared statements leave open:
// times are INTEGER microseconds.
var dialect = sqlstore.Dialect{
	Time:     func(t time.Time) any { return micros(t) },
	Least:    "min",
	Greatest: "max",
	NotFound: notFound,
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Interface guard.
var (
	_ gw.Store          = (*DB)(nil)
	_ gw.HoldRenewer    = (*DB)(nil)
	_ gw.MCPServerStore = (*DB)(nil)
)
