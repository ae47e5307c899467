package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/server"
)

// budgetEnv is a gateway with the admin API on, an admin client for it
// and the id of its one key.
func budgetEnv(t *testing.T) (*env, *admin.Client, string) {
	t.Helper()
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	c := &admin.Client{BaseURL: e.url, Token: testAdminToken}
	keys, err := c.Keys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %+v, %v", keys, err)
	}
	return e, c, keys[0].ID
}

// A key's daily budget set through the admin API of the running gateway:
// once the day's charges reach it, every endpoint, streamed or not,
// answers 402 in its own error envelope naming the budget, its amount
// and when it resets; GET /v1/balance shows what remains; clearing the
// budget lets requests through again.
func TestBudgetRefusesOnEveryEndpoint(t *testing.T) {
	e, _, keyID := budgetEnv(t)
	ctx := t.Context()
	model := "openai/" + nativeModels["openai"]
	first := e.post("/v1/chat/completions", e.key, chatBody(model, "Hello", false, `,"max_tokens":16`))
	readAll(t, first.Body)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d", first.StatusCode)
	}
	recs, err := e.m.Store().Records(ctx, gw.RecordFilter{AccountID: e.acct})
	if err != nil || len(recs) != 1 || recs[0].Charge <= 0 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	charge := recs[0].Charge
	// The day's budget is what the first request was charged: nothing
	// remains, and any request (its hold is never 0) is refused.
	budget := charge.USDString()
	if r := runCLI(t, "", e.url, "keys", "update", keyID, "--daily-budget-usd", budget); r.Status != 0 {
		t.Fatalf("keys update: %d %s", r.Status, r.Stderr)
	}
	for _, req := range []struct {
		path string
		body []byte
		hdr  []string
	}{
		{"/v1/chat/completions", chatBody(model, "Hello", false, `,"max_tokens":16`), nil},
		{"/v1/chat/completions", chatBody(model, "Hello", true, `,"max_tokens":16`), nil},
		{"/v1/messages", messagesBody("anthropic/claude-sonnet-5-5", "Hello", true, ""), []string{"anthropic-version", "2023-06-01"}},
		{"/v1/responses", []byte(`{"model":"` + model + `","input":"Hello","max_output_tokens":16,"stream":true}`), nil},
	} {
		resp := e.post(req.path, e.key, req.body, req.hdr...)
		raw := readAll(t, resp.Body)
		var env struct {
			Type  string `json:"type"`
			Error struct {
				Type    string  `json:"type"`
				Message string  `json:"message"`
				Code    *string `json:"code"`
				Details struct {
					ErrorCode string `json:"error_code"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode != http.StatusPaymentRequired {
			t.Errorf("%s: %d %s, want 402", req.path, resp.StatusCode, raw)
			continue
		}
		msg := env.Error.Message
		if env.Error.Type != "insufficient_balance" || env.Error.Details.ErrorCode != gw.ErrorCodeBudgetExceeded ||
			!strings.Contains(msg, "daily budget of this key reached: $"+budget+" a day") || !strings.Contains(msg, "resets at ") {
			t.Errorf("%s: envelope %s", req.path, raw)
		}
		if req.path == "/v1/messages" && env.Type != "error" {
			t.Errorf("messages: no top-level type: %s", raw)
		}
		if req.path == "/v1/responses" && (env.Error.Code == nil || *env.Error.Code != gw.ErrorCodeBudgetExceeded) {
			t.Errorf("responses: code %v", env.Error.Code)
		}
	}
	bal := e.get("/v1/balance", e.key)
	var b server.BalanceResponse
	if err := json.Unmarshal(readAll(t, bal.Body), &b); err != nil {
		t.Fatal(err)
	}
	kd := b.Budgets.KeyDaily
	if kd == nil || kd.Budget != budget || kd.Spent != budget || kd.Held != "0.00000000" || kd.Remaining != "0.00000000" ||
		b.Budgets.KeyMonthly != nil || b.Budgets.AccountDaily != nil || b.Budgets.AccountMonthly != nil {
		t.Errorf("balance budgets %+v (key daily %+v)", b.Budgets, kd)
	}
	// Cleared: served again.
	if r := runCLI(t, "", e.url, "keys", "update", keyID, "--daily-budget-usd", "0"); r.Status != 0 {
		t.Fatalf("keys update: %d %s", r.Status, r.Stderr)
	}
	again := e.post("/v1/chat/completions", e.key, chatBody(model, "Hello", false, `,"max_tokens":16`))
	readAll(t, again.Body)
	if again.StatusCode != http.StatusOK {
		t.Errorf("after clearing the budget: %d", again.StatusCode)
	}
}

// The dashboard shows budgets: the customer's activity page what remains
// of its key's and its account's, exactly on hover; the administrator's
// accounts page each key's and account's, and its form sets a key's.
func TestDashboardShowsBudgets(t *testing.T) {
	e, c, keyID := budgetEnv(t)
	ctx := t.Context()
	daily, monthly := "0.01", "1"
	if _, err := c.UpdateKey(ctx, keyID, admin.KeyUpdate{DailyBudgetUSD: &daily}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateAccount(ctx, e.acct, admin.AccountUpdate{MonthlyBudgetUSD: &monthly}); err != nil {
		t.Fatal(err)
	}
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`))
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("request: %d", resp.StatusCode)
	}
	recs, err := e.m.Store().Records(ctx, gw.RecordFilter{AccountID: e.acct})
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	charge := recs[0].Charge
	customer := e.signIn(t, e.key)
	act := e.page(t, customer, "/dashboard/activity")
	keyLeft := (1_000_000 - charge).USDString()
	acctLeft := (gw.USD - charge).USDString()
	for _, want := range []string{`aria-label="Budgets"`, "daily budget", `title="$` + keyLeft + `"`, "Account monthly budget", `title="$` + acctLeft + `"`} {
		if !strings.Contains(act, want) {
			t.Errorf("activity page lacks %q", want)
		}
	}
	adm := e.signIn(t, testAdminToken)
	accts := e.page(t, adm, "/dashboard/accounts")
	for _, want := range []string{"left of $0.0100 a day", "left of $1.0000 a month", `action="/dashboard/keys/` + keyID + `/budget"`} {
		if !strings.Contains(accts, want) {
			t.Errorf("accounts page lacks %q", want)
		}
	}
	r := e.submit(t, adm, "/dashboard/keys/"+keyID+"/budget", url.Values{"monthly_budget_usd": {"2"}})
	body := string(readAll(t, r.Body))
	if r.StatusCode != 200 || !strings.Contains(body, "Budgets of "+keyID+": ") || !strings.Contains(body, "left of $2.0000 a month") {
		t.Errorf("set key budget: %d", r.StatusCode)
	}
	k, err := c.Key(ctx, keyID)
	if err != nil || k.Budgets == nil || k.Budgets.Monthly == nil || k.Budgets.Monthly.BudgetUSD != "2.00000000" || k.Budgets.Daily == nil {
		t.Errorf("key budgets after the form: %+v, %v", k, err)
	}
}
