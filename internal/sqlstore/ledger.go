package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// LedgerColumns are the columns ScanLedger reads.
const LedgerColumns = `id, account_id, amount, request_id, reference, note, created_at`

// ScanLedger reads one ledger entry's LedgerColumns.
func ScanLedger(row Row) (gw.LedgerEntry, error) {
	var e gw.LedgerEntry
	var amount int64
	err := row.Scan(&e.ID, &e.AccountID, &amount, &e.RequestID, &e.Reference, &e.Note, When(&e.CreatedAt))
	e.Amount = gw.Money(amount)
	return e, err
}

// Ledger returns the account's entries newest first, those with an id
// below before (0: from the newest), at most limit.
func (q Queries) Ledger(ctx context.Context, accountID string, before int64, limit int) ([]gw.LedgerEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := q.r.Query(ctx, `SELECT `+LedgerColumns+` FROM ledger WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
		accountID, before, limit)
	out, err := collect(rows, err, ScanLedger)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return out, nil
}

// VerifyLedger recomputes the account's top-ups, charges and balance from
// its ledger entries, and its held total from its open holds, and returns
// an error when they disagree with the account's columns.
func (q Queries) VerifyLedger(ctx context.Context, accountID string) error {
	var topUps, charged, balance, credits, debits, held, open int64
	err := q.r.QueryRow(ctx, `SELECT a.top_ups, a.charged, a.balance,
		(SELECT CAST(coalesce(sum(amount), 0) AS BIGINT) FROM ledger WHERE account_id = a.id AND amount > 0),
		(SELECT CAST(coalesce(-sum(amount), 0) AS BIGINT) FROM ledger WHERE account_id = a.id AND amount < 0),
		a.held, (SELECT CAST(coalesce(sum(amount), 0) AS BIGINT) FROM holds WHERE account_id = a.id)
		FROM accounts a WHERE a.id = $1`, accountID).Scan(&topUps, &charged, &balance, &credits, &debits, &held, &open)
	if err != nil {
		return fmt.Errorf("verify ledger of %q: %w", accountID, q.d.NotFound(err))
	}
	if topUps != credits || charged != debits || balance != credits-debits || balance != topUps-charged {
		return fmt.Errorf("verify ledger of %q: columns top_ups=%d charged=%d balance=%d, ledger credits=%d debits=%d",
			accountID, topUps, charged, balance, credits, debits)
	}
	if held != open {
		return fmt.Errorf("verify ledger of %q: column held=%d, open holds sum to %d", accountID, held, open)
	}
	return nil
}

// Balance returns the account's money with its holds in the holds table;
// holds past their expiry do not count. An unknown account is
// ErrNotFound.
func (q Queries) Balance(ctx context.Context, accountID string) (gw.Balance, error) {
	var b gw.Balance
	err := q.r.QueryRow(ctx, `SELECT a.top_ups, a.charged, a.balance,
		a.held - (SELECT CAST(coalesce(sum(amount), 0) AS BIGINT) FROM holds WHERE account_id = a.id AND expires_at <= $2)
		FROM accounts a WHERE a.id = $1`, accountID, q.d.Time(q.now())).
		Scan(&b.TopUps, &b.Charged, &b.Balance, &b.Held)
	if err != nil {
		return gw.Balance{}, fmt.Errorf("balance of %q: %w", accountID, q.d.NotFound(err))
	}
	b.Available = b.Balance - b.Held
	return b, nil
}

// TopUpRef credits amount with the operator's reference and note, in one
// transaction. A reference already used on this account credits nothing
// and returns the first entry with duplicate true, so a retried top-up is
// counted once (the unique index on the account's references decides
// between concurrent retries). An unknown account is ErrNotFound.
func (q Queries) TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (e gw.LedgerEntry, duplicate bool, err error) {
	if amount <= 0 {
		return e, false, fmt.Errorf("top up: amount %d must be positive", amount)
	}
	unknown := fmt.Errorf("top up: account %q: %w", accountID, gw.ErrNotFound)
	now := q.now().Truncate(time.Microsecond)
	err = q.w.Tx(ctx, func(tx Conn) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`, accountID).Scan(&one); err != nil {
			if errors.Is(q.d.NotFound(err), gw.ErrNotFound) {
				return unknown
			}
			return fmt.Errorf("top up: %w", err)
		}
		var err error
		e, err = ScanLedger(tx.QueryRow(ctx, `INSERT INTO ledger (account_id, amount, reference, note, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (account_id, reference) WHERE reference <> '' DO NOTHING
			RETURNING `+LedgerColumns, accountID, int64(amount), reference, note, q.d.Time(now)))
		if err != nil && reference != "" && errors.Is(q.d.NotFound(err), gw.ErrNotFound) {
			// The reference was used: the first entry is the answer.
			e, err = ScanLedger(tx.QueryRow(ctx, `SELECT `+LedgerColumns+` FROM ledger WHERE account_id = $1 AND reference = $2`, accountID, reference))
			if err != nil {
				return fmt.Errorf("top up: %w", err)
			}
			duplicate = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("top up: %w", err)
		}
		n, err := tx.Exec(ctx, `UPDATE accounts SET top_ups = top_ups + $2, balance = balance + $2 WHERE id = $1`, accountID, int64(amount))
		if err != nil {
			return fmt.Errorf("top up: %w", err)
		}
		if n == 0 {
			return unknown
		}
		return nil
	})
	if err != nil {
		return gw.LedgerEntry{}, false, err
	}
	return e, duplicate, nil
}
