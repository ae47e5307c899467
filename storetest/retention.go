package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// RefusedRetention checks SweepRefused: A's flood of blocked requests
// (old and recent incidents and refused records) is cut to the newest
// perAccount of each and nothing older than the retention; B's rows,
// A's charged or successful records and reviewed incidents stay.
func RefusedRetention(t *testing.T, s gw.Store) {
	rs, ok := s.(gw.RefusedSweeper)
	if !ok {
		t.Fatal("the store does not sweep refused requests' rows")
	}
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-40 * 24 * time.Hour)
	inc := func(acct string, i int, at time.Time) string {
		id := fmt.Sprintf("inc_%s_%03d", acct, i)
		if err := s.CreateIncident(ctx, &gw.Incident{ID: id, RequestID: "req_" + id, AccountID: acct, KeyID: "key_" + acct, Kind: "extraction", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetIncidentText(ctx, gw.IncidentText{IncidentID: id, AccountID: acct, Text: "x"}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	rec := func(acct string, i, status int, at time.Time) {
		r := &gw.Record{RequestID: fmt.Sprintf("req_%s_r%03d_%d", acct, i, status), AccountID: acct, KeyID: "key_" + acct, Endpoint: gw.ShapeC, Status: status, ErrorCode: gw.CodeRequestBlocked, Guard: "flagged:extraction", CreatedAt: at}
		if status == 200 {
			r.ErrorCode, r.Guard = "", "pass"
		}
		if err := s.Log(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// A's attack: 20 old and 30 recent blocks, one old one reviewed.
	reviewed := inc("acct_a", 0, old)
	if err := s.ReviewIncident(ctx, gw.IncidentReview{IncidentID: reviewed, Verdict: gw.ReviewConfirmed, ReviewedAt: now}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 20; i++ {
		inc("acct_a", i, old.Add(time.Duration(i)*time.Second))
		rec("acct_a", i, 403, old.Add(time.Duration(i)*time.Second))
	}
	for i := 20; i < 50; i++ {
		inc("acct_a", i, now.Add(time.Duration(i-50)*time.Second))
		rec("acct_a", i, 403, now.Add(time.Duration(i-50)*time.Second))
	}
	rec("acct_a", 99, 200, old)
	// B's ordinary traffic, with a few blocks of its own.
	for i := 0; i < 5; i++ {
		inc("acct_b", i, now.Add(-time.Duration(i)*time.Minute))
		rec("acct_b", i, 403, now.Add(-time.Duration(i)*time.Minute))
	}
	n, err := rs.SweepRefused(ctx, now.Add(-30*24*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	// A: 19 old incidents and 20 more past the bound; records alike.
	if n != 19+20+19+20 {
		t.Errorf("swept %d rows, want %d", n, 19+20+19+20)
	}
	a, _ := s.IncidentsOf(ctx, "acct_a", 1000)
	b, _ := s.IncidentsOf(ctx, "acct_b", 1000)
	if len(a) != 11 || len(b) != 5 {
		t.Fatalf("incidents kept: A %d (want its newest 10 and the reviewed one), B %d (want 5)", len(a), len(b))
	}
	kept := map[string]bool{}
	for _, in := range a {
		kept[in.ID] = true
	}
	if !kept[reviewed] || !kept["inc_acct_a_049"] || !kept["inc_acct_a_040"] || kept["inc_acct_a_039"] {
		t.Fatalf("A's incidents kept: %v", kept)
	}
	recs, _ := s.Records(ctx, gw.RecordFilter{AccountID: "acct_a", Limit: 1000})
	ok200, refused := false, 0
	for _, r := range recs {
		if r.Status == 200 {
			ok200 = true
		} else {
			refused++
		}
	}
	if !ok200 || refused != 10 {
		t.Fatalf("A's records: successful kept %v, refused kept %d (want 10)", ok200, refused)
	}
	if recs, _ := s.Records(ctx, gw.RecordFilter{AccountID: "acct_b", Limit: 1000}); len(recs) != 5 {
		t.Fatalf("B's records: %d, want 5", len(recs))
	}
	// Swept again: nothing more.
	if n, err := rs.SweepRefused(ctx, now.Add(-30*24*time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}
}
