package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// LedgerSums sums the records of vendor ("" for all) created in
// [since, until) per vendor and model (see gw.ReconcileStore).
func (q Queries) LedgerSums(ctx context.Context, vendor string, since, until time.Time) ([]gw.LedgerSum, error) {
	args := []any{q.d.Time(since), q.d.Time(until)}
	where := `created_at >= $1 AND created_at < $2 AND vendor <> ''`
	if vendor != "" {
		args = append(args, vendor)
		where += ` AND vendor = $3`
	}
	rows, err := q.r.Query(ctx, `SELECT vendor, model, count(*), CAST(coalesce(sum(cost + disputed_cost), 0) AS BIGINT),
		CAST(coalesce(sum(input_tokens), 0) AS BIGINT), CAST(coalesce(sum(cache_read_tokens), 0) AS BIGINT), CAST(coalesce(sum(cache_write_5m_tokens), 0) AS BIGINT),
		CAST(coalesce(sum(cache_write_1h_tokens), 0) AS BIGINT), CAST(coalesce(sum(output_tokens), 0) AS BIGINT), CAST(coalesce(sum(reasoning_tokens), 0) AS BIGINT),
		CAST(coalesce(sum(optimizer_tokens), 0) AS BIGINT)
		FROM records WHERE `+where+` GROUP BY vendor, model ORDER BY vendor, model`, args...)
	out, err := collect(rows, err, func(row Row) (gw.LedgerSum, error) {
		var s gw.LedgerSum
		u := &s.Usage
		err := row.Scan(&s.Vendor, &s.Model, &s.Requests, &s.Cost, &u.InputTokens, &u.CacheReadTokens,
			&u.CacheWrite5mTokens, &u.CacheWrite1hTokens, &u.OutputTokens, &u.ReasoningTokens, &u.OptimizerTokens)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger sums: %w", err)
	}
	return out, nil
}

// TakeLease takes or renews the named lease (see gw.ReconcileStore): one
// upsert, which changes the row only when it is the holder's or has
// lapsed, so that of any number of instances at most one holds it.
func (q Queries) TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	n, err := q.w.Exec(ctx, `INSERT INTO job_leases (name, holder, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE job_leases.holder = excluded.holder OR job_leases.expires_at <= $4`,
		name, holder, q.d.Time(now.Add(ttl)), q.d.Time(now))
	if err != nil {
		return false, fmt.Errorf("take lease %q: %w", name, err)
	}
	return n > 0, nil
}

// DropLease gives the holder's lease up.
func (q Queries) DropLease(ctx context.Context, name, holder string) error {
	if _, err := q.w.Exec(ctx, `DELETE FROM job_leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
		return fmt.Errorf("drop lease %q: %w", name, err)
	}
	return nil
}

const reconColumns = `vendor, day, level, model, vendor_key, class, ledger, reported, drift_ppm, status, alert,
	our_price, implied_price, final, checked_at, note`

// SaveRecon replaces the vendor-day's lines with lines in one transaction.
func (q Queries) SaveRecon(ctx context.Context, vendor string, day time.Time, lines []gw.ReconLine) error {
	err := q.w.Tx(ctx, func(tx Conn) error {
		if _, err := tx.Exec(ctx, `DELETE FROM recon_lines WHERE vendor = $1 AND day = $2`, vendor, q.d.Time(day)); err != nil {
			return err
		}
		for _, l := range lines {
			if _, err := tx.Exec(ctx, `INSERT INTO recon_lines (`+reconColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
				vendor, q.d.Time(day), l.Level, l.Model, l.VendorKey, l.Class, l.Ledger, l.Reported, l.DriftPPM,
				l.Status, l.Alert, int64(l.OurPrice), int64(l.ImpliedPrice), l.Final, q.d.Time(l.CheckedAt), l.Note); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save reconciliation %s %s: %w", vendor, day.Format(time.DateOnly), err)
	}
	return nil
}

// Recon lists reconciliation lines, newest day first, each day's
// vendors, levels and models in order.
func (q Queries) Recon(ctx context.Context, f gw.ReconFilter) ([]gw.ReconLine, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if f.Vendor != "" {
		add("vendor = $?", f.Vendor)
	}
	if !f.Since.IsZero() {
		add("day >= $?", q.d.Time(f.Since))
	}
	if !f.Until.IsZero() {
		add("day < $?", q.d.Time(f.Until))
	}
	if f.AlertsOnly {
		where = append(where, "alert <> ''")
	}
	w := ""
	if len(where) > 0 {
		w = ` WHERE ` + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	args = append(args, limit)
	rows, err := q.r.Query(ctx, `SELECT `+reconColumns+` FROM recon_lines`+w+`
		ORDER BY day DESC, vendor, CASE level WHEN 'vendor' THEN 0 WHEN 'balance' THEN 1 WHEN 'model' THEN 2 ELSE 3 END, model, vendor_key, class
		LIMIT $`+strconv.Itoa(len(args)), args...)
	out, err := collect(rows, err, func(row Row) (gw.ReconLine, error) {
		var l gw.ReconLine
		var our, implied int64
		err := row.Scan(&l.Vendor, When(&l.Day), &l.Level, &l.Model, &l.VendorKey, &l.Class, &l.Ledger, &l.Reported,
			&l.DriftPPM, &l.Status, &l.Alert, &our, &implied, &l.Final, When(&l.CheckedAt), &l.Note)
		l.OurPrice, l.ImpliedPrice = gw.Money(our), gw.Money(implied)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("reconciliation: %w", err)
	}
	return out, nil
}

// AddBalanceReading stores one reading (a second at the same instant is
// ignored).
func (q Queries) AddBalanceReading(ctx context.Context, b gw.BalanceReading) error {
	if _, err := q.w.Exec(ctx, `INSERT INTO balance_readings (vendor, at, balance) VALUES ($1, $2, $3)
		ON CONFLICT (vendor, at) DO NOTHING`, b.Vendor, q.d.Time(b.At), int64(b.Balance)); err != nil {
		return fmt.Errorf("add balance reading: %w", err)
	}
	return nil
}

// BalanceReadings lists the vendor's readings, newest first.
func (q Queries) BalanceReadings(ctx context.Context, vendor string, limit int) ([]gw.BalanceReading, error) {
	rows, err := q.r.Query(ctx, `SELECT vendor, at, balance FROM balance_readings WHERE vendor = $1 ORDER BY at DESC LIMIT $2`,
		vendor, Limit(limit))
	out, err := collect(rows, err, func(row Row) (gw.BalanceReading, error) {
		var b gw.BalanceReading
		var bal int64
		err := row.Scan(&b.Vendor, When(&b.At), &bal)
		b.Balance = gw.Money(bal)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("balance readings: %w", err)
	}
	return out, nil
}

const adjustmentColumns = `request_id, account_id, vendor, model, generation_id, ledger, reported, charge, status, created_at, decided_at, decided_by`

// AddAdjustment stores a checked generation once.
func (q Queries) AddAdjustment(ctx context.Context, a gw.Adjustment) error {
	if _, err := q.w.Exec(ctx, `INSERT INTO adjustments (request_id, account_id, vendor, model, generation_id, ledger, reported, charge, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (request_id) DO NOTHING`,
		a.RequestID, a.AccountID, a.Vendor, a.Model, a.GenerationID, int64(a.Ledger), int64(a.Reported), int64(a.Charge),
		a.Status, q.d.Time(a.CreatedAt)); err != nil {
		return fmt.Errorf("add adjustment: %w", err)
	}
	return nil
}

// UncheckedRecords lists the vendor's records in [since, until) that
// carry a vendor response id and have no adjustment row yet, oldest first.
func (q Queries) UncheckedRecords(ctx context.Context, vendor string, since, until time.Time, limit int) ([]gw.Record, error) {
	rows, err := q.r.Query(ctx, `SELECT `+prefixed("r.", RecordColumns)+` FROM records r
		WHERE r.vendor = $1 AND r.created_at >= $2 AND r.created_at < $3 AND r.vendor_response_id <> ''
		AND NOT EXISTS (SELECT 1 FROM adjustments a WHERE a.request_id = r.request_id)
		ORDER BY r.created_at, r.request_id LIMIT $4`, vendor, q.d.Time(since), q.d.Time(until), Limit(limit))
	out, err := collect(rows, err, func(row Row) (gw.Record, error) {
		r, err := ScanRecord(row)
		if err != nil {
			return gw.Record{}, err
		}
		return *r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("unchecked records: %w", err)
	}
	return out, nil
}

// GenerationSums sums the checked generations (adjustments of any status,
// matched included) of the vendor's requests made in [since, until).
func (q Queries) GenerationSums(ctx context.Context, vendor string, since, until time.Time) (gw.GenerationSum, error) {
	var g gw.GenerationSum
	var ledger, reported int64
	err := q.r.QueryRow(ctx, `SELECT count(*), CAST(coalesce(sum(ledger), 0) AS BIGINT), CAST(coalesce(sum(reported), 0) AS BIGINT),
		count(*) FILTER (WHERE status <> $4) FROM adjustments WHERE vendor = $1 AND created_at >= $2 AND created_at < $3`,
		vendor, q.d.Time(since), q.d.Time(until), gw.AdjustmentMatched).Scan(&g.Checked, &ledger, &reported, &g.Adjustments)
	g.Ledger, g.Reported = gw.Money(ledger), gw.Money(reported)
	if err != nil {
		return g, fmt.Errorf("generation sums: %w", err)
	}
	return g, nil
}

// prefixed qualifies each of a comma-separated column list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// Adjustments lists adjustments in status ("" for every one but the
// matched), newest first.
func (q Queries) Adjustments(ctx context.Context, status string, limit int) ([]gw.Adjustment, error) {
	where, args := `status <> $1`, []any{gw.AdjustmentMatched}
	if status != "" {
		where, args = `status = $1`, []any{status}
	}
	args = append(args, Limit(limit))
	rows, err := q.r.Query(ctx, `SELECT `+adjustmentColumns+` FROM adjustments WHERE `+where+`
		ORDER BY created_at DESC, request_id DESC LIMIT $2`, args...)
	out, err := collect(rows, err, func(row Row) (gw.Adjustment, error) {
		var a gw.Adjustment
		var ledger, reported, charge int64
		err := row.Scan(&a.RequestID, &a.AccountID, &a.Vendor, &a.Model, &a.GenerationID, &ledger, &reported, &charge,
			&a.Status, When(&a.CreatedAt), When(&a.DecidedAt), &a.DecidedBy)
		a.Ledger, a.Reported, a.Charge = gw.Money(ledger), gw.Money(reported), gw.Money(charge)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("adjustments: %w", err)
	}
	return out, nil
}

// DecideAdjustment moves a pending adjustment to approved or dismissed.
func (q Queries) DecideAdjustment(ctx context.Context, requestID, status, by string, at time.Time) error {
	if status != gw.AdjustmentApproved && status != gw.AdjustmentDismissed {
		return fmt.Errorf("decide adjustment: status %q is neither approved nor dismissed", status)
	}
	n, err := q.w.Exec(ctx, `UPDATE adjustments SET status = $1, decided_by = $2, decided_at = $3
		WHERE request_id = $4 AND status = $5`, status, by, q.d.Time(at), requestID, gw.AdjustmentPending)
	return changed(n, err, "decide adjustment", requestID)
}

var _ gw.ReconcileStore = Queries{}
