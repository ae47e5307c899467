package e2e

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
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
	readAll(t, e.submit(t, client, "/dashboard/signin", url.Values{"key": {e.key}}).Body)
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

// TestMetricsEndpoint: with GATEWAY_METRICS_ADDR set, /metrics on that
// listener counts the gateway's requests by vendor and status.
func TestMetricsEndpoint(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.MetricsAddr = "127.0.0.1:0" })
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi [fake:cache]", false, ""))
	readAll(t, resp.Body)
	resp = e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "[fake:status=429]", false, ""))
	readAll(t, resp.Body)
	m, err := http.Get("http://" + e.m.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := string(readAll(t, m.Body))
	for _, want := range []string{
		`gateway_requests_total{endpoint="chat_completions",error="",status="200",vendor="openai"} 1`,
		`gateway_requests_total{endpoint="chat_completions",error="rate_limited",status="429",vendor="openai"} 1`,
		`gateway_tokens_total{bucket="cache_read",vendor="openai"}`,
		`gateway_guard_verdicts_total{verdict="pass"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, nativeModels["openai"]) {
		t.Error("metrics carry a model label (unbounded series)")
	}
}

// signIn signs in to the dashboard with secret (a key or the admin
// token) and returns a client holding the session.
func (e *env) signIn(t *testing.T, secret string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	readAll(t, e.submit(t, client, "/dashboard/signin", url.Values{"key": {secret}}).Body)
	return client
}

// submit posts a dashboard form with client as a browser on the
// dashboard's own page does (the same Origin).
func (e *env) submit(t *testing.T, client *http.Client, path string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// page is a dashboard page client reads; the test fails unless it is
// served with 200.
func (e *env) page(t *testing.T, client *http.Client, path string) string {
	t.Helper()
	r, err := client.Get(e.url + path)
	if err != nil {
		t.Fatal(err)
	}
	b := string(readAll(t, r.Body))
	if r.StatusCode != 200 {
		t.Fatalf("%s: %d", path, r.StatusCode)
	}
	return b
}
