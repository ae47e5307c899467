package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/jackc/pgx/v5"
)

// lockAccounts locks, in id order, every account the batch touches: those
// of new holds and those of the holds being settled or released. Taking
// them up front in one order keeps batches of several instances from
// deadlocking, and makes every later statement of the batch see the
// accounts' holds as of after the lock. NO KEY UPDATE is the lock an
// UPDATE of the balance takes anyway; unlike FOR UPDATE it lets foreign
// key checks (a new key or ledger row for the account) proceed.
//
// The ids are gathered first and the accounts found by key: with the two
// conditions OR-ed in the WHERE clause instead, PostgreSQL reads every
// account to test them (a batch's cost grew with the number of accounts).
const lockAccounts = `SELECT id FROM accounts
	WHERE id IN (SELECT unnest($1::text[]) UNION SELECT account_id FROM holds WHERE id = ANY($2::text[]))
	ORDER BY id FOR NO KEY UPDATE`

// placeHold inserts the hold if the account's balance covers it and every
// live hold, and adds it to the account's running held total. Live holds
// are the running total less the expired holds not yet swept (an index
// range ExpireHolds keeps short), so the check costs the same however
// many holds are open. $1 id, $2 account, $3 key, $4 amount, $5 expiry,
// $6 now, $7 the request's arrival (the hold's created_at: its budget
// periods). A hold under budgets goes through placeHoldBudgeted instead.
const placeHold = `WITH acct AS (SELECT balance, held - (SELECT coalesce(sum(amount), 0)::bigint
		FROM holds WHERE account_id = $2 AND expires_at <= $6) AS live FROM accounts WHERE id = $2),
	dup AS (SELECT EXISTS (SELECT 1 FROM holds WHERE id = $1) AS e),
	ins AS (
		INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at, vendor, model, instance, incarnation)
		SELECT $1::text, $2::text, $3::text, $4::bigint, $5::timestamptz, $7::timestamptz, $8::text, $9::text, $10::text, $11::text FROM acct, dup
		WHERE NOT dup.e AND acct.balance - acct.live >= $4::bigint
		RETURNING amount
	),
	add AS (UPDATE accounts SET held = held + ins.amount FROM ins WHERE accounts.id = $2 RETURNING 1)
	SELECT acct.balance, acct.live, dup.e, EXISTS (SELECT 1 FROM add) FROM acct, dup`

// finishHold deletes the hold, takes it off the account's held total,
// debits the charge ($21) with its ledger entry, and writes the record
// when $30 is true: $1 to $28 are the record's columns, $29 the hold id,
// $30 whether to write the record, $31 now, $32 its disputed cost, $33 its vendor response id. The debit is never more than
// the hold plus what the balance covers at this moment (the balance less
// the account's other live holds; the sub-statements see the holds as
// they were before the delete, so the hold itself is left out by id);
// the rest is added to the record's loss ($27) and noted. It returns the
// hold's account, the debit and whether the budgets bounded it, or no
// row when the hold does not exist (and then writes nothing).
//
// It finishes only a hold whose budgets cannot bound the debit: one with
// no budget, or a charge within the live hold (a release's, always). For
// any other hold it writes nothing and returns no row, as for a missing
// hold; the settle then runs again through finishHoldBudgeted. Keeping
// the budgets' eight sums out of this statement keeps their set-up out of
// every settle: PostgreSQL initialises a statement's sub-plans whether or
// not they run (a quarter of the server's CPU for a request's hold and
// settle).
var finishHold = finishSQL(`DELETE FROM holds WHERE id = $29 AND (
		$21::bigint <= CASE WHEN expires_at > $31::timestamptz THEN amount ELSE 0 END OR (`+noBudget+`))
		RETURNING account_id, key_id, amount`,
	`SELECT least($21::bigint, greatest(0::bigint, accounts.balance - (accounts.held - h.amount -
			(SELECT coalesce(sum(amount), 0)::bigint FROM holds
			 WHERE account_id = h.account_id AND expires_at <= $31::timestamptz AND id <> $29)))) AS debit, false AS by_budget
		FROM accounts, h WHERE accounts.id = h.account_id`)

// finishHoldBudgeted is finishHold for any hold, its debit also bounded
// by what the hold's budgets cover (budgetCovers).
var finishHoldBudgeted = finishSQL(`DELETE FROM holds WHERE id = $29 RETURNING account_id, key_id, amount, expires_at, created_at,
		key_daily_budget, key_monthly_budget, account_daily_budget, account_monthly_budget`,
	`SELECT least(c.covers, c.budget) AS debit, c.budget < least($21::bigint, c.covers) AS by_budget FROM (
			SELECT least($21::bigint, greatest(0::bigint, accounts.balance - (accounts.held - h.amount -
				(SELECT coalesce(sum(amount), 0)::bigint FROM holds
				 WHERE account_id = h.account_id AND expires_at <= $31::timestamptz AND id <> $29)))) AS covers,
				`+budgetCovers+` AS budget
			FROM accounts, h WHERE accounts.id = h.account_id) c`)

// finishSQL is a finish statement made of its hold's delete (h: the
// hold's account_id and amount at least) and its debit (a: debit and
// by_budget).
func finishSQL(h, a string) string {
	return `WITH h AS (` + h + `),
	a AS (` + a + `),
	debit AS (
		UPDATE accounts SET held = held - h.amount, charged = charged + a.debit, balance = balance - a.debit
		FROM h, a WHERE accounts.id = h.account_id
		RETURNING 1
	),
	entry AS (
		INSERT INTO ledger (account_id, amount, request_id, note, created_at)
		SELECT h.account_id, -a.debit, $1::text, 'charge', $31::timestamptz FROM h, a WHERE a.debit > 0
		RETURNING 1
	),
	rec AS (
		INSERT INTO records (` + recordColumns + `)
		SELECT $1, coalesce(nullif($2::text, ''), h.account_id), coalesce(nullif($3::text, ''), h.key_id),
			$4::text, $5::text, $6::text, $7::boolean, $8::integer, $9::text,
			$10::bigint, $11::bigint, $12::bigint, $13::bigint, $14::bigint, $15::bigint, $16::bigint,
			$17::boolean, $18::bigint, $19::boolean, $20::bigint, a.debit, $22::bigint, $23::bigint,
			$24::text, ` + lossNote + `, $26::timestamptz, $27::bigint + $21::bigint - a.debit, $28::bigint, $32::bigint, $33::text
		FROM h, a WHERE $30::boolean
		RETURNING 1
	)
	SELECT h.account_id, a.debit, a.by_budget FROM h, a`
}

// lossNote is the record's note ($25) with the operator's loss appended
// when the debit (a.debit) is below the charge ($21).
const lossNote = `CASE WHEN a.debit < $21::bigint THEN concat_ws('; ', nullif($25::text, ''),
	'` + gw.NoteOperatorLoss + `: the charge exceeded the hold and ' ||
	CASE WHEN a.by_budget THEN 'what the budgets cover' ELSE 'the available balance' END || ' by ' || ($21::bigint - a.debit)::text)
	ELSE $25::text END`

const insertRecord = `INSERT INTO records (` + recordColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`

// The batch's settings, each for its transaction only (set_config's
// third argument). genericPlans makes its statements run on their
// prepared statements' generic plans: they find their rows by key, so a
// plan made for the parameters at hand would be the same plan, made again
// at every execution (a third of the server's CPU for one request's hold
// and settle). A budgeted hold sums a period of records and keeps its
// custom plan. relaxSync makes the commit not wait for the WAL flush.
const (
	genericPlans = `set_config('plan_cache_mode', 'force_generic_plan', true)`
	relaxSync    = `set_config('synchronous_commit', 'off', true)`
)

// apply runs ops in one transaction, as one pipelined batch, storing each
// call's own outcome in results. A call's clean failure (ErrNotFound,
// insufficient balance) has changed nothing and leaves the transaction
// usable; any other error aborts the transaction and is returned.
//
// A settle whose hold's budgets may bound its charge (a charge above its
// live hold, under budgets) is left out of the batch by finishHold and
// runs once the batch committed, through finishHoldBudgeted, in a
// transaction of its own: a settle's charge rarely exceeds its hold, and
// every other settle is spared the budgets' sums.
func (db *DB) apply(ops []*groupcommit.Op, results []error) error {
	late, err := db.applyBatch(ops, results, false)
	if err != nil || len(late) == 0 {
		return err
	}
	// The batch committed without them: each call's answer is its own
	// from here on, as when groupcommit retries a failed batch call by call.
	sub := make([]*groupcommit.Op, len(late))
	res := make([]error, len(late))
	for j, i := range late {
		sub[j] = ops[i]
	}
	if _, err := db.applyBatch(sub, res, true); err != nil {
		for j := range sub {
			if _, err := db.applyBatch(sub[j:j+1], res[j:j+1], true); err != nil {
				res[j] = err
			}
		}
	}
	for j, i := range late {
		results[i] = res[j]
	}
	return nil
}

// errBudgeted is finishHold's answer for a hold that finishHoldBudgeted
// must finish (or one that does not exist).
var errBudgeted = errors.New("settle under budgets")

// applyBatch runs ops in one transaction, as apply does, their settles
// and releases through finishHoldBudgeted when budgeted is set, else
// through finishHold: it returns the indexes of the settles finishHold
// left (their results unset).
//
// The batch is the whole transaction, in one round trip: with no BEGIN,
// the statements sent before the batch's single Sync run in one implicit
// transaction, which the server commits at the Sync when every statement
// succeeded and rolls back when one failed (the statements after a
// failure are not run). So a batch commits all or nothing, as with an
// explicit transaction, without the round trips of BEGIN and COMMIT.
func (db *DB) applyBatch(ops []*groupcommit.Op, results []error, budgeted bool) (late []int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	now := db.now()

	b := &pgx.Batch{}
	var settings []string
	if !slices.ContainsFunc(ops, func(o *groupcommit.Op) bool { return o.Kind == groupcommit.Hold && o.Hold.Budgeted() }) {
		settings = append(settings, genericPlans)
	}
	if !db.syncEach || !groupcommit.NeedsSync(ops) {
		// No charge in this batch, or flushes not wanted: the commit
		// need not wait for the WAL flush.
		settings = append(settings, relaxSync)
	}
	if len(settings) > 0 {
		b.Queue(`SELECT ` + strings.Join(settings, ", "))
	}
	var accounts, holds []string
	for _, o := range ops {
		switch o.Kind {
		case groupcommit.Hold:
			accounts = append(accounts, o.Hold.AccountID)
		case groupcommit.Settle, groupcommit.Release:
			holds = append(holds, o.ID)
		}
	}
	locking := len(accounts) > 0 || len(holds) > 0
	if locking {
		sort.Strings(accounts)
		b.Queue(lockAccounts, accounts, holds)
	}
	inc := db.incarnation()
	for _, o := range ops {
		switch o.Kind {
		case groupcommit.Hold:
			h := o.Hold
			if h.Budgeted() {
				b.Queue(placeHoldBudgeted, budgetedArgs(&h, now, inc)...)
			} else {
				b.Queue(placeHold, h.ID, h.AccountID, h.KeyID, int64(h.Amount), h.ExpiresAt, now, h.At, h.Vendor, h.Model, inc.Instance, inc.ID)
			}
		case groupcommit.Settle, groupcommit.Release:
			rec := o.Rec
			if rec == nil {
				rec = &gw.Record{RequestID: o.ID, CreatedAt: now}
			}
			args := append(recordArgs(rec), o.ID, o.Rec != nil, now, int64(rec.DisputedCost), rec.VendorResponseID)
			if o.Kind == groupcommit.Release {
				args[20] = int64(0) // $21, the charge
			}
			if budgeted {
				b.Queue(finishHoldBudgeted, args...)
			} else {
				b.Queue(finishHold, args...)
			}
		case groupcommit.Log:
			b.Queue(insertRecord, append(recordArgs(o.Rec), int64(o.Rec.DisputedCost), o.Rec.VendorResponseID)...)
		}
	}

	br := db.pool.SendBatch(ctx, b)
	defer br.Close()
	if len(settings) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("batch settings: %w", err)
		}
	}
	if locking {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("lock accounts: %w", err)
		}
	}
	for i, o := range ops {
		err := read(br, o, budgeted)
		if errors.Is(err, errBudgeted) {
			late = append(late, i)
			continue
		}
		if err != nil && !groupcommit.Clean(err) {
			return nil, err
		}
		results[i] = err
	}
	// Close reads the Sync's answer: the commit.
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return late, nil
}

// read reads the result of o's statement from the batch (its settle's
// through finishHoldBudgeted when budgeted is set).
func read(br pgx.BatchResults, o *groupcommit.Op, budgeted bool) error {
	switch o.Kind {
	case groupcommit.Hold:
		if o.Hold.Budgeted() {
			return readBudgeted(br, &o.Hold)
		}
		var balance, held int64
		var dup, placed bool
		if err := br.QueryRow().Scan(&balance, &held, &dup, &placed); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("account %q: %w", o.Hold.AccountID, gw.ErrNotFound)
			}
			return err
		}
		switch {
		case dup:
			return fmt.Errorf("hold %q: %w", o.Hold.ID, groupcommit.ErrHoldExists)
		case !placed:
			return groupcommit.Insufficient(o.Hold.Amount, gw.Money(balance-held))
		}
		return nil
	case groupcommit.Settle, groupcommit.Release:
		var account string
		var debit int64
		var byBudget bool
		if err := br.QueryRow().Scan(&account, &debit, &byBudget); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				if !budgeted && o.Kind == groupcommit.Settle && o.Rec != nil && o.Rec.Charge > 0 {
					// Under budgets, or missing: finishHoldBudgeted says.
					return errBudgeted
				}
				return fmt.Errorf("hold %q: %w", o.ID, gw.ErrNotFound)
			}
			return err
		}
		if o.Kind == groupcommit.Settle && o.Rec != nil && gw.Money(debit) < o.Rec.Charge {
			short := o.Rec.Charge - gw.Money(debit)
			o.Rec.Loss += short
			o.Rec.Charge = gw.Money(debit)
			what := "the available balance"
			if byBudget {
				what = "what the budgets cover"
			}
			o.Rec.Note = gw.JoinNote(o.Rec.Note, fmt.Sprintf("%s: the charge exceeded the hold and %s by %d", gw.NoteOperatorLoss, what, short))
		}
		return nil
	}
	_, err := br.Exec()
	return err
}
