package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// opKind says what a group-committed call does.
type opKind int

const (
	opHold opKind = iota
	opSettle
	opRelease
	opLog
)

// errHoldExists refuses a second hold with the same id.
var errHoldExists = errors.New("hold already exists")

// op is one call waiting for the group committer.
type op struct {
	kind opKind
	hold gw.Hold    // opHold
	id   string     // hold id, for opSettle and opRelease
	rec  *gw.Record // the record to write; nil for a bare release
	res  chan error // buffered; receives exactly one result
}

// submit hands o to the committer and waits for its result. ctx bounds
// only the hand-over: once the committer took the call, submit waits for
// the commit, since the call may succeed even if the caller gave up, and
// telling it otherwise would be a lie about money.
func (db *DB) submit(ctx context.Context, o *op, what string) error {
	o.res = make(chan error, 1)
	select {
	case db.ops <- o:
	case <-db.quit:
		return fmt.Errorf("%s: %w", what, ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return <-o.res
}

// run is the committer: it takes one call, gathers every call already
// waiting (up to maxBatch), applies them in one transaction, answers each,
// and starts over. The ops channel is unbuffered, so a call is either taken
// (and answered) or its sender sees quit: none is lost on Close.
func (db *DB) run() {
	defer close(db.done)
	batch := make([]*op, 0, db.maxBatch)
	for {
		select {
		case o := <-db.ops:
			batch = append(batch[:0], o)
		case <-db.quit:
			return
		}
	fill:
		for len(batch) < db.maxBatch {
			select {
			case o := <-db.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		db.commit(batch)
	}
}

// commit applies batch in one transaction and answers every call. If the
// transaction fails, each call is retried in a transaction of its own, so
// that one bad call cannot fail the others.
func (db *DB) commit(batch []*op) {
	db.batches.Add(1)
	db.opsDone.Add(int64(len(batch)))
	results := make([]error, len(batch))
	err := db.apply(batch, results)
	if err != nil && len(batch) > 1 {
		db.retried.Add(int64(len(batch)))
		for i := range batch {
			if err := db.apply(batch[i:i+1], results[i:i+1]); err != nil {
				results[i] = err
			}
		}
	} else if err != nil {
		results[0] = err
	}
	for i, o := range batch {
		if results[i] != nil {
			results[i] = fmt.Errorf("%s: %w", o.kind, results[i])
		}
		o.res <- results[i]
	}
}

func (k opKind) String() string {
	switch k {
	case opHold:
		return "place hold"
	case opSettle:
		return "settle"
	case opRelease:
		return "release"
	}
	return "log"
}

// apply runs ops in one transaction, storing each call's own outcome in
// results. A call's clean failure (ErrNotFound, insufficient balance) has
// changed nothing and leaves the transaction usable; any other error
// aborts the transaction and is returned.
func (db *DB) apply(ops []*op, results []error) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	for i, o := range ops {
		err := db.applyOne(ctx, tx, o)
		if err != nil && !clean(err) {
			return err
		}
		results[i] = err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// clean reports whether err is a call's own refusal, made before it wrote
// anything.
func clean(err error) bool {
	var e *gw.Error
	return errors.Is(err, gw.ErrNotFound) || errors.Is(err, errHoldExists) || errors.As(err, &e)
}

func (db *DB) applyOne(ctx context.Context, tx *sql.Tx, o *op) error {
	switch o.kind {
	case opHold:
		return db.placeHold(ctx, tx, o.hold)
	case opSettle, opRelease:
		var account, key string
		err := tx.StmtContext(ctx, db.ps.deleteHold).QueryRowContext(ctx, o.id).Scan(&account, &key)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("hold %q: %w", o.id, gw.ErrNotFound)
			}
			return err
		}
		if o.rec == nil {
			return nil
		}
		if o.rec.AccountID == "" {
			o.rec.AccountID = account
		}
		if o.rec.KeyID == "" {
			o.rec.KeyID = key
		}
		if o.kind == opSettle && o.rec.Charge > 0 {
			if _, err := tx.StmtContext(ctx, db.ps.charge).ExecContext(ctx, int64(o.rec.Charge), account); err != nil {
				return err
			}
			if _, err := tx.StmtContext(ctx, db.ps.ledgerCharge).ExecContext(ctx,
				account, -int64(o.rec.Charge), o.rec.RequestID, "charge", micros(db.now())); err != nil {
				return err
			}
		}
		return db.insertRecord(ctx, tx, o.rec)
	case opLog:
		return db.insertRecord(ctx, tx, o.rec)
	}
	return fmt.Errorf("unknown op %d", o.kind)
}

// placeHold checks the account's available balance and inserts the hold.
// It runs inside the single writer's transaction, so nothing can change the
// balance or the holds between the check and the insert.
func (db *DB) placeHold(ctx context.Context, tx *sql.Tx, h gw.Hold) error {
	now := micros(db.now())
	var balance, held int64
	var exists bool
	err := tx.StmtContext(ctx, db.ps.holdCheck).QueryRowContext(ctx, now, h.ID, h.AccountID).Scan(&balance, &held, &exists)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("account %q: %w", h.AccountID, gw.ErrNotFound)
		}
		return err
	}
	if exists {
		return fmt.Errorf("hold %q: %w", h.ID, errHoldExists)
	}
	if avail := gw.Money(balance - held); avail < h.Amount {
		return insufficient(h.Amount, avail)
	}
	_, err = tx.StmtContext(ctx, db.ps.insertHold).ExecContext(ctx, h.ID, h.AccountID, h.KeyID, int64(h.Amount), micros(h.ExpiresAt), now)
	return err
}

// insufficient is the caller-facing refusal of a hold.
func insufficient(need, avail gw.Money) *gw.Error {
	return &gw.Error{
		Code: gw.CodeInsufficientBalance,
		Message: fmt.Sprintf("insufficient balance: this request needs up to $%s, the available balance is $%s",
			need.USDString(), max(avail, 0).USDString()),
		NoRetry: true,
	}
}

func (db *DB) insertRecord(ctx context.Context, tx *sql.Tx, r *gw.Record) error {
	_, err := tx.StmtContext(ctx, db.ps.insertRecord).ExecContext(ctx, recordArgs(r)...)
	return err
}

// prepared holds the statements of the per-request path, parsed once:
// SQLite otherwise parses every statement on every call, which was a tenth
// of the gateway's CPU per request. The write statements are prepared on
// the single write connection before the committer starts (a transaction
// holds that connection, so none can be prepared during one).
type prepared struct {
	deleteHold, charge, ledgerCharge, holdCheck, insertHold, insertRecord *sql.Stmt // on w
	keyByHash                                                             *sql.Stmt // on r
	all                                                                   []*sql.Stmt
}

func prepareStatements(ctx context.Context, w, r *sql.DB) (*prepared, error) {
	ps := &prepared{}
	for _, s := range []struct {
		db  *sql.DB
		dst **sql.Stmt
		q   string
	}{
		{w, &ps.deleteHold, `DELETE FROM holds WHERE id = ? RETURNING account_id, key_id`},
		{w, &ps.charge, `UPDATE accounts SET charged = charged + ?1, balance = balance - ?1 WHERE id = ?2`},
		{w, &ps.ledgerCharge, `INSERT INTO ledger (account_id, amount, request_id, note, created_at) VALUES (?, ?, ?, ?, ?)`},
		{w, &ps.holdCheck, `SELECT a.balance,
		(SELECT coalesce(sum(amount), 0) FROM holds WHERE account_id = a.id AND expires_at > ?),
		EXISTS (SELECT 1 FROM holds WHERE id = ?)
		FROM accounts a WHERE a.id = ?`},
		{w, &ps.insertHold, `INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`},
		{w, &ps.insertRecord, `INSERT INTO records (` + recordColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{r, &ps.keyByHash, `SELECT k.id, k.account_id, a.name, k.rpm, k.tpm, k.hash, k.revoked_at
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`},
	} {
		st, err := s.db.PrepareContext(ctx, s.q)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*s.dst = st
		ps.all = append(ps.all, st)
	}
	return ps, nil
}

func (ps *prepared) close() error {
	var errs []error
	for _, st := range ps.all {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
