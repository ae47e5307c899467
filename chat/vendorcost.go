package chat

import (
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// estimated is the usage billed when the vendor's counts cannot be used
// (see estimateUsage), keeping the vendor's readable cost figure
// (OpenRouter's usage.cost beside malformed counts, or a usage object
// that is the cost alone): the cost is still the vendor's word, used up
// to the price of the gateway's bound of the tokens and recorded as
// reported (proxy's bound).
func estimated(in *proxy.Inbound, u gw.Usage, textBytes int64) gw.Usage {
	e := estimateUsage(in, textBytes)
	e.Malformed = u.Malformed
	e.ReportedCost, e.HasReportedCost, e.ReportedCostUSD = u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD
	return e
}
