package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
)

// apply runs ops in one transaction, storing each call's own outcome in
// results. A call's clean failure (ErrNotFound, insufficient balance) has
// changed nothing and leaves the transaction usable; any other error
// aborts the transaction and is returned.
func (db *DB) apply(ops []*groupcommit.Op, results []error) error {
	// No deadline: a context that can end makes the driver start a
	// watching goroutine for every statement (and database/sql one for
	// the transaction), a tenth of the commit's CPU; the waits a batch
	// can meet (another process's write lock) end with the busy timeout.
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	// Balances load before the batch writes anything, so that what they
	// read is what the book's earlier batches already applied.
	for i, o := range ops {
		if o.Kind == groupcommit.Load {
			results[i] = db.loadBalance(ctx, tx, o.ID)
			if results[i] == nil {
				results[i] = db.loadSpends(ctx, tx, &o.Hold)
			}
		}
	}
	w := batches.Get().(*batch)
	defer func() {
		w.reset()
		batches.Put(w)
	}()
	for i, o := range ops {
		if o.Kind == groupcommit.Load {
			continue
		}
		err := db.applyOne(ctx, tx, o, w)
		if err != nil && !groupcommit.Clean(err) {
			return err
		}
		results[i] = err
	}
	if err := db.flush(ctx, tx, w); err != nil {
		return err
	}
	if db.book != nil {
		db.finishing.Lock()
		defer db.finishing.Unlock()
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if db.book != nil {
		for i, o := range ops {
			if results[i] == nil && (o.Kind == groupcommit.Settle || o.Kind == groupcommit.Release) {
				var charge int64
				var at time.Time
				if o.Kind == groupcommit.Settle && o.Rec != nil {
					charge = int64(o.Rec.Charge)
				}
				if o.Rec != nil {
					at = o.Rec.CreatedAt
				}
				db.book.finish(o.ID, charge, at)
			}
		}
	}
	return nil
}

func (db *DB) applyOne(ctx context.Context, tx *sql.Tx, o *groupcommit.Op, w *batch) error {
	if db.book != nil && (o.Kind == groupcommit.Settle || o.Kind == groupcommit.Release) {
		return db.finishMem(ctx, tx, o, w)
	}
	switch o.Kind {
	case groupcommit.Hold:
		if o.Hold.Budgeted() {
			// Its budgets sum the records: write the batch's so far.
			if err := db.flushRows(ctx, tx, w); err != nil {
				return err
			}
		}
		return db.placeHold(ctx, tx, o.Hold)
	case groupcommit.Settle, groupcommit.Release:
		var account, key string
		var amount, expires, created int64
		var kb, ab gw.Budget
		err := tx.StmtContext(ctx, db.ps.deleteHold).QueryRowContext(ctx, o.ID).
			Scan(&account, &key, &amount, &expires, &created, &kb.Daily, &kb.Monthly, &ab.Daily, &ab.Monthly)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("hold %q: %w", o.ID, gw.ErrNotFound)
			}
			return err
		}
		var charge int64
		if o.Kind == groupcommit.Settle && o.Rec != nil {
			// Never more than the hold plus what the balance covers now
			// (its balance less the account's other live holds): the
			// rest is the operator's loss.
			var covers int64
			if err := tx.StmtContext(ctx, db.ps.settleCovers).QueryRowContext(ctx, amount, account, micros(db.now())).Scan(&covers); err != nil {
				return err
			}
			bounded := settleBound(o.Rec, covers)
			now := db.now()
			own := gw.Money(0)
			if expires > micros(now) {
				own = gw.Money(amount)
			}
			// A charge within its live hold is within its budgets; one
			// above is bounded by what they still cover.
			if (!kb.IsZero() || !ab.IsZero()) && o.Rec.Charge > own {
				if err := db.flushRows(ctx, tx, w); err != nil {
					return err
				}
				h := gw.Hold{ID: o.ID, AccountID: account, KeyID: key, At: fromMicros(created), KeyBudget: kb, AccountBudget: ab}
				// The hold is deleted: the open holds leave it out.
				use, err := db.holdUse(ctx, tx, &h, now)
				if err != nil {
					return err
				}
				if err := budgetBound(o.Rec, &h, func(i int, l gw.BudgetLimit) (gw.Money, error) {
					return gw.BudgetCover(l.Limit, use[i], own), nil
				}); err != nil {
					return err
				}
			}
			charge = int64(min(bounded, o.Rec.Charge))
		}
		// One update frees the hold from the running total and debits
		// the charge.
		if _, err := tx.StmtContext(ctx, db.ps.finish).ExecContext(ctx, amount, charge, account); err != nil {
			return err
		}
		w.writeCharge(db, o, account, key, charge)
		return nil
	case groupcommit.Log:
		w.record(o.Rec)
		return nil
	}
	return fmt.Errorf("unknown op %d", o.Kind)
}

// finishMem settles or releases a hold kept in memory (the book removes
// it once the transaction committed): the charge, its ledger entry and
// the record, and nothing for the hold itself.
//
// The bound on the charge (never more than the hold plus what the
// balance covers now: its committed balance, less this batch's earlier
// charges, less the account's other live holds) starts from the book's
// balance, a lower bound of the table's: while this store owns the holds
// only its committer debits the account, and a top-up (from here or
// another process) only raises the table's balance. A charge the lower
// bound covers is charged whole without reading the table; one it does
// not cover reads the table's balance for the exact bound. The account's
// row is written once per batch (flush).
func (db *DB) finishMem(ctx context.Context, tx *sql.Tx, o *groupcommit.Op, w *batch) error {
	var charge int64
	acct := o.Hold.AccountID
	now := db.now()
	floor, others, own := db.book.settleView(acct, o.ID, now)
	if w.done == nil {
		w.done = map[string]int64{}
	}
	if o.Kind == groupcommit.Settle && o.Rec != nil {
		live := others - w.done[acct]
		pending := w.charged[acct]
		if int64(o.Rec.Charge) <= floor-pending-live {
			charge = int64(o.Rec.Charge)
		} else {
			var bal int64
			if err := tx.StmtContext(ctx, db.ps.balanceOf).QueryRowContext(ctx, acct).Scan(&bal); err != nil {
				return err
			}
			charge = int64(settleBound(o.Rec, bal-pending-live))
		}
		if err := budgetBound(o.Rec, &o.Hold, func(_ int, l gw.BudgetLimit) (gw.Money, error) {
			return db.book.cover(l, &o.Hold, own, now, &w.bu), nil
		}); err != nil {
			return err
		}
		charge = int64(o.Rec.Charge)
	}
	w.done[acct] += own
	if o.Rec != nil {
		db.book.tally(&o.Hold, own, charge, o.Rec.CreatedAt, &w.bu)
	}
	if charge > 0 {
		w.charge(acct, charge)
	}
	w.writeCharge(db, o, o.Hold.AccountID, o.Hold.KeyID, charge)
	return nil
}

// batch collects what a batch writes to the ledger, the records and
// (holds in memory) the accounts, written together by flush before the
// commit: a few multi-row statements instead of three per request.
type batch struct {
	ledger  []any // ledgerArgs per entry
	records []any // recordArgCount per record
	// Holds in memory: the batch's charges per account, in the order the
	// accounts came; and the live holds finished earlier in the batch
	// (their charges are in the batch, their holds still in the book).
	charged map[string]int64
	accts   []string
	done    map[string]int64
	bu      batchUse // the batch's settles by budget period
}

const ledgerArgs = 5

// batches are the batches of finished transactions, emptied, kept with
// their room (slices and maps) for the next.
var batches = sync.Pool{New: func() any { return new(batch) }}

// reset empties the batch for the next transaction, keeping its room and
// nothing of what it wrote.
func (w *batch) reset() {
	clear(w.ledger)
	clear(w.records)
	w.ledger, w.records = w.ledger[:0], w.records[:0]
	clear(w.charged)
	clear(w.done)
	clear(w.accts)
	w.accts = w.accts[:0]
	clear(w.bu.charged)
	clear(w.bu.held)
}

func (w *batch) charge(acct string, amount int64) {
	if w.charged == nil {
		w.charged = map[string]int64{}
	}
	if _, ok := w.charged[acct]; !ok {
		w.accts = append(w.accts, acct)
	}
	w.charged[acct] += amount
}

// writeCharge adds a finished hold's ledger entry (for a charge) and
// record (when there is one).
func (w *batch) writeCharge(db *DB, o *groupcommit.Op, account, key string, charge int64) {
	if o.Rec == nil {
		return
	}
	if o.Rec.AccountID == "" {
		o.Rec.AccountID = account
	}
	if o.Rec.KeyID == "" {
		o.Rec.KeyID = key
	}
	if charge > 0 {
		w.ledger = append(w.ledger, account, -charge, o.Rec.RequestID, "charge", micros(db.now()))
	}
	w.record(o.Rec)
}

func (w *batch) record(r *gw.Record) { w.records = appendRecordArgs(w.records, r) }

// flush writes the batch's account charges, ledger entries and records.
func (db *DB) flush(ctx context.Context, tx *sql.Tx, w *batch) error {
	for _, acct := range w.accts {
		if _, err := tx.StmtContext(ctx, db.ps.charge).ExecContext(ctx, w.charged[acct], acct); err != nil {
			return err
		}
	}
	if err := insertRows(ctx, tx, db.ps.ledgerInsert, w.ledger, ledgerArgs); err != nil {
		return err
	}
	return insertRows(ctx, tx, db.ps.recordInsert, w.records, recordArgCount)
}

// flushRows writes the batch's ledger entries and records so far (holds
// in the table: budgets sum the records), and empties them.
func (db *DB) flushRows(ctx context.Context, tx *sql.Tx, w *batch) error {
	if err := insertRows(ctx, tx, db.ps.ledgerInsert, w.ledger, ledgerArgs); err != nil {
		return err
	}
	if err := insertRows(ctx, tx, db.ps.recordInsert, w.records, recordArgCount); err != nil {
		return err
	}
	w.ledger, w.records = w.ledger[:0], w.records[:0]
	return nil
}

// insertRows inserts the rows of args (per row each) with the largest
// multi-row statements that fit: stmts[k] inserts 1<<k rows.
func insertRows(ctx context.Context, tx *sql.Tx, stmts []*sql.Stmt, args []any, per int) error {
	for n := len(args) / per; n > 0; {
		k := min(bits.Len(uint(n))-1, len(stmts)-1)
		rows := 1 << k
		if _, err := tx.StmtContext(ctx, stmts[k]).ExecContext(ctx, args[:rows*per]...); err != nil {
			return err
		}
		args, n = args[rows*per:], n-rows
	}
	return nil
}

// loadSpends reads into the book the committed spends of h's budget
// periods it does not know yet.
func (db *DB) loadSpends(ctx context.Context, tx *sql.Tx, h *gw.Hold) error {
	for _, l := range h.BudgetLimits() {
		k := keyOf(l.Owner, l.Period, h.At)
		db.book.mu.Lock()
		_, known := db.book.spend[k]
		db.book.mu.Unlock()
		if known {
			continue
		}
		spent, err := spentIn(ctx, tx, l, h.At)
		if err != nil {
			return fmt.Errorf("budget spend: %w", err)
		}
		db.book.loadedSpend(k, int64(spent))
	}
	return nil
}

// loadBalance reads the account's committed balance into the book.
func (db *DB) loadBalance(ctx context.Context, tx *sql.Tx, id string) error {
	var bal int64
	if err := tx.StmtContext(ctx, db.ps.balanceOf).QueryRowContext(ctx, id).Scan(&bal); err != nil {
		return fmt.Errorf("account %q: %w", id, notFound(err))
	}
	db.book.loaded(id, bal)
	return nil
}

// placeHold checks the account's available balance and inserts the hold.
// It runs inside the single writer's transaction, so nothing can change the
// balance or the holds between the check and the insert. The check reads
// the account's running held total and subtracts only its expired holds
// not yet swept (an index range that ExpireHolds keeps short), so its cost
// does not grow with the number of open holds.
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
		return fmt.Errorf("hold %q: %w", h.ID, groupcommit.ErrHoldExists)
	}
	if avail := gw.Money(balance - held); avail < h.Amount {
		return groupcommit.Insufficient(h.Amount, avail)
	}
	if err := db.checkBudgets(ctx, tx, &h, fromMicros(now)); err != nil {
		return err
	}
	kb, ab := h.KeyBudget, h.AccountBudget
	inc := db.incarnation()
	if _, err = tx.StmtContext(ctx, db.ps.insertHold).ExecContext(ctx, h.ID, h.AccountID, h.KeyID, int64(h.Amount), micros(h.ExpiresAt), micros(h.At),
		int64(kb.Daily), int64(kb.Monthly), int64(ab.Daily), int64(ab.Monthly), h.Vendor, h.Model, inc.Instance, inc.ID); err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, db.ps.addHeld).ExecContext(ctx, int64(h.Amount), h.AccountID)
	return err
}

// settleBound caps r.Charge at covers (the hold plus the available
// balance, never below zero), moves the rest to r.Loss with its note, and
// returns the charge to debit.
func settleBound(r *gw.Record, covers int64) gw.Money {
	covers = max(covers, 0)
	if int64(r.Charge) <= covers {
		return r.Charge
	}
	short := r.Charge - gw.Money(covers)
	r.Loss += short
	r.Charge = gw.Money(covers)
	r.Note = gw.JoinNote(r.Note, fmt.Sprintf("%s: the charge exceeded the hold and the available balance by %d", gw.NoteOperatorLoss, short))
	return r.Charge
}

// prepared holds the statements of the per-request path, parsed once:
// SQLite otherwise parses every statement on every call, which was a tenth
// of the gateway's CPU per request. The write statements are prepared on
// the single write connection before the committer starts (a transaction
// holds that connection, so none can be prepared during one).
type prepared struct {
	deleteHold, finish, holdCheck, insertHold, addHeld *sql.Stmt // on w
	charge, balanceOf, settleCovers, budgetUse         *sql.Stmt // on w
	keyByHash                                          *sql.Stmt // on r
	// On w: [k] inserts 1<<k rows.
	ledgerInsert, recordInsert []*sql.Stmt
	all                        []*sql.Stmt
}

// multiRows is how many sizes of multi-row inserts are prepared: 1 to
// 1<<(multiRows-1) rows a statement.
const multiRows = 7

// valuesRows returns an INSERT's VALUES list of rows rows of per
// parameters each.
func valuesRows(rows, per int) string {
	row := "(?" + strings.Repeat(", ?", per-1) + ")"
	return row + strings.Repeat(", "+row, rows-1)
}

func prepareStatements(ctx context.Context, w, r *sql.DB) (*prepared, error) {
	ps := &prepared{}
	for _, s := range []struct {
		db  *sql.DB
		dst **sql.Stmt
		q   string
	}{
		{w, &ps.deleteHold, `DELETE FROM holds WHERE id = ? RETURNING account_id, key_id, amount, expires_at, created_at,
		key_daily_budget, key_monthly_budget, account_daily_budget, account_monthly_budget`},
		{w, &ps.settleCovers, `SELECT balance - (held - ?1 - (SELECT coalesce(sum(amount), 0) FROM holds WHERE account_id = ?2 AND expires_at <= ?3))
		FROM accounts WHERE id = ?2`},
		{w, &ps.finish, `UPDATE accounts SET held = held - ?1, charged = charged + ?2, balance = balance - ?2 WHERE id = ?3`},
		{w, &ps.charge, `UPDATE accounts SET charged = charged + ?1, balance = balance - ?1 WHERE id = ?2`},
		{w, &ps.balanceOf, `SELECT balance FROM accounts WHERE id = ?`},
		{w, &ps.holdCheck, `SELECT a.balance,
		a.held - (SELECT coalesce(sum(amount), 0) FROM holds WHERE account_id = a.id AND expires_at <= ?),
		EXISTS (SELECT 1 FROM holds WHERE id = ?)
		FROM accounts a WHERE a.id = ?`},
		{w, &ps.insertHold, `INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at,
		key_daily_budget, key_monthly_budget, account_daily_budget, account_monthly_budget, vendor, model, instance, incarnation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{w, &ps.addHeld, `UPDATE accounts SET held = held + ?1 WHERE id = ?2`},
		{w, &ps.budgetUse, budgetUseQuery},
		{r, &ps.keyByHash, `SELECT k.id, k.account_id, a.name, k.rpm, k.tpm, k.hash, k.revoked_at, k.optimize_off, k.models,
		k.daily_budget, k.monthly_budget, a.daily_budget, a.monthly_budget
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
	for k := range multiRows {
		for _, s := range []struct {
			dst *[]*sql.Stmt
			q   string
		}{
			{&ps.ledgerInsert, `INSERT INTO ledger (account_id, amount, request_id, note, created_at) VALUES ` + valuesRows(1<<k, ledgerArgs)},
			{&ps.recordInsert, `INSERT INTO records (` + recordColumns + `) VALUES ` + valuesRows(1<<k, recordArgCount)},
		} {
			st, err := w.PrepareContext(ctx, s.q)
			if err != nil {
				ps.close()
				return nil, fmt.Errorf("prepare: %w", err)
			}
			*s.dst = append(*s.dst, st)
			ps.all = append(ps.all, st)
		}
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
