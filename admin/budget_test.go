package admin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/sqlite"
)

// Budgets over the admin API: set on a key at its creation and on an
// account, shown with the period's spend and what remains, cleared with
// "0", and refused when not an amount.
func TestBudgetsOverTheAPI(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 11, 26, 15, 30, 0, 0, time.UTC)
	token := strings.Repeat("t", admin.MinTokenLen)
	h, err := admin.NewHandler(&admin.Local{Store: db, Now: func() time.Time { return now }}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &admin.Client{BaseURL: srv.URL, Token: token}

	if _, err := c.TopUp(ctx, "acme", admin.TopUpRequest{AmountUSD: "1"}); err == nil {
		t.Fatal("top-up of an unknown account")
	}
	if _, err := c.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopUp(ctx, "acme", admin.TopUpRequest{AmountUSD: "1"}); err != nil {
		t.Fatal(err)
	}
	k, err := c.CreateKey(ctx, admin.KeyRequest{Account: "acme", DailyBudgetUSD: "0.01", MonthlyBudgetUSD: "0.25"})
	if err != nil {
		t.Fatal(err)
	}
	if k.Budgets == nil || k.Budgets.Daily == nil || k.Budgets.Daily.BudgetUSD != "0.01000000" || k.Budgets.Monthly.BudgetUSD != "0.25000000" {
		t.Fatalf("created key budgets = %+v", k.Budgets)
	}
	// A request of the key charged 0.3 cents today (300,000 micro-cents),
	// and one in flight holds 0.2 cents.
	if err := db.PlaceHold(ctx, gw.Hold{ID: "req_1", AccountID: k.AccountID, KeyID: k.ID, Amount: 400_000, ExpiresAt: time.Now().Add(time.Hour), At: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.Settle(ctx, "req_1", &gw.Record{Status: 200, Charge: 300_000, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.PlaceHold(ctx, gw.Hold{ID: "req_2", AccountID: k.AccountID, KeyID: k.ID, Amount: 200_000, ExpiresAt: time.Now().Add(time.Hour), At: now}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Key(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := admin.BudgetStatus{BudgetUSD: "0.01000000", SpentUSD: "0.00300000", HeldUSD: "0.00200000", RemainingUSD: "0.00500000",
		ResetsAt: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	if got.Budgets == nil || *got.Budgets.Daily != want {
		t.Errorf("daily = %+v, want %+v", got.Budgets.Daily, want)
	}
	if m := got.Budgets.Monthly; m.RemainingUSD != "0.24500000" || !m.ResetsAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("monthly = %+v", m)
	}
	// Clear the daily cap; the monthly stays.
	zero := "0"
	up, err := c.UpdateKey(ctx, k.ID, admin.KeyUpdate{DailyBudgetUSD: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if up.Budgets == nil || up.Budgets.Daily != nil || up.Budgets.Monthly == nil {
		t.Errorf("after clearing the daily cap: %+v", up.Budgets)
	}
	// The account's budget, over all its keys.
	five := "5"
	a, err := c.UpdateAccount(ctx, "acme", admin.AccountUpdate{DailyBudgetUSD: &five})
	if err != nil {
		t.Fatal(err)
	}
	if a.Budgets == nil || a.Budgets.Monthly != nil || a.Budgets.Daily.RemainingUSD != "4.99500000" {
		t.Errorf("account budgets = %+v", a.Budgets)
	}
	// Raw JSON: null where no cap is set.
	req, _ := http.NewRequest("GET", srv.URL+"/admin/v1/keys/"+k.ID, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	json.NewDecoder(resp.Body).Decode(&raw)
	resp.Body.Close()
	if !strings.Contains(string(raw["budgets"]), `"daily":null`) {
		t.Errorf("budgets JSON %s, want daily null", raw["budgets"])
	}
	for _, bad := range []string{"-1", "0.000000001", "lots", ""} {
		if _, err := c.UpdateKey(ctx, k.ID, admin.KeyUpdate{MonthlyBudgetUSD: &bad}); gw.ErrorCode(err) != gw.CodeInvalidRequest {
			t.Errorf("monthly_budget_usd %q: %v, want invalid_request", bad, err)
		}
	}
	if _, err := c.UpdateAccount(ctx, "acme", admin.AccountUpdate{}); gw.ErrorCode(err) != gw.CodeInvalidRequest {
		t.Errorf("empty account update: %v", err)
	}
	// A guard policy and a budget in one update: both set, both shown.
	ten := "10"
	a, err = c.UpdateAccount(ctx, "acme", admin.AccountUpdate{Guard: &admin.GuardPolicy{Mode: "monitor"}, MonthlyBudgetUSD: &ten})
	if err != nil {
		t.Fatal(err)
	}
	if a.Guard == nil || a.Guard.Mode != "monitor" || a.Budgets == nil || a.Budgets.Daily == nil || a.Budgets.Monthly == nil ||
		a.Budgets.Monthly.BudgetUSD != "10.00000000" {
		t.Errorf("guard and budget update: guard %+v budgets %+v", a.Guard, a.Budgets)
	}
}
