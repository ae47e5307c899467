package main

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// TestDashboardThroughGateway: the dashboard is served by the gateway; a
// key signs in and sees its own requests, and nothing of another account.
func TestDashboardThroughGateway(t *testing.T) {
	e := newEnv(t)
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	mine := resp.Header.Get("X-Gateway-Request-Id")
	other, _, err := createKey(t.Context(), e.m.Store(), "someone-else", 100*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	resp = e.post("/v1/chat/completions", other, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	theirs := resp.Header.Get("X-Gateway-Request-Id")

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	page, err := client.Get(e.url + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	if body := string(readAll(t, page.Body)); page.StatusCode != 200 || !strings.Contains(body, "<form") {
		t.Fatalf("sign-in page: %d", page.StatusCode)
	}
	req, _ := http.NewRequest("POST", e.url+"/dashboard/signin", strings.NewReader(url.Values{"key": {e.key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	signed, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, signed.Body)
	logs, err := client.Get(e.url + "/dashboard/logs")
	if err != nil {
		t.Fatal(err)
	}
	body := string(readAll(t, logs.Body))
	if logs.StatusCode != 200 || !strings.Contains(body, mine) {
		t.Fatalf("logs page (%d) lacks the account's request %s", logs.StatusCode, mine)
	}
	if strings.Contains(body, theirs) {
		t.Fatal("logs page shows another account's request")
	}
	act, err := client.Get(e.url + "/dashboard/activity")
	if err != nil {
		t.Fatal(err)
	}
	if b := string(readAll(t, act.Body)); act.StatusCode != 200 || !strings.Contains(b, "<svg") {
		t.Fatalf("activity page: %d", act.StatusCode)
	}
}
