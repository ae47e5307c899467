package storetest

import (
	"crypto/sha256"
	"reflect"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Guard checks the gw.GuardStore contract on a fresh, empty store:
// policies per key and per account, incident texts and reviews, and the
// allow list a false positive adds to (and a confirmation takes off).
func Guard(t *testing.T, s gw.Store) {
	gs := s
	ctx := t.Context()
	a := account(t, s, "guarded", 0)
	b := account(t, s, "other", 0)
	k := &gw.Key{ID: "key_guard", AccountID: a.ID, Hint: "gwk_…x"}
	if err := s.CreateKey(ctx, k, hash("guard-secret")); err != nil {
		t.Fatal(err)
	}

	if kp, ap, err := gs.GuardPolicies(ctx, k.ID, a.ID); err != nil || kp != nil || ap != nil {
		t.Fatalf("no policies yet: %v %v %v", kp, ap, err)
	}
	pk := gw.GuardPolicy{Mode: gw.GuardMonitor, Scope: "tools", UserThreshold: 0.8, ToolThreshold: 0.95}
	pa := gw.GuardPolicy{Mode: gw.GuardBlock, Scope: "user", AssistantThreshold: 0.99}
	if err := gs.SetGuardPolicy(ctx, "key", k.ID, pk); err != nil {
		t.Fatal(err)
	}
	if err := gs.SetGuardPolicy(ctx, "account", a.ID, pa); err != nil {
		t.Fatal(err)
	}
	kp, ap, err := gs.GuardPolicies(ctx, k.ID, a.ID)
	if err != nil || kp == nil || ap == nil || *kp != pk || *ap != pa {
		t.Fatalf("policies = %+v %+v %v, want %+v %+v", kp, ap, err, pk, pa)
	}
	pk.Mode = gw.GuardOff
	if err := gs.SetGuardPolicy(ctx, "key", k.ID, pk); err != nil {
		t.Fatal(err)
	}
	if kp, _, _ := gs.GuardPolicies(ctx, k.ID, a.ID); kp == nil || kp.Mode != gw.GuardOff {
		t.Errorf("updated key policy = %+v", kp)
	}
	if _, ap, _ := gs.GuardPolicies(ctx, k.ID, b.ID); ap != nil {
		t.Errorf("another account sees a policy: %+v", ap)
	}
	wantNotFound(t, "policy of an unknown key", gs.SetGuardPolicy(ctx, "key", "key_nope", pk))
	wantNotFound(t, "policy of an unknown account", gs.SetGuardPolicy(ctx, "account", "acct_nope", pk))
	if err := gs.SetGuardPolicy(ctx, "team", a.ID, pk); err == nil {
		t.Error("subject team accepted")
	}

	text := "what is a system prompt?"
	h := sha256.Sum256([]byte(text))
	in := &gw.Incident{RequestID: "req_g1", AccountID: a.ID, KeyID: k.ID, Kind: "extraction", Score: 0.91, Reason: "r", Excerpt: "What is a system prompt?"}
	in2 := &gw.Incident{RequestID: "req_g2", AccountID: a.ID, KeyID: k.ID, Kind: "jailbreak", Score: 0.97, Reason: "r2", Excerpt: "excerpt only"}
	for _, x := range []*gw.Incident{in, in2} {
		if err := s.CreateIncident(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := gs.SetIncidentText(ctx, gw.IncidentText{IncidentID: in.ID, AccountID: a.ID, Hash: h, Text: "What is a system prompt?"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := gs.GuardAllowed(ctx, a.ID, h); err != nil || ok {
		t.Fatalf("allowed before review: %v %v", ok, err)
	}
	if err := gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: in.ID, Verdict: gw.ReviewFalsePositive, Note: "a question"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := gs.GuardAllowed(ctx, a.ID, h); err != nil || !ok {
		t.Errorf("not allowed after a false positive: %v %v", ok, err)
	}
	if ok, _ := gs.GuardAllowed(ctx, b.ID, h); ok {
		t.Error("the allow list leaks to another account")
	}
	if err := gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: in2.ID, Verdict: gw.ReviewConfirmed}); err != nil {
		t.Fatal(err)
	}
	revs, err := gs.IncidentReviews(ctx, []string{in.ID, in2.ID, "inc_nope"})
	if err != nil || len(revs) != 2 || revs[in.ID].Verdict != gw.ReviewFalsePositive || revs[in.ID].Note != "a question" || revs[in2.ID].Verdict != gw.ReviewConfirmed {
		t.Errorf("reviews = %+v, %v", revs, err)
	}
	all, err := gs.ReviewedIncidents(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("reviewed = %+v, %v", all, err)
	}
	byID := map[string]gw.ReviewedIncident{}
	for _, ri := range all {
		byID[ri.ID] = ri
	}
	if got := byID[in.ID]; got.Text != "What is a system prompt?" || got.Review.Verdict != gw.ReviewFalsePositive || !reflect.DeepEqual(got.Incident.Excerpt, in.Excerpt) {
		t.Errorf("reviewed %s = %+v", in.ID, got)
	}
	if got := byID[in2.ID]; got.Text != "excerpt only" {
		t.Errorf("an incident without text exports its excerpt: %+v", got)
	}
	// Confirming the false positive after all takes the text off the list.
	if err := gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: in.ID, Verdict: gw.ReviewConfirmed}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := gs.GuardAllowed(ctx, a.ID, h); ok {
		t.Error("still allowed after confirmation")
	}
	wantNotFound(t, "review of an unknown incident", gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: "inc_nope", Verdict: gw.ReviewConfirmed}))
	if err := gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: in.ID, Verdict: "maybe"}); err == nil {
		t.Error("verdict maybe accepted")
	}
}
