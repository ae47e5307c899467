package sqlstore

import (
	"strconv"
	"strings"

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
