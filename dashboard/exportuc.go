package dashboard

import (
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// ucColumns are a record's money columns in micro-cents: the charge, and
// for the administrator the vendor cost, the directive's share, the
// operator's loss, the disputed cost and the vendor's reported cost,
// exactly as reported (a fraction of a micro-cent included: the record's
// reported_cost_uc note), "" when none was reported.
func ucColumns(r *gw.Record, admin bool) []string {
	uc := func(m gw.Money) string { return strconv.FormatInt(int64(m), 10) }
	out := []string{uc(r.Charge)}
	if !admin {
		return out
	}
	return append(out, uc(r.Cost), uc(r.DirectiveShare), uc(r.Loss), uc(r.DisputedCost), reportedUC(r))
}

// reportedUC is the vendor's reported cost in micro-cents, exactly.
func reportedUC(r *gw.Record) string {
	if !r.Usage.HasReportedCost {
		return ""
	}
	for part := range strings.SplitSeq(r.Note, "; ") {
		if v, ok := strings.CutPrefix(part, proxy.NoteReportedCostUC); ok {
			return v
		}
	}
	return strconv.FormatInt(int64(r.Usage.ReportedCost), 10)
}
