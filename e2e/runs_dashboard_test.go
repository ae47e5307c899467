package e2e

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/runs"
)

// TestRunDefaultsAndRunsPage: the administrator sets a key's run
// defaults with the accounts page's form; a run the key starts without
// caps takes them (its third step refused at the default step cap); the
// customer's Runs page lists the run and its page shows where its money
// went, its CSV one row per step.
func TestRunDefaultsAndRunsPage(t *testing.T) {
	e, _, keyID := budgetEnv(t)
	signIn := func(secret string) *http.Client {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		req, _ := http.NewRequest("POST", e.url+"/dashboard/signin", strings.NewReader(url.Values{"key": {secret}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.url)
		r, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, r.Body)
		return client
	}
	page := func(client *http.Client, path string) string {
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
	adm := signIn(testAdminToken)
	req, _ := http.NewRequest("POST", e.url+"/dashboard/keys/"+keyID+"/run-defaults", strings.NewReader(url.Values{"budget_usd": {"3"}, "max_requests": {"2"}, "idle": {"30m"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	r, err := adm.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := string(readAll(t, r.Body)); r.StatusCode != 200 || !strings.Contains(body, "Run defaults of "+keyID+": $3.0000 a run, 2 steps, idle 30m0s.") {
		t.Fatalf("set run defaults: %d %s", r.StatusCode, body)
	}
	body := chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`)
	for i := range 3 {
		resp := e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "defaulted")
		readAll(t, resp.Body)
		if want := map[bool]int{true: 200, false: 402}[i < 2]; resp.StatusCode != want {
			t.Fatalf("step %d: %d, want %d", i, resp.StatusCode, want)
		}
		if i == 0 && resp.Header.Get(runs.HeaderRemaining) == "" {
			t.Error("a run with the default budget: no remaining header")
		}
	}
	run, err := e.m.Store().(gw.RunStore).Run(t.Context(), e.acct, "defaulted")
	if err != nil || run.Budget != 3*gw.USD || run.MaxRequests != 2 || run.Idle.Minutes() != 30 {
		t.Fatalf("run %+v %v", run, err)
	}
	customer := signIn(e.key)
	list := page(customer, "/dashboard/runs")
	if !strings.Contains(list, `href="/dashboard/runs/defaulted"`) || !strings.Contains(list, "step limit") {
		t.Errorf("runs page lacks the run or its state")
	}
	detail := page(customer, "/dashboard/runs/defaulted")
	for _, want := range []string{"Where the money went", "openai/" + nativeModels["openai"], "<polyline"} {
		if !strings.Contains(detail, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	csv := page(customer, "/dashboard/runs/defaulted.csv")
	if n := strings.Count(strings.TrimSpace(csv), "\n"); n != 2 {
		t.Errorf("csv has %d steps, want 2:\n%s", n, csv)
	}
}
