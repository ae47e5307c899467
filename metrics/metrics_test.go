package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestObserve(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ok := &gw.Record{Endpoint: gw.ShapeC, Vendor: "openai", Status: 200, Guard: "pass", Latency: 300 * time.Millisecond, TTFB: 100 * time.Millisecond,
		Usage: gw.Usage{InputTokens: 10, CacheReadTokens: 90, OutputTokens: 5, ReasoningTokens: 2}, Cost: gw.USD / 100, Charge: gw.Charge(gw.USD / 100)}
	blocked := &gw.Record{Endpoint: gw.ShapeM, Vendor: "anthropic", Status: 403, ErrorCode: gw.CodeRequestBlocked, Guard: "flagged:extraction"}
	clamped := &gw.Record{Endpoint: gw.ShapeC, Vendor: "groq", Status: 200, Guard: "pass", UsageClamped: true, Note: "usage_clamped"}
	m.Observe(ok)
	m.Observe(ok)
	m.Observe(blocked)
	m.Observe(clamped)
	if got := testutil.ToFloat64(m.clamped.WithLabelValues("groq")); got != 1 {
		t.Errorf("clamped = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.clamped.WithLabelValues("openai")); got != 0 {
		t.Errorf("clamped openai = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("chat_completions", "openai", "200", "")); got != 2 {
		t.Errorf("ok requests = %v", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("messages", "anthropic", "403", "request_blocked")); got != 1 {
		t.Errorf("blocked requests = %v", got)
	}
	if got := testutil.ToFloat64(m.tokens.WithLabelValues("openai", "cache_read")); got != 180 {
		t.Errorf("cache read tokens = %v", got)
	}
	if got := testutil.ToFloat64(m.charge.WithLabelValues("openai")); got < 0.0217 || got > 0.0219 {
		t.Errorf("charge = %v", got)
	}
	if got := testutil.ToFloat64(m.guard.WithLabelValues("flagged:extraction")); got != 1 {
		t.Errorf("flagged = %v", got)
	}
	if guardLabel("flagged:made-up-by-caller") != "flagged:other" || guardLabel("weird") != "other" {
		t.Error("guard label not bounded")
	}
	for in, want := range map[string]string{"monitor:jailbreak": "monitor:jailbreak", "monitor:x": "monitor:other", "grey": "grey", "grey:pass": "grey:pass", "allowed": "allowed", "grey:x": "other"} {
		if got := guardLabel(in); got != want {
			t.Errorf("guardLabel(%q) = %q, want %q", in, got, want)
		}
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(w.Body.String(), `gateway_requests_total{endpoint="chat_completions",error="",status="200",vendor="openai"} 2`) {
		t.Errorf("exposition lacks the request counter:\n%s", w.Body.String()[:min(2000, w.Body.Len())])
	}
}

func TestVendorsAndAttempts(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = m.WatchVendors(func() []gw.VendorHealth {
		return []gw.VendorHealth{
			{Vendor: "anthropic", Breaker: gw.BreakerOpen, Opened: 3},
			{Vendor: "openai", Breaker: gw.BreakerClosed, Keys: []gw.KeyHealth{
				{Name: "1", Breaker: gw.BreakerClosed, InFlight: 4},
				{Name: "2", Breaker: gw.BreakerClosed, Out: true},
				{Name: "3", Breaker: gw.BreakerClosed, RestUntil: now.Add(time.Second)},
			}},
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(&gw.Record{Endpoint: gw.ShapeM, Vendor: "openai", Status: 200, Attempts: []gw.Attempt{
		{Vendor: "anthropic", Error: gw.CodeOverloaded}, {Vendor: "google", Skipped: "context window too small"}, {Vendor: "openai"}}})
	for _, l := range [][2]string{{"anthropic", "overloaded"}, {"google", "skipped"}, {"openai", "ok"}} {
		if got := testutil.ToFloat64(m.attempts.WithLabelValues(l[0], l[1])); got != 1 {
			t.Errorf("attempts %v = %v", l, got)
		}
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body := w.Body.String()
	for _, want := range []string{
		`gateway_vendor_breaker_state{vendor="anthropic"} 2`,
		`gateway_vendor_breaker_state{vendor="openai"} 0`,
		`gateway_vendor_breaker_opened_total{vendor="anthropic"} 3`,
		`gateway_vendor_key_up{key="1",state="ok",vendor="openai"} 1`,
		`gateway_vendor_key_up{key="2",state="out",vendor="openai"} 0`,
		`gateway_vendor_key_up{key="3",state="resting",vendor="openai"} 0`,
		`gateway_vendor_key_inflight{key="1",vendor="openai"} 4`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}

func TestReconciliation(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	err = m.WatchReconciliation(func() []gw.ReconLine {
		return []gw.ReconLine{ // newest day first
			{Vendor: "openai", Level: gw.ReconVendor, DriftPPM: -25_000, Status: gw.ReconDrift, Alert: gw.AlertVendorDrift},
			{Vendor: "openai", Level: gw.ReconModel, Model: "gpt-x", Status: gw.ReconDrift, Alert: gw.AlertPriceStale},
			{Vendor: "groq", Level: gw.ReconVendor, Status: gw.ReconUnreconcilable, Alert: gw.AlertUnreconcilable},
			{Vendor: "deepseek", Level: gw.ReconBalance, DriftPPM: 1000, Status: gw.ReconMatch},
			{Vendor: "openai", Level: gw.ReconVendor, DriftPPM: 900_000, Status: gw.ReconDrift, Alert: gw.AlertVendorDrift}, // an older day
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body := w.Body.String()
	for _, want := range []string{
		`gateway_reconcile_drift_ratio{level="vendor",vendor="openai"} -0.025`,
		`gateway_reconcile_drift_ratio{level="balance",vendor="deepseek"} 0.001`,
		`gateway_reconcile_alerts{alert="vendor_day_drift",vendor="openai"} 2`,
		`gateway_reconcile_alerts{alert="price_table_stale",vendor="openai"} 1`,
		`gateway_reconcile_unreconcilable{vendor="groq"} 1`,
		`gateway_reconcile_unreconcilable{vendor="openai"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, `gateway_reconcile_drift_ratio{level="vendor",vendor="groq"}`) {
		t.Error("an unreconcilable vendor has a drift")
	}
}
