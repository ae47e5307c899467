package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// RecordsPage returns what follows "SELECT columns FROM records" for the
// records matching f, newest first (ties broken by request id,
// descending), one page of them, and its arguments. A Before cursor
// naming no record yields none.
func (d Dialect) RecordsPage(f gw.RecordFilter) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if f.AccountID != "" {
		add("account_id = $?", f.AccountID)
	}
	if f.Endpoint != "" {
		add("endpoint = $?", string(f.Endpoint))
	}
	if f.Model != "" {
		add("model = $?", f.Model)
	}
	if f.Vendor != "" {
		add("vendor = $?", f.Vendor)
	}
	if f.Status != 0 {
		add("status = $?", f.Status)
	}
	if f.KeyID != "" {
		add("key_id = $?", f.KeyID)
	}
	if f.StatusClass != 0 {
		add("status / 100 = $?", f.StatusClass)
	}
	if !f.Since.IsZero() {
		add("created_at >= $?", d.Time(f.Since))
	}
	if !f.Until.IsZero() {
		add("created_at < $?", d.Time(f.Until))
	}
	if f.Before != "" {
		add("(created_at, request_id) < (SELECT created_at, request_id FROM records WHERE request_id = $?)", f.Before)
	}
	var q string
	if len(where) > 0 {
		q = ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, Limit(f.Limit))
	return q + ` ORDER BY created_at DESC, request_id DESC LIMIT $` + strconv.Itoa(len(args)), args
}

// RecordColumns are a record's columns, in the order ScanRecord reads
// them and the stores write them.
const RecordColumns = `request_id, account_id, key_id, endpoint, vendor, model, stream, status, error_code,
	input_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, output_tokens,
	reasoning_tokens, optimizer_tokens, usage_reported, reported_cost, has_reported_cost,
	cost, charge, latency_us, ttfb_us, guard, note, created_at, loss, directive_share, disputed_cost, vendor_response_id`

// ScanRecord reads one record's RecordColumns.
func ScanRecord(row Row) (*gw.Record, error) {
	var r gw.Record
	var endpoint, code string
	var latency, ttfb int64
	u := &r.Usage
	if err := row.Scan(&r.RequestID, &r.AccountID, &r.KeyID, &endpoint, &r.Vendor, &r.Model, &r.Stream, &r.Status, &code,
		&u.InputTokens, &u.CacheReadTokens, &u.CacheWrite5mTokens, &u.CacheWrite1hTokens, &u.OutputTokens,
		&u.ReasoningTokens, &u.OptimizerTokens, &u.Reported, &u.ReportedCost, &u.HasReportedCost,
		&r.Cost, &r.Charge, &latency, &ttfb, &r.Guard, &r.Note, When(&r.CreatedAt), &r.Loss, &r.DirectiveShare, &r.DisputedCost, &r.VendorResponseID); err != nil {
		return nil, err
	}
	r.Endpoint, r.ErrorCode = gw.Shape(endpoint), gw.Code(code)
	r.Latency, r.TTFB = time.Duration(latency)*time.Microsecond, time.Duration(ttfb)*time.Microsecond
	return &r, nil
}

// Record returns one request's record.
func (q Queries) Record(ctx context.Context, requestID string) (*gw.Record, error) {
	r, err := ScanRecord(q.r.QueryRow(ctx, `SELECT `+RecordColumns+` FROM records WHERE request_id = $1`, requestID))
	if err != nil {
		return nil, fmt.Errorf("record %q: %w", requestID, q.d.NotFound(err))
	}
	return r, nil
}

// Records returns the records matching f, newest first (ties broken by
// request id, descending). A Before cursor naming no record yields none.
func (q Queries) Records(ctx context.Context, f gw.RecordFilter) ([]gw.Record, error) {
	page, args := q.d.RecordsPage(f)
	rows, err := q.r.Query(ctx, `SELECT `+RecordColumns+` FROM records`+page, args...)
	out, err := collect(rows, err, func(row Row) (gw.Record, error) {
		r, err := ScanRecord(row)
		if err != nil {
			return gw.Record{}, err
		}
		return *r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	return out, nil
}
