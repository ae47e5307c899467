package dashboard

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Issue 38 item 7: the vendor's cost of prompt tokens it reported beyond
// the gateway's bound is shown to the administrator (the record, the
// logs row and the activity's vendor-cost card), never to the customer.
func TestDisputedCostShownToTheAdmin(t *testing.T) {
	fx := newFixture(t)
	r := gw.Record{
		RequestID: "req_alpha_disputed", AccountID: "acc_alpha", KeyID: "key_alpha", Endpoint: gw.ShapeC,
		Vendor: "groq", Model: "llama-3.3-70b-versatile", Status: 200, CreatedAt: testNow.Add(-time.Minute),
		Usage: gw.Usage{InputTokens: 4300, OutputTokens: 5, Reported: true},
		Cost:  254095, DisputedCost: 7_479_543, // $0.07479543
		Guard: "pass", Note: "usage_clamped; usage_disputed: 1000000000000 prompt tokens reported, 4300 charged (the gateway's bound)",
	}
	r.Charge = gw.Charge(r.Cost)
	fx.store.add(r)
	admin := fx.page("/dashboard/logs/req_alpha_disputed", fx.session(adminToken))
	for _, want := range []string{"Disputed vendor cost", "$0.07479543", "7.479543¢"} {
		if !strings.Contains(admin, want) {
			t.Errorf("admin's detail page lacks %q", want)
		}
	}
	if logs := fx.page("/dashboard/logs", fx.session(adminToken)); !strings.Contains(logs, "$0.0748 disputed") {
		t.Error("admin's logs row lacks the disputed cost")
	}
	if act := fx.page("/dashboard/activity?account=acc_alpha", fx.session(adminToken)); !strings.Contains(act, "disputed $0.0748") {
		t.Error("admin's activity lacks the disputed cost")
	}
	c := fx.session(alphaKey)
	for _, page := range []string{"/dashboard/logs/req_alpha_disputed", "/dashboard/logs", "/dashboard/activity"} {
		if body := fx.page(page, c); strings.Contains(body, "$0.0748") || strings.Contains(body, "Disputed vendor cost") {
			t.Errorf("customer's %s shows the disputed cost", page)
		}
	}
}
