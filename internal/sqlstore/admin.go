package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

var errNotFound = gw.ErrNotFound

// ScanAccount reads id, name and created_at.
func ScanAccount(row Row) (*gw.Account, error) {
	var a gw.Account
	if err := row.Scan(&a.ID, &a.Name, When(&a.CreatedAt)); err != nil {
		return nil, err
	}
	return &a, nil
}

// Accounts returns every account, by name.
func (q Queries) Accounts(ctx context.Context) ([]gw.Account, error) {
	rows, err := q.r.Query(ctx, `SELECT id, name, created_at FROM accounts ORDER BY name`)
	out, err := collect(rows, err, func(r Row) (gw.Account, error) {
		a, err := ScanAccount(r)
		if err != nil {
			return gw.Account{}, err
		}
		return *a, nil
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	return out, nil
}

// AccountByID returns the account; an unknown id is ErrNotFound.
func (q Queries) AccountByID(ctx context.Context, id string) (*gw.Account, error) {
	a, err := ScanAccount(q.r.QueryRow(ctx, `SELECT id, name, created_at FROM accounts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("account %q: %w", id, q.d.NotFound(err))
	}
	return a, nil
}

// AccountByName returns the account with this name.
func (q Queries) AccountByName(ctx context.Context, name string) (*gw.Account, error) {
	a, err := ScanAccount(q.r.QueryRow(ctx, `SELECT id, name, created_at FROM accounts WHERE name = $1`, name))
	if err != nil {
		return nil, fmt.Errorf("account %q: %w", name, q.d.NotFound(err))
	}
	return a, nil
}

// RevokeKey marks the key revoked; revoking twice keeps the first time.
// An unknown key is ErrNotFound.
func (q Queries) RevokeKey(ctx context.Context, id string) error {
	// A scheduled end still in the future is brought forward to now.
	n, err := q.w.Exec(ctx, `UPDATE api_keys SET revoked_at = `+q.d.Least+`(coalesce(revoked_at, $2), $2) WHERE id = $1`, id, q.d.Time(q.now()))
	return changed(n, err, "revoke key", id)
}

// EndKeyAt schedules the key's end: it stops working at at (now or later),
// unless it already ends earlier. An unknown key is ErrNotFound.
func (q Queries) EndKeyAt(ctx context.Context, id string, at time.Time) error {
	n, err := q.w.Exec(ctx, `UPDATE api_keys SET revoked_at = `+q.d.Least+`(coalesce(revoked_at, $2), $2) WHERE id = $1`, id, q.d.Time(at))
	return changed(n, err, "end key", id)
}

// SetKeyOptimize switches the optimization layer off (or back on) for a
// key's requests. An unknown key is ErrNotFound.
func (q Queries) SetKeyOptimize(ctx context.Context, id string, off bool) error {
	n, err := q.w.Exec(ctx, `UPDATE api_keys SET optimize_off = $2 WHERE id = $1`, id, off)
	return changed(n, err, "set key optimize", id)
}

// SetKeyModels replaces the key's model allow list (empty: every model).
// An unknown key is ErrNotFound.
func (q Queries) SetKeyModels(ctx context.Context, id string, models []string) error {
	n, err := q.w.Exec(ctx, `UPDATE api_keys SET models = $2 WHERE id = $1`, id, gw.JoinModels(models))
	return changed(n, err, "set key models", id)
}

// KeyGeneration is a counter that every change to a key or a guard
// policy bumps (migration 0011's triggers): a cache of keys polls it to
// learn that it is stale.
func (q Queries) KeyGeneration(ctx context.Context) (int64, error) {
	var gen int64
	if err := q.r.QueryRow(ctx, `SELECT gen FROM key_generation WHERE id = 1`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("key generation: %w", err)
	}
	return gen, nil
}

// KeyUsage returns each used key's request count, spend and last use.
func (q Queries) KeyUsage(ctx context.Context) (map[string]gw.KeyUsage, error) {
	rows, err := q.r.Query(ctx, `SELECT key_id, count(*), CAST(coalesce(sum(charge), 0) AS BIGINT), max(created_at) FROM records GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	defer rows.Close()
	out := map[string]gw.KeyUsage{}
	for rows.Next() {
		var id string
		var u gw.KeyUsage
		var spend int64
		if err := rows.Scan(&id, &u.Requests, &spend, When(&u.LastUsed)); err != nil {
			return nil, fmt.Errorf("key usage: %w", err)
		}
		u.Spend = gw.Money(spend)
		out[id] = u
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	return out, nil
}

// Spend returns the sum of the account's charges on requests made at or
// after since (the records_account_created index serves it).
func (q Queries) Spend(ctx context.Context, accountID string, since time.Time) (gw.Money, error) {
	var sum int64
	if err := q.r.QueryRow(ctx, `SELECT CAST(COALESCE(SUM(charge), 0) AS BIGINT) FROM records WHERE account_id = $1 AND created_at >= $2`,
		accountID, q.d.Time(since)).Scan(&sum); err != nil {
		return 0, fmt.Errorf("spend: %w", err)
	}
	return gw.Money(sum), nil
}

// CheckKey refuses a key without an id or account and dates one without
// a time at now, to the microsecond both stores keep.
func CheckKey(k *gw.Key, now func() time.Time) error {
	if k.ID == "" || k.AccountID == "" {
		return errors.New("create key: id and account id are required")
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = now()
	}
	k.CreatedAt = k.CreatedAt.Truncate(time.Microsecond)
	return nil
}

// Keys lists every key, revoked ones included, newest first.
func (q Queries) Keys(ctx context.Context) ([]gw.Key, error) {
	rows, err := q.r.Query(ctx, `SELECT k.id, k.account_id, a.name, k.hint, k.rpm, k.tpm, k.created_at, k.revoked_at, k.name, k.optimize_off, k.models,
		k.daily_budget, k.monthly_budget
		FROM api_keys k JOIN accounts a ON a.id = k.account_id
		ORDER BY k.created_at DESC, k.id DESC`)
	out, err := collect(rows, err, func(row Row) (gw.Key, error) {
		var k gw.Key
		var models string
		var daily, monthly int64
		err := row.Scan(&k.ID, &k.AccountID, &k.AccountName, &k.Hint, &k.RPM, &k.TPM, When(&k.CreatedAt), WhenSet(&k.RevokedAt), &k.Name, &k.OptimizeOff, &models,
			&daily, &monthly)
		k.Models = gw.SplitModels(models)
		k.Budget.Daily, k.Budget.Monthly = gw.Money(daily), gw.Money(monthly)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return out, nil
}
