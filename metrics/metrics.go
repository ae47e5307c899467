// Package metrics exports the gateway's request records as Prometheus
// metrics: requests by endpoint, vendor, status and error code; latency and
// time to first byte; tokens by billing bucket; vendor cost and charge;
// guard verdicts. Labels are bounded sets (the model, which a caller can
// choose freely on the aggregator, is left out), so no caller can blow up
// the series count. The ledger stays the source of truth for money: the
// USD counters here are for dashboards and alerts.
package metrics

import (
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics records request records into a Prometheus registry.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	ttfb     *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	charge   *prometheus.CounterVec
	guard    *prometheus.CounterVec
	clamped  *prometheus.CounterVec
	attempts *prometheus.CounterVec
	opCost   *prometheus.CounterVec
}

// New returns Metrics on a registry of its own, with the Go runtime and
// process collectors.
func New() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	buckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_requests_total", Help: "Chat requests by endpoint, vendor, HTTP status and error code.",
		}, []string{"endpoint", "vendor", "status", "error"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_request_duration_seconds", Help: "Time from arrival to the end of the answer.", Buckets: buckets,
		}, []string{"endpoint", "vendor"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_time_to_first_byte_seconds", Help: "Time from arrival to the first byte of a successful answer.", Buckets: buckets,
		}, []string{"endpoint", "vendor"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_tokens_total", Help: "Tokens of successful requests by billing bucket.",
		}, []string{"vendor", "bucket"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_vendor_cost_usd_total", Help: "Vendor cost of successful requests, in USD.",
		}, []string{"vendor"}),
		charge: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_charge_usd_total", Help: "Charges to callers' balances, in USD.",
		}, []string{"vendor"}),
		guard: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_guard_verdicts_total", Help: "Guard verdicts: pass, flagged:<kind>, monitor:<kind> (recorded, not blocked), grey (let through), grey:pass (passed by the second stage), allowed (a reviewed false positive), error or off.",
		}, []string{"verdict"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_attempts_total", Help: "Models tried by requests with fallbacks, by vendor and result: ok (served), an error code (fell over), or skipped (passed over before any call).",
		}, []string{"vendor", "result"}),
		opCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_operator_cost_usd_total", Help: "Vendor cost of failed requests the vendor may have billed (a stream cut after tokens), charged to no caller, in USD.",
		}, []string{"vendor"}),
		clamped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_usage_clamped_total", Help: "Requests whose vendor-reported usage was beyond what the request allowed (clamped).",
		}, []string{"vendor"}),
	}
	for _, c := range []prometheus.Collector{
		m.requests, m.duration, m.ttfb, m.tokens, m.cost, m.charge, m.guard, m.clamped, m.attempts, m.opCost,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Observe records one request.
func (m *Metrics) Observe(r *gw.Record) {
	endpoint, vendor := string(r.Endpoint), r.Vendor
	m.requests.WithLabelValues(endpoint, vendor, strconv.Itoa(r.Status), string(r.ErrorCode)).Inc()
	m.duration.WithLabelValues(endpoint, vendor).Observe(r.Latency.Seconds())
	m.guard.WithLabelValues(guardLabel(r.Guard)).Inc()
	for _, a := range r.Attempts {
		result := "ok"
		switch {
		case a.Skipped != "":
			result = "skipped"
		case a.Error != "":
			result = string(a.Error)
		}
		m.attempts.WithLabelValues(a.Vendor, result).Inc()
	}
	if r.Status != http.StatusOK || r.ErrorCode != "" {
		if r.Cost > 0 && r.Charge == 0 {
			m.opCost.WithLabelValues(vendor).Add(float64(r.Cost) / float64(gw.USD))
		}
		return
	}
	m.ttfb.WithLabelValues(endpoint, vendor).Observe(r.TTFB.Seconds())
	if r.UsageClamped {
		m.clamped.WithLabelValues(vendor).Inc()
	}
	u := r.Usage
	for _, b := range []struct {
		name string
		n    int64
	}{
		{"input", u.InputTokens}, {"cache_read", u.CacheReadTokens}, {"cache_write", u.CacheWriteTokens()},
		{"output", u.OutputTokens}, {"reasoning", u.ReasoningTokens},
	} {
		if b.n > 0 {
			m.tokens.WithLabelValues(vendor, b.name).Add(float64(b.n))
		}
	}
	m.cost.WithLabelValues(vendor).Add(float64(r.Cost) / float64(gw.USD))
	m.charge.WithLabelValues(vendor).Add(float64(r.Charge) / float64(gw.USD))
}

// guardLabel bounds the verdict label to the guard's known kinds.
func guardLabel(v string) string {
	switch v {
	case "pass", "off", "error", "", "grey", "grey:pass", "allowed":
		return v
	}
	for _, p := range []string{"flagged:", "monitor:"} {
		if kind, ok := strings.CutPrefix(v, p); ok {
			switch kind {
			case "extraction", "jailbreak", "injection", "guard_unavailable":
				return v
			}
			return p + "other"
		}
	}
	return "other"
}

// WatchVendors exports the vendors' circuit breakers and key pools as
// read by health at each scrape: gateway_vendor_breaker_state (0 closed,
// 1 half-open, 2 open), gateway_vendor_breaker_opened_total, and per key
// gateway_vendor_key_up (0 when the key is out, resting or its breaker
// open) and gateway_vendor_key_inflight.
func (m *Metrics) WatchVendors(health func() []gw.VendorHealth) error {
	return m.reg.Register(&vendorCollector{health: health})
}

type vendorCollector struct{ health func() []gw.VendorHealth }

var (
	descBreaker  = prometheus.NewDesc("gateway_vendor_breaker_state", "A vendor's circuit breaker: 0 closed, 1 half-open (a probe may go), 2 open.", []string{"vendor"}, nil)
	descOpened   = prometheus.NewDesc("gateway_vendor_breaker_opened_total", "Times a vendor's circuit breaker opened.", []string{"vendor"}, nil)
	descKeyUp    = prometheus.NewDesc("gateway_vendor_key_up", "1 when a vendor key takes calls; 0 when it is out (refused by the vendor), resting after a 429, or its breaker is open.", []string{"vendor", "key", "state"}, nil)
	descInflight = prometheus.NewDesc("gateway_vendor_key_inflight", "Calls in flight on a vendor key.", []string{"vendor", "key"}, nil)
)

func (c *vendorCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBreaker
	ch <- descOpened
	ch <- descKeyUp
	ch <- descInflight
}

func (c *vendorCollector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.health() {
		ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, breakerValue(h.Breaker), h.Vendor)
		ch <- prometheus.MustNewConstMetric(descOpened, prometheus.CounterValue, float64(h.Opened), h.Vendor)
		for _, k := range h.Keys {
			state, up := "ok", 1.0
			switch {
			case k.Out:
				state, up = "out", 0
			case k.Breaker == gw.BreakerOpen:
				state, up = "open", 0
			case !k.RestUntil.IsZero():
				state, up = "resting", 0
			}
			ch <- prometheus.MustNewConstMetric(descKeyUp, prometheus.GaugeValue, up, h.Vendor, k.Name, state)
			ch <- prometheus.MustNewConstMetric(descInflight, prometheus.GaugeValue, float64(k.InFlight), h.Vendor, k.Name)
		}
	}
}

func breakerValue(s string) float64 {
	switch s {
	case gw.BreakerOpen:
		return 2
	case gw.BreakerHalfOpen:
		return 1
	}
	return 0
}

// WatchReconciliation exports reconciliation's latest lines, read by
// lines at each scrape (the store's, so that every instance shows what
// the one running the job found): gateway_reconcile_drift_ratio per
// vendor and level (vendor or balance) of the newest day checked,
// gateway_reconcile_alerts by vendor and alert over the lines given, and
// gateway_reconcile_unreconcilable (1 for a vendor the gateway cannot
// check). Models are left out of the labels, as everywhere here.
func (m *Metrics) WatchReconciliation(lines func() []gw.ReconLine) error {
	return m.reg.Register(&reconCollector{lines: lines})
}

type reconCollector struct{ lines func() []gw.ReconLine }

var (
	descReconDrift  = prometheus.NewDesc("gateway_reconcile_drift_ratio", "Reconciliation drift (ledger - vendor) / max(ledger, vendor) of a vendor's newest day checked, by level: vendor (its cost) or balance (a prepaid balance's fall).", []string{"vendor", "level"}, nil)
	descReconAlerts = prometheus.NewDesc("gateway_reconcile_alerts", "Reconciliation lines that alert, by vendor and alert, over the days kept for scrapes.", []string{"vendor", "alert"}, nil)
	descReconUnrec  = prometheus.NewDesc("gateway_reconcile_unreconcilable", "1 when a vendor's newest day checked could not be reconciled (no report, no admin credentials).", []string{"vendor"}, nil)
)

func (c *reconCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descReconDrift
	ch <- descReconAlerts
	ch <- descReconUnrec
}

func (c *reconCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ vendor, alert string }
	alerts := map[key]int{}
	newest := map[string]bool{} // vendor/level seen (lines come newest day first)
	unrec := map[string]bool{}
	for _, l := range c.lines() {
		if l.Alert != "" {
			alerts[key{l.Vendor, l.Alert}]++
		}
		if l.Level != gw.ReconVendor && l.Level != gw.ReconBalance {
			continue
		}
		if newest[l.Vendor+"/"+l.Level] {
			continue
		}
		newest[l.Vendor+"/"+l.Level] = true
		if _, seen := unrec[l.Vendor]; !seen {
			unrec[l.Vendor] = l.Status == gw.ReconUnreconcilable
		}
		if l.Status != gw.ReconUnreconcilable && l.Status != gw.ReconError {
			ch <- prometheus.MustNewConstMetric(descReconDrift, prometheus.GaugeValue, float64(l.DriftPPM)/1e6, l.Vendor, l.Level)
		}
	}
	for k, n := range alerts {
		ch <- prometheus.MustNewConstMetric(descReconAlerts, prometheus.GaugeValue, float64(n), k.vendor, k.alert)
	}
	for v, u := range unrec {
		val := 0.0
		if u {
			val = 1
		}
		ch <- prometheus.MustNewConstMetric(descReconUnrec, prometheus.GaugeValue, val, v)
	}
}
