package dashboard

import (
	"time"

	gw "github.com/gwlabs/gateway"
)

// vendorRow is one vendor on the administrator's vendors panel: its
// circuit breaker and its keys (never their secrets).
type vendorRow struct {
	Vendor, Breaker, Class, Detail string
	Keys                           []vendorKeyRow
}

type vendorKeyRow struct {
	Name, State, Class, Detail string
	InFlight                   int
}

// vendorRows turns health reports into the panel's rows.
func vendorRows(hs []gw.VendorHealth, now time.Time) []vendorRow {
	var out []vendorRow
	for _, h := range hs {
		row := vendorRow{Vendor: h.Vendor, Breaker: h.Breaker, Class: "ok"}
		switch h.Breaker {
		case gw.BreakerOpen:
			row.Class, row.Detail = "bad", "probe in "+h.RetryAt.Sub(now).Round(time.Second).String()
		case gw.BreakerHalfOpen:
			row.Class, row.Detail = "warn", "next call probes"
		}
		if h.Failures > 0 && h.Breaker == gw.BreakerClosed {
			row.Detail = itoa(int64(h.Failures)) + " failures in a row"
		}
		if h.Opened > 0 {
			row.Detail = joinDetail(row.Detail, "opened "+itoa(h.Opened)+"x since start")
		}
		for _, k := range h.Keys {
			kr := vendorKeyRow{Name: k.Name, State: "ok", Class: "ok", InFlight: k.InFlight}
			switch {
			case k.Out:
				kr.State, kr.Class, kr.Detail = "out", "bad", k.Reason
			case k.Breaker == gw.BreakerOpen:
				kr.State, kr.Class, kr.Detail = "open", "bad", "probe in "+k.RetryAt.Sub(now).Round(time.Second).String()
			case !k.RestUntil.IsZero():
				kr.State, kr.Class, kr.Detail = "resting", "warn", "429: back in "+k.RestUntil.Sub(now).Round(time.Second).String()
			}
			row.Keys = append(row.Keys, kr)
		}
		out = append(out, row)
	}
	return out
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
