package proxy

import (
	"math/big"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// NoteReportedCostUC marks a record whose vendor's cost figure is not a
// whole number of micro-cents (the unit records keep): the figure
// exactly, in micro-cents ("reported_cost_uc=1.49"), so that every charge
// on it can be checked from the record and the export alone.
const NoteReportedCostUC = "reported_cost_uc="

// reportedCostNote is the NoteReportedCostUC note of u's reported cost,
// "" when it has none or it is a whole number of micro-cents.
func reportedCostNote(u gw.Usage) string {
	if !u.HasReportedCost || u.ReportedCostUSD == "" || len(u.ReportedCostUSD) > 64 {
		return ""
	}
	r, ok := new(big.Rat).SetString(u.ReportedCostUSD)
	if !ok {
		return ""
	}
	r.Mul(r, big.NewRat(int64(gw.USD), 1))
	if r.IsInt() {
		return ""
	}
	return NoteReportedCostUC + ExactDecimal(r)
}

// ExactDecimal writes r as a decimal with as many places as it needs (up
// to 30, then rounded), without trailing zeros.
func ExactDecimal(r *big.Rat) string {
	s := r.FloatString(30)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
