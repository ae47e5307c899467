package e2e

import (
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
	adm := e.signIn(t, testAdminToken)
	r := e.submit(t, adm, "/dashboard/keys/"+keyID+"/run-defaults", url.Values{"budget_usd": {"3"}, "max_requests": {"2"}, "idle": {"30m"}})
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
	customer := e.signIn(t, e.key)
	list := e.page(t, customer, "/dashboard/runs")
	if !strings.Contains(list, `href="/dashboard/runs/defaulted"`) || !strings.Contains(list, "step limit") {
		t.Errorf("runs page lacks the run or its state")
	}
	detail := e.page(t, customer, "/dashboard/runs/defaulted")
	for _, want := range []string{"Where the money went", "openai/" + nativeModels["openai"], "<polyline"} {
		if !strings.Contains(detail, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	csv := e.page(t, customer, "/dashboard/runs/defaulted.csv")
	if n := strings.Count(strings.TrimSpace(csv), "\n"); n != 2 {
		t.Errorf("csv has %d steps, want 2:\n%s", n, csv)
	}
}
