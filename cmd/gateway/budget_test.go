package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/server"
)

// A key's daily budget set through the admin API of the running gateway:
// once the day's charges reach it, every endpoint, streamed or not,
// answers 402 in its own error envelope naming the budget, its amount
// and when it resets; GET /v1/balance shows what remains; clearing the
// budget lets requests through again.
func TestBudgetRefusesOnEveryEndpoint(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AdminToken = testAdminToken })
	ctx := t.Context()
	c := &admin.Client{BaseURL: e.url, Token: testAdminToken}
	keys, err := c.Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %+v, %v", keys, err)
	}
	keyID := keys[0].ID
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
	if r := runCLI(t, "", e.url, "keys", "update", keyID, "--daily-budget-usd", budget); r.status != 0 {
		t.Fatalf("keys update: %d %s", r.status, r.stderr)
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
	if r := runCLI(t, "", e.url, "keys", "update", keyID, "--daily-budget-usd", "0"); r.status != 0 {
		t.Fatalf("keys update: %d %s", r.status, r.stderr)
	}
	again := e.post("/v1/chat/completions", e.key, chatBody(model, "Hello", false, `,"max_tokens":16`))
	readAll(t, again.Body)
	if again.StatusCode != http.StatusOK {
		t.Errorf("after clearing the budget: %d", again.StatusCode)
	}
}
