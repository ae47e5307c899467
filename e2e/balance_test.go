package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/server"
)

// GET /v1/balance answers the calling key's money, spend and limits, with
// either header form of the key, and refuses a missing or wrong key.
func TestBalanceEndpoint(t *testing.T) {
	e := newEnv(t)
	get := func(hdr, val string) (*http.Response, server.BalanceResponse) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/balance", nil)
		if hdr != "" {
			req.Header.Set(hdr, val)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b server.BalanceResponse
		_ = json.Unmarshal(readAll(t, resp.Body), &b)
		return resp, b
	}
	resp, before := get("Authorization", "Bearer "+e.key)
	if resp.StatusCode != http.StatusOK || before.Object != "balance" || before.AccountID != e.acct || before.Balance != (100*gw.USD).USDString() ||
		before.SpendToday != "0.00000000" || before.Key.RPM != 600 || before.Key.TPM != 2_000_000 {
		t.Fatalf("status %d, body %+v", resp.StatusCode, before)
	}
	chat := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "Hello", false, ""))
	readAll(t, chat.Body)
	if chat.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d", chat.StatusCode)
	}
	recs, err := e.m.Store().Records(t.Context(), gw.RecordFilter{AccountID: e.acct})
	if err != nil || len(recs) != 1 || recs[0].Charge <= 0 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	charge := recs[0].Charge
	_, after := get("X-Api-Key", e.key)
	if after.SpendToday != charge.USDString() || after.SpendThisMonth != charge.USDString() || after.Balance != (100*gw.USD-charge).USDString() || after.Held != "0.00000000" {
		t.Fatalf("after one request charged %s: %+v", charge.USDString(), after)
	}
	if resp, _ := get("", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", resp.StatusCode)
	}
	if resp, _ := get("Authorization", "Bearer gwk_wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong key: %d, want 401", resp.StatusCode)
	}
	post := e.post("/v1/balance", e.key, nil)
	readAll(t, post.Body)
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", post.StatusCode)
	}
}
