package dashboard

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

func TestVendorsPanel(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rows := vendorRows([]gw.VendorHealth{
		{Vendor: "anthropic", Breaker: gw.BreakerOpen, RetryAt: now.Add(7 * time.Second), Opened: 2},
		{Vendor: "openai", Breaker: gw.BreakerClosed, Keys: []gw.KeyHealth{
			{Name: "1", Breaker: gw.BreakerClosed, InFlight: 3},
			{Name: "2", Breaker: gw.BreakerClosed, Out: true, Reason: "the vendor answered 401"},
			{Name: "3", Breaker: gw.BreakerClosed, RestUntil: now.Add(20 * time.Second)},
		}},
	}, now)
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := pages["accounts"].ExecuteTemplate(&b, "vendors", rows); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<span class="badge bad">open</span> <span class="muted">probe in 7s; opened 2x since start</span>`,
		`key 1: ok, 3 in flight`,
		`title="the vendor answered 401">key 2: out`,
		`title="429: back in 20s">key 3: resting`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("panel lacks %q:\n%s", want, html)
		}
	}
	b.Reset()
	if err := pages["accounts"].ExecuteTemplate(&b, "vendors", []vendorRow(nil)); err != nil || strings.TrimSpace(b.String()) != "" {
		t.Fatalf("empty panel rendered %q (%v)", b.String(), err)
	}
}
