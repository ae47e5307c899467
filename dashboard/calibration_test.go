package dashboard

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Issue 46 item 4: the directive's calibration calls (the gateway's own,
// no account) and their cost are on the operator's activity page.
func TestActivityShowsCalibration(t *testing.T) {
	fx := newFixture(t)
	for i, id := range []string{"req_calib_1", "req_calib_2"} {
		fx.store.add(gw.Record{RequestID: id, Endpoint: gw.ShapeC, Vendor: "groq", Model: "llama-3.3-70b-versatile", Status: 200,
			CreatedAt: testNow.Add(-time.Duration(i+1) * time.Second), Usage: gw.Usage{InputTokens: 60, OutputTokens: 16, Reported: true},
			Cost: 4_804, Guard: "off", Note: "optimizer_calibration"})
	}
	if act := fx.page("/dashboard/activity", fx.session(adminToken)); !strings.Contains(act, "directive calibration 2 calls") {
		t.Errorf("the admin's activity lacks the calibration calls")
	}
}
