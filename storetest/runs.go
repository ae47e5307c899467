package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Runs runs the run tests (gw.RunStore) on stores from open. second,
// when not nil, opens another store on the same database as the one
// open returned last (a second instance): the concurrency test then
// spreads its steps over both.
func Runs(t *testing.T, open func(t *testing.T) gw.Store, second func(t *testing.T) gw.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, a, b gw.RunStore)
	}{
		{"StepsHoldAndSettle", testRunSteps},
		{"ConcurrentStepsNeverPassRunBudget", testRunConcurrent},
		{"ParentBudgetCoversChildren", testRunParent},
		{"StepLimit", testRunStepLimit},
		{"IdleExpiry", testRunIdle},
		{"AccountsKeptApart", testRunAccounts},
		{"KeyDefaults", testRunDefaults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			a := s.(gw.RunStore)
			b := a
			if second != nil {
				b = second(t).(gw.RunStore)
			}
			tt.run(t, a, b)
		})
	}
}

var runT0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func runHold(acct, run, rid string, amount gw.Money, at time.Time) gw.RunHold {
	return gw.RunHold{AccountID: acct, RunID: run, RequestID: rid, Amount: amount, Now: at, ExpiresAt: at.Add(time.Hour)}
}

func settleStep(t *testing.T, s gw.RunStore, acct, run, rid string, charge gw.Money, status int, at time.Time) *gw.Run {
	t.Helper()
	r, err := s.SettleRun(t.Context(), acct, run, gw.RunStep{RequestID: rid, Vendor: "openai", Model: "gpt-x", Status: status, Charge: charge,
		Usage: gw.Usage{InputTokens: 10, OutputTokens: 5}, CreatedAt: at}, at)
	if err != nil {
		t.Fatalf("SettleRun(%s): %v", rid, err)
	}
	return r
}

func wantRunRefusal(t *testing.T, err error, code string) {
	t.Helper()
	e := gw.AsError(err)
	if err == nil || e.Code != gw.CodeInsufficientBalance || e.ErrorCode != code || !e.NoRetry {
		t.Fatalf("got %v, want a refusal %s", err, code)
	}
}

func testRunSteps(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	h := runHold("acct_1", "task-1", "req_1", 300, runT0)
	h.Caps = gw.RunCaps{Budget: 1000}
	r, err := s.HoldRun(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if r.Held != 300 || r.InFlight != 1 || r.Budget != 1000 || r.Spend != 0 {
		t.Fatalf("after hold: %+v", r)
	}
	if left, ok := r.Remaining(); !ok || left != 700 {
		t.Errorf("remaining %d %v, want 700", left, ok)
	}
	r = settleStep(t, s, "acct_1", "task-1", "req_1", 120, 200, runT0.Add(time.Second))
	if r.Held != 0 || r.InFlight != 0 || r.Spend != 120 || r.Requests != 1 {
		t.Fatalf("after settle: %+v", r)
	}
	steps, err := s.RunSteps(ctx, "acct_1", "task-1", 0)
	if err != nil || len(steps) != 1 || steps[0].Charge != 120 || steps[0].Model != "gpt-x" || steps[0].Usage.OutputTokens != 5 {
		t.Fatalf("steps %+v, %v", steps, err)
	}
	// A settle of a step whose hold is gone still counts its charge.
	r = settleStep(t, s, "acct_1", "task-1", "req_lost", 30, 502, runT0.Add(2*time.Second))
	if r.Spend != 150 || r.Requests != 2 || r.Errors != 1 || r.Held != 0 || r.InFlight != 0 {
		t.Fatalf("after a lost hold's settle: %+v", r)
	}
	if _, err := s.Run(ctx, "acct_1", "nope"); err == nil {
		t.Error("Run of an unknown run: no error")
	}
	list, err := s.Runs(ctx, "acct_1", 10)
	if err != nil || len(list) != 1 || list[0].ID != "task-1" {
		t.Fatalf("Runs: %+v %v", list, err)
	}
}

// testRunConcurrent: 20 steps at once, each holding 100 against a budget
// of 550 (spread over two instances when there are two): exactly 5 are
// admitted, and the run never spends past its budget.
func testRunConcurrent(t *testing.T, a, b gw.RunStore) {
	ctx := t.Context()
	const n, amount, budget = 20, gw.Money(100), gw.Money(550)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, refused := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			h := runHold("acct_c", "edge", fmt.Sprintf("req_%d", i), amount, runT0)
			h.Caps = gw.RunCaps{Budget: budget}
			_, err := s.HoldRun(ctx, h)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case gw.AsError(err).ErrorCode == gw.ErrorCodeRunBudget:
				refused++
			default:
				t.Errorf("step %d: %v", i, err)
			}
			if err == nil {
				settleStep(t, s, "acct_c", "edge", fmt.Sprintf("req_%d", i), amount, 200, runT0)
			}
		}()
	}
	wg.Wait()
	r, err := a.Run(ctx, "acct_c", "edge")
	if err != nil {
		t.Fatal(err)
	}
	if admitted != 5 || refused != n-5 || r.Spend != 500 || r.Spend > budget || r.Held != 0 || r.InFlight != 0 {
		t.Fatalf("admitted %d, refused %d, run %+v; want 5 admitted and spend 500", admitted, refused, r)
	}
}

func testRunParent(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	p := runHold("acct_p", "parent", "req_p", 100, runT0)
	p.Caps = gw.RunCaps{Budget: 500}
	if _, err := s.HoldRun(ctx, p); err != nil {
		t.Fatal(err)
	}
	settleStep(t, s, "acct_p", "parent", "req_p", 100, 200, runT0)
	c := runHold("acct_p", "child", "req_c1", 300, runT0)
	c.ParentID = "parent"
	c.Caps = gw.RunCaps{Budget: 10_000} // the child's own cap does not lift its parent's
	if _, err := s.HoldRun(ctx, c); err != nil {
		t.Fatal(err)
	}
	c2 := runHold("acct_p", "child", "req_c2", 200, runT0)
	_, err := s.HoldRun(ctx, c2)
	wantRunRefusal(t, err, gw.ErrorCodeRunBudget)
	if e := gw.AsError(err); e != nil && !strings.Contains(e.Message, `"parent"`) {
		t.Errorf("refusal names %q, want the parent", e.Message)
	}
	settleStep(t, s, "acct_p", "child", "req_c1", 250, 200, runT0)
	par, err := s.Run(ctx, "acct_p", "parent")
	if err != nil || par.Spend != 350 || par.Requests != 2 || par.Held != 0 {
		t.Fatalf("parent %+v %v, want spend 350 over 2 requests", par, err)
	}
	kids, err := s.RunChildren(ctx, "acct_p", "parent")
	if err != nil || len(kids) != 1 || kids[0].ID != "child" || kids[0].ParentID != "parent" || kids[0].Spend != 250 {
		t.Fatalf("children %+v %v", kids, err)
	}
	// A child named with a parent not seen yet creates it.
	o := runHold("acct_p", "orphan", "req_o", 1, runT0)
	o.ParentID = "new-parent"
	if _, err := s.HoldRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	if np, err := s.Run(ctx, "acct_p", "new-parent"); err != nil || np.Held != 1 {
		t.Fatalf("new parent %+v %v", np, err)
	}
}

func testRunStepLimit(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	for i := range 3 {
		h := runHold("acct_s", "steps", fmt.Sprintf("req_%d", i), 0, runT0)
		h.Caps = gw.RunCaps{MaxRequests: 3}
		if _, err := s.HoldRun(ctx, h); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if i == 0 {
			settleStep(t, s, "acct_s", "steps", "req_0", 0, 200, runT0)
		}
	}
	// Two in flight and one finished: the fourth is refused.
	_, err := s.HoldRun(ctx, runHold("acct_s", "steps", "req_3", 0, runT0))
	wantRunRefusal(t, err, gw.ErrorCodeRunSteps)
	tool := runHold("acct_s", "steps", "req_tool", 0, runT0)
	tool.Tool = true
	_, err = s.HoldRun(ctx, tool)
	wantRunRefusal(t, err, gw.ErrorCodeRunSteps)
}

func testRunIdle(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	h := runHold("acct_i", "idle", "req_1", 10, runT0)
	h.Caps = gw.RunCaps{Idle: time.Minute}
	if _, err := s.HoldRun(ctx, h); err != nil {
		t.Fatal(err)
	}
	settleStep(t, s, "acct_i", "idle", "req_1", 10, 200, runT0.Add(10*time.Second))
	if _, err := s.HoldRun(ctx, runHold("acct_i", "idle", "req_2", 10, runT0.Add(50*time.Second))); err != nil {
		t.Fatalf("within the expiry: %v", err)
	}
	settleStep(t, s, "acct_i", "idle", "req_2", 10, 200, runT0.Add(55*time.Second))
	_, err := s.HoldRun(ctx, runHold("acct_i", "idle", "req_3", 10, runT0.Add(2*time.Minute+time.Second)))
	wantRunRefusal(t, err, gw.ErrorCodeRunExpired)
	// A step whose process died is swept once past its expiry.
	h4 := runHold("acct_i", "swept", "req_4", 70, runT0)
	h4.Caps = gw.RunCaps{Budget: 100}
	h4.ExpiresAt = runT0.Add(time.Minute)
	if _, err := s.HoldRun(ctx, h4); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HoldRun(ctx, runHold("acct_i", "swept", "req_5", 70, runT0.Add(30*time.Second))); err == nil {
		t.Fatal("a hold beside a live one past the budget: admitted")
	}
	if r, err := s.HoldRun(ctx, runHold("acct_i", "swept", "req_6", 70, runT0.Add(2*time.Minute))); err != nil || r.Held != 70 || r.InFlight != 1 {
		t.Fatalf("after the sweep: %+v %v", r, err)
	}
}

func testRunAccounts(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	h := runHold("acct_x", "same", "req_x", 100, runT0)
	h.Caps = gw.RunCaps{Budget: 100}
	if _, err := s.HoldRun(ctx, h); err != nil {
		t.Fatal(err)
	}
	// The other account's run of the same name is its own.
	if r, err := s.HoldRun(ctx, runHold("acct_y", "same", "req_y", 100, runT0)); err != nil || r.Budget != 0 || r.Held != 100 {
		t.Fatalf("other account: %+v %v", r, err)
	}
	settleStep(t, s, "acct_y", "same", "req_y", 80, 200, runT0)
	x, _ := s.Run(ctx, "acct_x", "same")
	y, _ := s.Run(ctx, "acct_y", "same")
	if x == nil || y == nil || x.Spend != 0 || x.Held != 100 || y.Spend != 80 {
		t.Fatalf("x %+v y %+v", x, y)
	}
	if steps, _ := s.RunSteps(ctx, "acct_x", "same", 0); len(steps) != 0 {
		t.Errorf("acct_x sees steps %+v", steps)
	}
}

func testRunDefaults(t *testing.T, s, _ gw.RunStore) {
	ctx := t.Context()
	st := s.(gw.Store)
	a := account(t, st, "runs-defaults", 0)
	k := &gw.Key{ID: "key_rd", AccountID: a.ID, Hint: "gwk_rd"}
	if err := st.CreateKey(ctx, k, hash("rd")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunDefaults(ctx, "key_missing", gw.RunCaps{Budget: 1}); err == nil {
		t.Error("defaults of a missing key: no error")
	}
	want := gw.RunCaps{Budget: 200, MaxRequests: 7, Idle: time.Hour}
	if err := s.SetRunDefaults(ctx, k.ID, want); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunDefaults(ctx, k.ID); err != nil || got != want {
		t.Fatalf("defaults %+v %v, want %+v", got, err, want)
	}
	h := runHold(a.ID, "defaulted", "req_d", 10, runT0)
	h.KeyID = k.ID
	r, err := s.HoldRun(ctx, h)
	if err != nil || r.Budget != 200 || r.MaxRequests != 7 || r.Idle != time.Hour || r.KeyID != k.ID {
		t.Fatalf("run %+v %v, want the key's defaults", r, err)
	}
	// A run's own caps win over the key's.
	h2 := runHold(a.ID, "own", "req_o", 10, runT0)
	h2.KeyID, h2.Caps = k.ID, gw.RunCaps{Budget: 50}
	if r, err := s.HoldRun(ctx, h2); err != nil || r.Budget != 50 || r.MaxRequests != 0 {
		t.Fatalf("run %+v %v, want its own caps", r, err)
	}
	if err := s.SetRunDefaults(ctx, k.ID, gw.RunCaps{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.RunDefaults(ctx, k.ID); got != (gw.RunCaps{}) {
		t.Errorf("after removal: %+v", got)
	}
}
