package storetest

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// testCutRecordNamesModel: a hold whose lease lapsed becomes the record
// of a request cut by a crash that names the account, key, vendor and
// model the hold was placed for; a live hold makes none.
func testCutRecordNamesModel(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	past := time.Now().Add(-time.Second)
	lapsed := gw.Hold{ID: "req_cut", AccountID: a.ID, KeyID: "key_1", Amount: 300, ExpiresAt: past, Vendor: "openai", Model: "gpt-4o-mini"}
	live := hold("req_live", a.ID, 100)
	live.Vendor, live.Model = "anthropic", "claude-haiku"
	for _, h := range []gw.Hold{lapsed, live} {
		if err := s.PlaceHold(ctx, h); err != nil {
			t.Fatalf("PlaceHold(%s): %v", h.ID, err)
		}
	}
	if n, err := s.ExpireHolds(ctx, time.Now()); err != nil || n != 1 {
		t.Fatalf("ExpireHolds = %d, %v; want 1", n, err)
	}
	recs, err := s.Records(ctx, gw.RecordFilter{AccountID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("records = %+v; want one cut record", recs)
	}
	r := recs[0]
	if r.RequestID != "req_cut:cut" || r.KeyID != "key_1" || r.Vendor != "openai" || r.Model != "gpt-4o-mini" ||
		!strings.HasPrefix(r.Note, "cut_by_crash") || !strings.Contains(r.Note, gw.Money(300).USDString()) {
		t.Errorf("cut record = %+v; want req_cut:cut, key_1, openai/gpt-4o-mini, cut_by_crash with the amount held", r)
	}
	if r.Charge != 0 || r.Cost != 0 {
		t.Errorf("cut record charge %d cost %d; want 0 (nothing debited, vendor cost unknown)", r.Charge, r.Cost)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 100, Available: 900})
}
