package dashboard

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// exportMaxRows bounds one CSV export; a wider period is exported in
// parts by narrowing the filters.
const exportMaxRows = 100_000

// exportCSV writes the records that the logs page's filters select, newest
// first, as CSV (RFC 4180). Money columns are exact dollars, and again
// in micro-cents (the *_uc columns, the unit the gateway keeps; the
// vendor's reported cost exactly, fractions included); the vendor
// cost columns (the vendor cost, the directive's share, the operator's
// loss, the disputed cost and the vendor's reported cost) are the
// administrator's only. Cells that a spreadsheet would
// read as a formula are prefixed with a quote.
func (d *Dashboard) exportCSV(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	account := v.scope(q)
	f, _ := d.logFilter(q, account)
	f.Before = ""
	f.Limit = d.pageSize
	admin := v.admin

	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="requests-`+d.now().UTC().Format("20060102-150405")+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	head := []string{"time_utc", "request_id", "account_id", "key_id", "endpoint", "model", "stream", "status", "error_code",
		"input_tokens", "optimizer_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "usage_reported",
		"charge_usd"}
	if admin {
		head = append(head, "vendor_cost_usd", "directive_share_usd", "loss_usd", "disputed_cost_usd", "reported_cost_usd")
	}
	head = append(head, "latency_ms", "ttfb_ms", "guard", "note", "charge_uc")
	if admin {
		head = append(head, "vendor_cost_uc", "directive_share_uc", "loss_uc", "disputed_cost_uc", "reported_cost_uc")
	}
	_ = cw.Write(head)
	rows := 0
	for rows < exportMaxRows {
		recs, err := d.store.Records(r.Context(), f)
		if err != nil {
			// The header is sent; end the file with a marker row rather
			// than a silent truncation.
			d.log.Error("dashboard export", "err", err)
			_ = cw.Write([]string{"# export failed: " + err.Error()})
			break
		}
		for i := range recs {
			rec := &recs[i]
			u := rec.Usage
			row := []string{
				rec.CreatedAt.UTC().Format(time.RFC3339Nano), rec.RequestID, rec.AccountID, rec.KeyID,
				endpointPath(rec.Endpoint), cell(prefixedModel(rec.Vendor, rec.Model)), strconv.FormatBool(rec.Stream),
				strconv.Itoa(rec.Status), string(rec.ErrorCode),
				itoa(u.InputTokens), itoa(u.OptimizerTokens), itoa(u.CacheReadTokens), itoa(u.CacheWrite5mTokens), itoa(u.CacheWrite1hTokens),
				itoa(u.OutputTokens), itoa(u.ReasoningTokens), strconv.FormatBool(u.Reported),
				rec.Charge.USDString(),
			}
			if admin {
				reported := "" // none reported
				if u.HasReportedCost {
					reported = u.ReportedCost.USDString()
				}
				row = append(row, rec.Cost.USDString(), rec.DirectiveShare.USDString(), rec.Loss.USDString(),
					rec.DisputedCost.USDString(), reported)
			}
			row = append(row, itoa(rec.Latency.Milliseconds()), itoa(rec.TTFB.Milliseconds()), cell(rec.Guard), cell(rec.Note))
			row = append(row, ucColumns(rec, admin)...)
			_ = cw.Write(row)
		}
		rows += len(recs)
		if len(recs) < f.Limit {
			break
		}
		f.Before = recs[len(recs)-1].RequestID
	}
	cw.Flush()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// cell defuses a value a spreadsheet would evaluate (=, +, -, @, tab, CR).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
