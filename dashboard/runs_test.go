package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// runStore is the fake store with runs kept in maps (by account, then
// id).
type runStore struct {
	*fakeStore
	runs  map[string]map[string]gw.Run
	steps map[string]map[string][]gw.RunStep
}

func (s *runStore) HoldRun(context.Context, gw.RunHold) (*gw.Run, error) { return nil, nil }
func (s *runStore) ReleaseRun(context.Context, string, string, string) error {
	return nil
}
func (s *runStore) SettleRun(context.Context, string, string, gw.RunStep, time.Time) (*gw.Run, error) {
	return nil, nil
}
func (s *runStore) SetRunDefaults(context.Context, string, gw.RunCaps) error { return nil }
func (s *runStore) RunDefaults(context.Context, string) (gw.RunCaps, error) {
	return gw.RunCaps{}, nil
}

func (s *runStore) Run(_ context.Context, account, id string) (*gw.Run, error) {
	r, ok := s.runs[account][id]
	if !ok {
		return nil, gw.ErrNotFound
	}
	return &r, nil
}

func (s *runStore) Runs(_ context.Context, account string, _ int) ([]gw.Run, error) {
	var out []gw.Run
	for _, r := range s.runs[account] {
		out = append(out, r)
	}
	return out, nil
}

func (s *runStore) RunSteps(_ context.Context, account, id string, _ int) ([]gw.RunStep, error) {
	return s.steps[account][id], nil
}

func (s *runStore) RunChildren(_ context.Context, account, id string) ([]gw.Run, error) {
	var out []gw.Run
	for _, r := range s.runs[account] {
		if r.ParentID == id {
			out = append(out, r)
		}
	}
	return out, nil
}

// runsFixture: alpha has run "task-alpha" (budget $1, two models, a
// child "task-alpha.sub"), beta a run of the same name as one of alpha's.
func runsFixture(t *testing.T) *fixture {
	fx := newFixture(t)
	at := testNow.Add(-time.Hour)
	rs := &runStore{fakeStore: fx.store,
		runs: map[string]map[string]gw.Run{
			"acc_alpha": {
				"task-alpha":     {AccountID: "acc_alpha", ID: "task-alpha", Budget: gw.USD, Spend: 30 * gw.Cent, Requests: 3, Errors: 1, FirstSeen: at, LastSeen: at.Add(time.Minute)},
				"task-alpha.sub": {AccountID: "acc_alpha", ID: "task-alpha.sub", ParentID: "task-alpha", Spend: 5 * gw.Cent, Requests: 1, FirstSeen: at, LastSeen: at},
				"shared":         {AccountID: "acc_alpha", ID: "shared", Spend: 1, Requests: 1, FirstSeen: at, LastSeen: at},
			},
			"acc_beta": {"shared": {AccountID: "acc_beta", ID: "shared", Spend: 7 * gw.Cent, Requests: 9, FirstSeen: at, LastSeen: at}},
		},
		steps: map[string]map[string][]gw.RunStep{"acc_alpha": {"task-alpha": {
			{RequestID: "req_alpha_s1", Endpoint: gw.ShapeC, Vendor: "openai", Model: "gpt-alpha-model", Status: 200, Charge: 20 * gw.Cent, Usage: gw.Usage{InputTokens: 100, OutputTokens: 50}, Latency: time.Second, CreatedAt: at},
			{RequestID: "req_alpha_s2", Endpoint: gw.ShapeM, Vendor: "anthropic", Model: "claude-alpha", Status: 200, Charge: 5 * gw.Cent, Usage: gw.Usage{InputTokens: 10, OutputTokens: 5}, Attempts: 2, CreatedAt: at.Add(time.Second)},
			{RequestID: "req_alpha_s3", Endpoint: gw.ShapeC, Vendor: "openai", Model: "=formula", Status: 402, ErrorCode: gw.CodeInsufficientBalance, CreatedAt: at.Add(2 * time.Second)},
		}}},
	}
	d, err := New(Config{Store: rs, AdminToken: adminToken, Now: func() time.Time { return fx.now }})
	if err != nil {
		t.Fatal(err)
	}
	fx.d = d
	return fx
}

// TestRunsPages: a key's session lists its account's runs (never
// another account's), a run's page shows its spend by model, its spend
// over its steps, its children and its timeline, its CSV export one row
// per step; another account's run is not found; the administrator
// picks an account first.
func TestRunsPages(t *testing.T) {
	fx := runsFixture(t)
	alpha := fx.session(alphaKey)
	list := fx.page("/dashboard/runs", alpha)
	for _, want := range []string{"task-alpha", "task-alpha.sub", `href="/dashboard/runs/task-alpha"`, ">Runs</a>"} {
		if !strings.Contains(list, want) {
			t.Errorf("runs list lacks %q", want)
		}
	}
	if strings.Contains(list, "$0.07") {
		t.Error("alpha's list shows beta's run")
	}
	page := fx.page("/dashboard/runs/task-alpha", alpha)
	for _, want := range []string{"Where the money went", "openai/gpt-alpha-model", "anthropic/claude-alpha", "80.0%", "task-alpha.sub",
		"req_alpha_s1", "<polyline", "Export CSV", "insufficient_balance"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	csv := fx.get("/dashboard/runs/task-alpha.csv", alpha)
	lines := strings.Split(strings.TrimSpace(csv.Body.String()), "\n")
	if csv.Code != http.StatusOK || len(lines) != 4 || !strings.Contains(lines[1], "req_alpha_s1") || !strings.Contains(lines[3], "req_alpha_s3,chat_completions,openai/=formula,402") {
		t.Errorf("csv %d:\n%s", csv.Code, csv.Body)
	}
	beta := fx.session(betaKey)
	if w := fx.get("/dashboard/runs/task-alpha", beta); w.Code != http.StatusNotFound {
		t.Errorf("beta sees alpha's run: %d", w.Code)
	}
	if p := fx.page("/dashboard/runs/shared", beta); !strings.Contains(p, "$0.07") {
		t.Error("beta's run of a shared name does not show its own spend")
	}
	admin := fx.session(adminToken)
	if p := fx.page("/dashboard/runs", admin); !strings.Contains(p, "Pick an account to see its runs") {
		t.Error("admin without an account: no prompt to pick one")
	}
	if p := fx.page("/dashboard/runs?account=acc_alpha", admin); !strings.Contains(p, `href="/dashboard/runs/task-alpha?account=acc_alpha"`) {
		t.Error("admin's list of alpha's runs lacks the run's link")
	}
}
