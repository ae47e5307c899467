package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/runs"
)

// runEnvelope is what the run tests read of an error answer.
type runEnvelope struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details struct {
			ErrorCode string `json:"error_code"`
		} `json:"details"`
	} `json:"error"`
}

func runRefusal(t *testing.T, resp *http.Response) runEnvelope {
	t.Helper()
	raw := readAll(t, resp.Body)
	var env runEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, raw, err)
	}
	return env
}

var needRE = regexp.MustCompile(`needs up to \$([0-9.]+)`)

// holdOf is what one request of body holds: a run with the smallest
// budget refuses it, naming the hold.
func holdOf(t *testing.T, e *env, key string, body []byte) gw.Money {
	t.Helper()
	resp := e.post("/v1/chat/completions", key, body, runs.HeaderRun, fmt.Sprintf("probe-%d", time.Now().UnixNano()), runs.HeaderBudget, "0.00000001")
	env := runRefusal(t, resp)
	m := needRE.FindStringSubmatch(env.Error.Message)
	if resp.StatusCode != http.StatusPaymentRequired || env.Error.Details.ErrorCode != gw.ErrorCodeRunBudget || m == nil {
		t.Fatalf("probe: %d %+v", resp.StatusCode, env)
	}
	need, err := gw.ParseUSD(m[1])
	if err != nil || need <= 0 {
		t.Fatalf("probe need %q: %v", m[1], err)
	}
	return need
}

// concurrentAtEdge sends 20 requests at once, alternating between a and
// b, on one run whose budget covers 5.5 of their holds: the run never
// spends past its budget, at least 5 are served, every refusal is a 402
// run_budget_exceeded with x-should-retry: false sent before any vendor
// call, and the run's spend is the sum of its records' charges.
func concurrentAtEdge(t *testing.T, a, b *env, key, acct string) {
	ctx := context.Background()
	body := chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`)
	hold := holdOf(t, a, key, body)
	budget := hold*5 + hold/2
	run := fmt.Sprintf("edge-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	var mu sync.Mutex
	status := map[int]int{}
	for i := range 20 {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.post("/v1/chat/completions", key, body, runs.HeaderRun, run, runs.HeaderBudget, budget.USDString())
			if resp.StatusCode == http.StatusPaymentRequired {
				env := runRefusal(t, resp)
				if env.Error.Details.ErrorCode != gw.ErrorCodeRunBudget || resp.Header.Get("X-Should-Retry") != "false" ||
					!strings.Contains(env.Error.Message, run) || !strings.Contains(env.Error.Message, budget.USDString()) {
					t.Errorf("refusal %+v (x-should-retry %q)", env, resp.Header.Get("X-Should-Retry"))
				}
			} else {
				readAll(t, resp.Body)
			}
			mu.Lock()
			status[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	rs := a.m.Store().(gw.RunStore)
	r, err := rs.Run(ctx, acct, run)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := a.m.Store().Records(ctx, gw.RecordFilter{AccountID: acct, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := rs.RunSteps(ctx, acct, run, 0)
	charged := gw.Money(0)
	ids := map[string]bool{}
	for _, s := range steps {
		ids[s.RequestID] = true
	}
	for _, rec := range recs {
		if ids[rec.RequestID] {
			charged += rec.Charge
		}
	}
	served := status[http.StatusOK]
	if r.Spend > budget || served < 5 || status[http.StatusPaymentRequired] == 0 || served+status[http.StatusPaymentRequired] != 20 ||
		r.Spend != charged || r.Requests != int64(served) || r.Held != 0 || r.InFlight != 0 {
		t.Fatalf("statuses %v, run %+v (budget %d, hold %d), charged %d", status, r, budget, hold, charged)
	}
	t.Logf("20 requests at a run budget of %s (holds of %s): %d served, %d refused, spend %s",
		budget.USDString(), hold.USDString(), served, status[http.StatusPaymentRequired], r.Spend.USDString())
}

// TestRunBudgetUnderConcurrency: on one instance with SQLite.
func TestRunBudgetUnderConcurrency(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	concurrentAtEdge(t, e, e, e.key, e.acct)
}

// TestRunBudgetTwoInstances: on two instances sharing PostgreSQL and
// Redis.
func TestRunBudgetTwoInstances(t *testing.T) {
	a, b := twoInstances(t, "the two-instance test", func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	secret, k, err := createKey(context.Background(), a.m.Store(), fmt.Sprintf("runs-%d", time.Now().UnixNano()), 50*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	concurrentAtEdge(t, a, b, secret, k.AccountID)
}

// TestRunHeadersOnEveryShape: M, C, R and G, streamed and not, answer
// with the run's spend and what remains of its budget (headers, or
// trailers on streams), each answer's spend the run's after it; GET
// /v1/runs/{id} then shows the run with its tokens, models and steps,
// and the span-free parts of the record agree.
func TestRunHeadersOnEveryShape(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	run := "shapes-1"
	hdr := []string{runs.HeaderRun, run, runs.HeaderBudget, "5"}
	model := "openai/" + nativeModels["openai"]
	cases := []struct {
		name   string
		path   string
		body   []byte
		stream bool
		extra  []string
	}{
		{"C", "/v1/chat/completions", chatBody(model, "Hello", false, `,"max_tokens":16`), false, nil},
		{"C stream", "/v1/chat/completions", chatBody(model, "Hello", true, `,"max_tokens":16`), true, nil},
		{"M", "/v1/messages", messagesBody("anthropic/claude-sonnet-5-5", "Hello", false, ""), false, []string{"anthropic-version", "2023-06-01"}},
		{"M stream", "/v1/messages", messagesBody("anthropic/claude-sonnet-5-5", "Hello", true, ""), true, []string{"anthropic-version", "2023-06-01"}},
		{"R", "/v1/responses", []byte(`{"model":"` + model + `","input":"Hello","max_output_tokens":16}`), false, nil},
		{"R stream", "/v1/responses", []byte(`{"model":"` + model + `","input":"Hello","max_output_tokens":16,"stream":true}`), true, nil},
		{"G", gPath("google/"+nativeModels["google"], "body"), geminiBody("Hello", ""), false, []string{"X-Goog-Api-Key", e.key}},
		{"G stream", gPath("google/"+nativeModels["google"], "sse"), geminiBody("Hello", ""), true, []string{"X-Goog-Api-Key", e.key}},
	}
	var last gw.Money
	for _, c := range cases {
		key := e.key
		if strings.HasPrefix(c.name, "G") {
			key = ""
		}
		resp := e.post(c.path, key, c.body, append(append([]string{}, hdr...), c.extra...)...)
		raw := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, raw)
		}
		got := resp.Header
		if c.stream {
			got = resp.Trailer
			if resp.Header.Get(runs.HeaderSpend) != "" {
				t.Errorf("%s: spend sent as a header before the stream's end", c.name)
			}
		}
		spend, err := gw.ParseUSD(got.Get(runs.HeaderSpend))
		if err != nil || spend <= last {
			t.Errorf("%s: spend %q after %d: %v", c.name, got.Get(runs.HeaderSpend), last, err)
		}
		left, err := gw.ParseUSD(got.Get(runs.HeaderRemaining))
		if err != nil || left != 5*gw.USD-spend {
			t.Errorf("%s: remaining %q with spend %d", c.name, got.Get(runs.HeaderRemaining), spend)
		}
		last = spend
	}
	resp := e.get("/v1/runs/"+run, e.key)
	var rep runs.Report
	if err := json.Unmarshal(readAll(t, resp.Body), &rep); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET run: %d %v", resp.StatusCode, err)
	}
	if rep.ID != run || rep.Requests != int64(len(cases)) || rep.Spend != last.USDString() || len(rep.Steps) != len(cases) ||
		len(rep.Models) < 2 || rep.Tokens.Input <= 0 || rep.Tokens.Output <= 0 || rep.Budget == nil || *rep.Budget != "5.00000000" {
		t.Errorf("report %+v", rep)
	}
	if rep.Steps[len(rep.Steps)-1].Spent != last.USDString() {
		t.Errorf("last step's spent %s, want %s", rep.Steps[len(rep.Steps)-1].Spent, last.USDString())
	}
	list := e.get("/v1/runs", e.key)
	var l struct {
		Data []runs.Summary `json:"data"`
	}
	if err := json.Unmarshal(readAll(t, list.Body), &l); err != nil || len(l.Data) != 1 || l.Data[0].ID != run {
		t.Errorf("GET /v1/runs: %+v %v", l, err)
	}
}

// TestRunCapsAndIsolation: a step cap refuses the request past it (402
// run_step_limit, before the vendor); a bad run header is a 400; a
// child's spend counts toward its parent, whose budget covers it; two
// accounts naming the same run keep their own.
func TestRunCapsAndIsolation(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	ctx := t.Context()
	body := chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`)
	for i := range 2 {
		resp := e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "capped", runs.HeaderMaxRequests, "2")
		readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("step %d: %d", i, resp.StatusCode)
		}
	}
	before := len(e.fake.Requests())
	resp := e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "capped")
	env := runRefusal(t, resp)
	if resp.StatusCode != http.StatusPaymentRequired || env.Error.Details.ErrorCode != gw.ErrorCodeRunSteps || !strings.Contains(env.Error.Message, `"capped"`) {
		t.Errorf("third step: %d %+v", resp.StatusCode, env)
	}
	if n := len(e.fake.Requests()) - before; n != 0 {
		t.Errorf("a refused step reached the vendor %d times", n)
	}
	for _, h := range [][]string{{runs.HeaderRun, "has space"}, {runs.HeaderRun, strings.Repeat("a", 129)}, {runs.HeaderRun, "ok", runs.HeaderBudget, "-1"}} {
		resp := e.post("/v1/chat/completions", e.key, body, h...)
		readAll(t, resp.Body)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("headers %q: %d, want 400", h, resp.StatusCode)
		}
	}
	// Parent and child.
	hold := holdOf(t, e, e.key, body)
	resp = e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "root", runs.HeaderBudget, (hold + hold/10).USDString())
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("root: %d", resp.StatusCode)
	}
	rs := e.m.Store().(gw.RunStore)
	root, err := rs.Run(ctx, e.acct, "root")
	if err != nil || root.Spend <= 0 || root.Budget-root.Spend >= hold {
		t.Fatalf("root %+v %v (hold %d): want less than a hold left", root, err, hold)
	}
	// The parent's budget covers the child: the child's own bigger
	// budget does not lift it.
	resp = e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "sub", runs.HeaderParent, "root", runs.HeaderBudget, "100")
	env = runRefusal(t, resp)
	if resp.StatusCode != http.StatusPaymentRequired || env.Error.Details.ErrorCode != gw.ErrorCodeRunBudget || !strings.Contains(env.Error.Message, `"root"`) {
		t.Errorf("child past its parent's budget: %d %+v", resp.StatusCode, env)
	}
	resp = e.post("/v1/chat/completions", e.key, body, runs.HeaderRun, "sub2", runs.HeaderParent, "root2", runs.HeaderBudget, "100")
	readAll(t, resp.Body)
	root2, _ := rs.Run(ctx, e.acct, "root2")
	sub2, _ := rs.Run(ctx, e.acct, "sub2")
	if resp.StatusCode != 200 || root2 == nil || sub2 == nil || sub2.ParentID != "root2" || root2.Spend != sub2.Spend || root2.Requests != 1 || sub2.Spend <= 0 {
		t.Fatalf("child: %d; parent %+v child %+v", resp.StatusCode, root2, sub2)
	}
	// Another account's run of the same name.
	secret, k, err := createKey(ctx, e.m.Store(), "other", gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	resp = e.post("/v1/chat/completions", secret, body, runs.HeaderRun, "capped")
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Errorf("the other account's run %q: %d", "capped", resp.StatusCode)
	}
	mine, _ := rs.Run(ctx, e.acct, "capped")
	theirs, _ := rs.Run(ctx, k.AccountID, "capped")
	if mine == nil || theirs == nil || mine.Requests != 2 || theirs.Requests != 1 || theirs.MaxRequests != 0 {
		t.Errorf("mine %+v theirs %+v", mine, theirs)
	}
	if r := e.get("/v1/runs/capped", secret); r.StatusCode != 200 {
		t.Errorf("other account's GET: %d", r.StatusCode)
	} else {
		var rep runs.Report
		_ = json.Unmarshal(readAll(t, r.Body), &rep)
		if rep.Requests != 1 {
			t.Errorf("the other account sees %d requests", rep.Requests)
		}
	}
	if r := e.get("/v1/runs/root", secret); r.StatusCode != http.StatusNotFound {
		t.Errorf("another account's run: %d, want 404", r.StatusCode)
	}
}

// TestRunCutStreamChargedForItsPart: a stream the caller leaves half way
// is charged for what was produced, never 0 and never the whole hold,
// and the run's spend is that charge.
func TestRunCutStreamChargedForItsPart(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	body := chatBody("openai/"+nativeModels["openai"], "[fake:delay=100ms][fake:chunks=50]", true, `,"max_tokens":2000`)
	hold := holdOf(t, e, e.key, body)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set(runs.HeaderRun, "cut")
	req.Header.Set(runs.HeaderBudget, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rid := resp.Header.Get("X-Gateway-Request-Id")
	br := bufio.NewReader(resp.Body)
	for events := 0; events < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	cancel()
	resp.Body.Close()
	rec := waitRecord(t, e.m.Store(), rid)
	rs := e.m.Store().(gw.RunStore)
	var r *gw.Run
	for deadline := time.Now().Add(30 * time.Second); ; {
		if r, err = rs.Run(context.Background(), e.acct, "cut"); err == nil && r.Requests == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r == nil || r.Requests != 1 || rec.Charge <= 0 || rec.Charge >= hold || r.Spend != rec.Charge || r.Held != 0 {
		t.Fatalf("run %+v, record charge %d, hold %d: want 0 < charge < hold and the run's spend the charge", r, rec.Charge, hold)
	}
}

// TestRunBudgetSizesTheHold: a request without an output limit whose
// whole possible output would pass the run's budget is served with the
// largest limit the budget covers (x-gateway-max-tokens), and the run
// stays within its budget; a request with its own limit too big for
// what is left is refused with the run's code.
func TestRunBudgetSizesTheHold(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	limited := chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":16`)
	hold := holdOf(t, e, e.key, limited)
	budget := hold * 400
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""),
		runs.HeaderRun, "sized", runs.HeaderBudget, budget.USDString())
	raw := readAll(t, resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("X-Gateway-Max-Tokens") == "" {
		t.Fatalf("unlimited request in a small run: %d (max tokens %q) %s", resp.StatusCode, resp.Header.Get("X-Gateway-Max-Tokens"), raw)
	}
	r, err := e.m.Store().(gw.RunStore).Run(t.Context(), e.acct, "sized")
	if err != nil || r.Spend <= 0 || r.Spend > budget || r.Requests != 1 {
		t.Fatalf("run %+v %v (budget %d)", r, err, budget)
	}
	resp = e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, `,"max_tokens":100000`), runs.HeaderRun, "sized")
	env := runRefusal(t, resp)
	if resp.StatusCode != http.StatusPaymentRequired || env.Error.Details.ErrorCode != gw.ErrorCodeRunBudget {
		t.Errorf("a caller's limit past the run's budget: %d %+v", resp.StatusCode, env)
	}
}
