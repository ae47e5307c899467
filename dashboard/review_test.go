package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// guardFake adds the gw.GuardStore methods the dashboard uses to the
// fake store.
type guardFake struct {
	*fakeStore
	mu       sync.Mutex
	reviews  map[string]gw.IncidentReview
	policies map[string]gw.GuardPolicy // "key:ID", "account:ID"
}

func (g *guardFake) SetGuardPolicy(_ context.Context, subject, id string, p gw.GuardPolicy) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.policies[subject+":"+id] = p
	return nil
}

func (g *guardFake) GuardPolicies(_ context.Context, keyID, accountID string) (*gw.GuardPolicy, *gw.GuardPolicy, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var k, a *gw.GuardPolicy
	if p, ok := g.policies["key:"+keyID]; ok {
		k = &p
	}
	if p, ok := g.policies["account:"+accountID]; ok {
		a = &p
	}
	return k, a, nil
}

func (g *guardFake) SetIncidentText(context.Context, gw.IncidentText) error { return nil }

func (g *guardFake) ReviewIncident(ctx context.Context, r gw.IncidentReview) error {
	all, _ := g.Incidents(ctx, 1000)
	found := false
	for _, in := range all {
		found = found || in.ID == r.IncidentID
	}
	if !found {
		return gw.ErrNotFound
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r.ReviewedAt = testNow
	g.reviews[r.IncidentID] = r
	return nil
}

func (g *guardFake) IncidentReviews(_ context.Context, ids []string) (map[string]gw.IncidentReview, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]gw.IncidentReview{}
	for _, id := range ids {
		if r, ok := g.reviews[id]; ok {
			out[id] = r
		}
	}
	return out, nil
}

func (g *guardFake) ReviewedIncidents(context.Context) ([]gw.ReviewedIncident, error) {
	return nil, nil
}

func (g *guardFake) GuardAllowed(context.Context, string, [32]byte) (bool, error) { return false, nil }

func TestIncidentReviewButtons(t *testing.T) {
	fx := newFixture(t)
	gf := &guardFake{fakeStore: fx.store, reviews: map[string]gw.IncidentReview{}, policies: map[string]gw.GuardPolicy{}}
	var err error
	fx.d, err = New(Config{Store: gf, AdminToken: adminToken, Now: func() time.Time { return fx.now }})
	if err != nil {
		t.Fatal(err)
	}
	_ = fx.store.CreateIncident(t.Context(), &gw.Incident{ID: "inc_alpha", RequestID: "req_alpha_01", AccountID: "acc_alpha", KeyID: "key_alpha", Kind: "extraction", Score: 0.93, Excerpt: "What is a system prompt?", CreatedAt: testNow.Add(-time.Minute)})
	_ = gf.SetGuardPolicy(t.Context(), "account", "acc_alpha", gw.GuardPolicy{Mode: gw.GuardMonitor})
	_ = gf.SetGuardPolicy(t.Context(), "key", "key_alpha", gw.GuardPolicy{Scope: "tools", ToolThreshold: 0.95})

	admin, customer := fx.session(adminToken), fx.session(alphaKey)
	page := fx.page("/dashboard/incidents?account=acc_alpha", admin)
	for _, want := range []string{`action="/dashboard/incidents/inc_alpha/review"`, `value="false-positive"`, `value="confirmed"`, "not reviewed", ">monitor<", "tool 0.95"} {
		if !strings.Contains(page, want) {
			t.Errorf("admin's incidents page lacks %q", want)
		}
	}
	if cp := fx.page("/dashboard/incidents", customer); strings.Contains(cp, "/review") || !strings.Contains(cp, ">monitor<") {
		t.Error("a customer gets review buttons, or does not see the key's policy")
	}

	post := func(c *http.Cookie, site string, form url.Values) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, "/dashboard/incidents/inc_alpha/review", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		req.AddCookie(c)
		return fx.serve(req).Result()
	}
	form := url.Values{"verdict": {"false-positive"}, "note": {"a question about prompts"}, "account": {"acc_alpha"}}
	if r := post(admin, "cross-site", form); r.StatusCode != http.StatusForbidden || len(gf.reviews) != 0 {
		t.Errorf("cross-site review: status %d, reviews %v", r.StatusCode, gf.reviews)
	}
	if r := post(customer, "same-origin", form); r.StatusCode != http.StatusForbidden || len(gf.reviews) != 0 {
		t.Errorf("customer review: status %d, reviews %v", r.StatusCode, gf.reviews)
	}
	if r := post(admin, "same-origin", url.Values{"verdict": {"maybe"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("verdict maybe: status %d", r.StatusCode)
	}
	r := post(admin, "same-origin", form)
	if r.StatusCode != http.StatusSeeOther || !strings.HasSuffix(r.Header.Get("Location"), "/dashboard/incidents?account=acc_alpha#inc_alpha") {
		t.Fatalf("review: status %d, location %q", r.StatusCode, r.Header.Get("Location"))
	}
	if got := gf.reviews["inc_alpha"]; got.Verdict != gw.ReviewFalsePositive || got.Note != "a question about prompts" {
		t.Errorf("stored review %+v", got)
	}
	if page := fx.page("/dashboard/incidents?account=acc_alpha", admin); !strings.Contains(page, ">false-positive<") || !strings.Contains(page, "a question about prompts") {
		t.Error("the page does not show the review")
	}
	req, _ := http.NewRequest(http.MethodPost, "/dashboard/incidents/inc_nope/review", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(admin)
	if w := fx.serve(req); w.Code != http.StatusNotFound {
		t.Errorf("unknown incident: status %d", w.Code)
	}
}

// A customer sees the verdict of a review, never support's note; the
// administrator sees both.
func TestReviewNoteIsSupportsOnly(t *testing.T) {
	fx := newFixture(t)
	gf := &guardFake{fakeStore: fx.store, reviews: map[string]gw.IncidentReview{}, policies: map[string]gw.GuardPolicy{}}
	var err error
	fx.d, err = New(Config{Store: gf, AdminToken: adminToken, Now: func() time.Time { return fx.now }})
	if err != nil {
		t.Fatal(err)
	}
	_ = fx.store.CreateIncident(t.Context(), &gw.Incident{ID: "inc_alpha", RequestID: "req_alpha_01", AccountID: "acc_alpha", KeyID: "key_alpha", Kind: "extraction", Score: 0.93, Excerpt: "What is a system prompt?", CreatedAt: testNow.Add(-time.Minute)})
	note := "customer probes for the prompt; watch the account"
	if err := gf.ReviewIncident(t.Context(), gw.IncidentReview{IncidentID: "inc_alpha", Verdict: gw.ReviewConfirmed, Note: note}); err != nil {
		t.Fatal(err)
	}
	customer := fx.page("/dashboard/incidents", fx.session(alphaKey))
	if !strings.Contains(customer, ">confirmed<") || strings.Contains(customer, note) {
		t.Errorf("the customer's incidents page: verdict shown %v, note shown %v", strings.Contains(customer, ">confirmed<"), strings.Contains(customer, note))
	}
	if admin := fx.page("/dashboard/incidents?account=acc_alpha", fx.session(adminToken)); !strings.Contains(admin, note) {
		t.Error("the administrator does not see the note")
	}
}
