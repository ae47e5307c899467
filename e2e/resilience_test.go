package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// withRoutes configures operator routes.
func withRoutes(t *testing.T, routes ...route.Route) envOption {
	tbl, err := route.NewTable(routes)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *app.Config) { c.Routes = tbl }
}

// withFaultTimings makes retries and first-byte limits short and lifts
// the per-key limits, for the fault suites.
func withFaultTimings(c *app.Config) {
	c.HTTP.RetryBase = time.Millisecond
	// A silent vendor is given up on after 1 s: long enough for the
	// fallback's answer on a loaded machine under the race detector.
	c.HTTP.FirstByteTimeout = time.Second
	c.HTTP.MaxRetries = 2
	c.RPM, c.TPM = 0, 0
}

// faults are the vendor failures of the fault suite, each scripted for
// the primary vendor only, with what a caller without a fallback gets
// after the documented retries (1 try + 2 retries).
var faults = []struct {
	name, directive string
	status          int
	code            gw.Code
}{
	{"429 retry-after", "[fake:status=429][fake:retry-ms=5]", 429, gw.CodeRateLimited},
	{"500", "[fake:status=500]", 502, gw.CodeUpstream},
	{"503", "[fake:status=503]", 503, gw.CodeOverloaded},
	{"529", "[fake:status=529]", 503, gw.CodeOverloaded},
	{"connection reset", "[fake:reset]", 502, gw.CodeUpstream},
	{"silent first byte", "[fake:silent]", 504, gw.CodeUpstreamTimeout},
}

// faultRoutes: the primary spoken natively (M to anthropic) or mapped (C
// to anthropic), falling back to openai mapped or natively; the first
// falls back through an operator route, the second through the caller's
// models list.
var faultRoutes = []struct {
	name, path, model, models string
	body                      func(model, text string, stream bool, extra string) []byte
}{
	{"native primary, operator route", "/v1/messages", "gw/sonnet", "", messagesBody},
	{"mapped primary, models list", "/v1/chat/completions", "anthropic/claude-sonnet-5-5", `,"models":["openai/gpt-6-sol"],"max_tokens":256`, chatBody},
}

const (
	faultPrimary  = "anthropic/claude-sonnet-5-5"
	faultFallback = "openai/gpt-6-sol"
)

// Issue 27: for each fault, on a native and a mapped route, streamed and
// not: with a fallback 100 of 100 requests are served by it and charged
// at its price; without one the caller gets the vendor's error after the
// retries, charged nothing.
func TestFaultSuiteFallbacks(t *testing.T) {
	e := newEnv(t, withFaultTimings, withRoutes(t, route.Route{Name: "gw/sonnet", Members: []route.Target{
		{Vendor: "anthropic", Model: "claude-sonnet-5-5"}, {Vendor: "openai", Model: "gpt-6-sol"}}}))
	biller := testBiller(t)
	const n = 100
	var seq atomic.Int64
	for _, f := range faults {
		for _, rt := range faultRoutes {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", f.name, rt.name, stream), func(t *testing.T) {
					var ok atomic.Int32
					var wg sync.WaitGroup
					// Silent requests mostly wait (3 tries of 1 s): more
					// of them at once.
					conc := 16
					if strings.Contains(f.directive, "silent") {
						conc = 34
					}
					sem := make(chan struct{}, conc)
					for i := 0; i < n; i++ {
						wg.Add(1)
						sem <- struct{}{}
						go func() {
							defer wg.Done()
							defer func() { <-sem }()
							text := fmt.Sprintf("hello %s[fake:on=anthropic][fake:id=%d]", f.directive, seq.Add(1))
							if err := e.servedByFallback(biller, rt.path, rt.body(rt.model, text, stream, rt.models)); err != nil {
								t.Error(err)
								return
							}
							ok.Add(1)
						}()
					}
					wg.Wait()
					if ok.Load() != n {
						t.Fatalf("%d of %d requests served by the fallback", ok.Load(), n)
					}
				})
			}
		}
	}
}

// servedByFallback sends one request and checks that the fallback
// served it, said so in the headers, and charged its own price.
func (e *env) servedByFallback(biller *billing.Biller, path string, body []byte) error {
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	h := resp.Header
	if resp.StatusCode != 200 {
		rec := waitRecord(e.t, e.m.Store(), h.Get("X-Gateway-Request-Id"))
		return fmt.Errorf("status %d: %s (note %q)", resp.StatusCode, buf.Bytes(), rec.Note)
	}
	if h.Get("X-Gateway-Vendor") != "openai" || h.Get("X-Gateway-Model") != faultFallback || h.Get("X-Gateway-Attempts") != "2" {
		return fmt.Errorf("headers vendor %q model %q attempts %q", h.Get("X-Gateway-Vendor"), h.Get("X-Gateway-Model"), h.Get("X-Gateway-Attempts"))
	}
	if !strings.Contains(buf.String(), "Hello") || !strings.Contains(buf.String(), "openai") {
		return fmt.Errorf("answer is not the fallback's: %.200s", buf.Bytes())
	}
	rec := waitRecord(e.t, e.m.Store(), h.Get("X-Gateway-Request-Id"))
	if rec.Vendor != "openai" || rec.Model != "gpt-6-sol" || rec.Status != 200 {
		return fmt.Errorf("record %s/%s status %d", rec.Vendor, rec.Model, rec.Status)
	}
	if !strings.Contains(rec.Note, "attempts: "+faultPrimary+" ") {
		return fmt.Errorf("record note %q does not list the attempts", rec.Note)
	}
	q, err := biller.PriceAt(rec.Vendor, rec.Model, rec.Usage, rec.CreatedAt)
	if err != nil {
		return err
	}
	if rec.Charge <= 0 || rec.Charge != q.Charge {
		return fmt.Errorf("%s: charged %v, the fallback's price is %v (usage %+v, note %q)", rec.RequestID, rec.Charge, q.Charge, rec.Usage, rec.Note)
	}
	return nil
}

// Issue 27: without a fallback the caller gets the vendor's error after
// the documented retries (the vendor saw 3 calls), charged nothing.
func TestFaultSuiteNoFallback(t *testing.T) {
	e := newEnv(t, withFaultTimings)
	for _, f := range faults {
		for _, rt := range faultRoutes {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", f.name, rt.path, stream), func(t *testing.T) {
					t.Parallel()
					for i := 0; i < 3; i++ {
						id := fmt.Sprintf("nf-%s-%s-%v-%d", strings.ReplaceAll(f.name, " ", "_"), rt.path, stream, i)
						text := "hello " + f.directive + "[fake:id=" + id + "]"
						resp := e.post(rt.path, e.key, rt.body(faultPrimary, text, stream, ""))
						b := readAll(t, resp.Body)
						if resp.StatusCode != f.status {
							t.Fatalf("status %d, want %d: %s", resp.StatusCode, f.status, b)
						}
						var env struct {
							Error struct{ Type string } `json:"error"`
						}
						if err := json.Unmarshal(b, &env); err != nil || env.Error.Type != string(f.code) {
							t.Fatalf("error %s, want %s", b, f.code)
						}
						if f.status == 429 && resp.Header.Get("Retry-After") == "" {
							t.Fatalf("429 without Retry-After")
						}
						if resp.Header.Get("X-Gateway-Attempts") != "1" || resp.Header.Get("X-Gateway-Model") != faultPrimary {
							t.Fatalf("attempts %q model %q", resp.Header.Get("X-Gateway-Attempts"), resp.Header.Get("X-Gateway-Model"))
						}
						rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
						if rec.Charge != 0 || rec.ErrorCode != f.code {
							t.Fatalf("record charge %v code %s", rec.Charge, rec.ErrorCode)
						}
						calls := 0
						for _, r := range e.fake.Requests() {
							if bytes.Contains(r.Body, []byte("[fake:id="+id+"]")) {
								calls++
							}
						}
						if calls != 3 {
							t.Fatalf("the vendor saw %d calls, want 3 (one try and two retries)", calls)
						}
					}
				})
			}
		}
	}
}

// Issue 27: a vendor failing every request, behind a breaker: once it is
// open the vendor sees at most one probe per interval, requests fall over
// to the fallback at once (their fall-over times are logged), and after
// the vendor recovers traffic returns to it.
func TestBreakerFallsOverFastAndProbesOncePerInterval(t *testing.T) {
	const interval = 300 * time.Millisecond
	e := newEnv(t, withFaultTimings, func(c *app.Config) {
		c.HTTP.BreakerFailures = 5
		c.HTTP.BreakerInterval = interval
		c.AdminToken = testAdminToken
	})
	body := func(text string) []byte {
		return chatBody(faultPrimary, text, false, `,"models":["openai/gpt-6-sol"],"max_tokens":64`)
	}
	primaryCalls := func() int {
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Vendor == "anthropic" {
				n++
			}
		}
		return n
	}
	send := func(text string) (*http.Response, time.Duration) {
		start := time.Now()
		resp := e.post("/v1/chat/completions", e.key, body(text))
		readAll(t, resp.Body)
		return resp, time.Since(start)
	}
	// Open it: the vendor fails every account's requests. 5 failures in
	// a row open it once they come from 3 accounts: 3 tries of 503 from
	// each of two accounts (a run of 6 from 2), then the third account's
	// first try.
	keys := []string{e.key}
	for _, a := range []string{"second", "third"} {
		k, _, err := createKey(context.Background(), e.m.Store(), a, 10*gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		resp := e.post("/v1/chat/completions", k, body("[fake:status=503][fake:on=anthropic]"))
		readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	opened := primaryCalls()
	if opened != 7 {
		t.Fatalf("%d calls before opening, want 7", opened)
	}
	// The vendor stays down: the gateway's own probe (a GET of its
	// models list, the half-open trial since tenant isolation) fails
	// too, not only the requests that say [fake:status=503].
	e.fake.SetOutage("anthropic", http.StatusServiceUnavailable)
	// While the vendor keeps failing: every request is served by the
	// fallback, and the vendor sees at most one probe per interval.
	start := time.Now()
	var fallOver []time.Duration
	for time.Since(start) < 6*interval {
		resp, d := send("[fake:status=503][fake:on=anthropic]")
		if resp.StatusCode != 200 || resp.Header.Get("X-Gateway-Vendor") != "openai" {
			t.Fatalf("status %d vendor %q", resp.StatusCode, resp.Header.Get("X-Gateway-Vendor"))
		}
		fallOver = append(fallOver, d)
	}
	elapsed := time.Since(start)
	probes := primaryCalls() - opened
	if max := int(elapsed/interval) + 1; probes > max {
		t.Fatalf("%d probes in %v, at most %d (one per %v)", probes, elapsed, max, interval)
	}
	p50, p99 := percentile(fallOver, 50), percentile(fallOver, 99)
	t.Logf("open breaker: %d requests fell over in %v; %d probes; fall-over time p50 %v p99 %v max %v", len(fallOver), elapsed.Round(time.Millisecond), probes, p50, p99, percentile(fallOver, 100))
	if p50 > time.Second {
		t.Fatalf("fall-over p50 %v: requests wait instead of falling over", p50)
	}
	// The health report shows the open breaker (readyz, with the admin
	// token); the public answer says only that the gateway is degraded.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rb := readAll(t, resp.Body)
	if !bytes.Contains(rb, []byte(`"vendor":"anthropic"`)) || !bytes.Contains(rb, []byte(`"status":"degraded"`)) {
		t.Fatalf("readyz %s", rb)
	}
	resp, err = http.Get(e.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if rb := readAll(t, resp.Body); bytes.Contains(rb, []byte("anthropic")) || !bytes.Contains(rb, []byte(`"reason":"vendors"`)) {
		t.Fatalf("public readyz %s", rb)
	}
	// Recovery: after an interval the probe succeeds and traffic returns.
	e.fake.SetOutage("anthropic", 0)
	time.Sleep(interval)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, _ := send("hello again")
		if resp.StatusCode == 200 && resp.Header.Get("X-Gateway-Vendor") == "anthropic" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("traffic did not return to the recovered vendor")
		}
		time.Sleep(interval / 4)
	}
	for i := 0; i < 5; i++ {
		if resp, _ := send("hello again"); resp.Header.Get("X-Gateway-Vendor") != "anthropic" || resp.Header.Get("X-Gateway-Attempts") != "1" {
			t.Fatalf("after recovery served by %q in %s attempts", resp.Header.Get("X-Gateway-Vendor"), resp.Header.Get("X-Gateway-Attempts"))
		}
	}
}

// percentile returns the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// Issue 27: a Claude Code style tool round trip through an operator route
// whose first member fails: the fallback (mapped M->C) serves it, and the
// first vendor's thinking block (its signature) is not sent to a vendor
// that cannot read it.
func TestRouteFallbackDropsForeignThinking(t *testing.T) {
	e := newEnv(t, withFaultTimings, withRoutes(t, route.Route{Name: "gw/code", Members: []route.Target{
		{Vendor: "anthropic", Model: "claude-sonnet-5-5"}, {Vendor: "openai", Model: "gpt-6-sol"}}}))
	for _, stream := range []bool{false, true} {
		body := fmt.Sprintf(`{"model":"gw/code","max_tokens":512,"stream":%t,
		  "tools":[{"name":"Read","description":"Read a file","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}],
		  "messages":[
		    {"role":"user","content":"Read the notes. [fake:status=529][fake:on=anthropic]"},
		    {"role":"assistant","content":[
		      {"type":"thinking","thinking":"secret-chain-of-thought","signature":"EqQBCkYIBxgCKkDanthropicsignature"},
		      {"type":"tool_use","id":"toolu_01abc","name":"Read","input":{"file_path":"/notes.txt"}}]},
		    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01abc","content":"read-marker-5150"}]}]}`, stream)
		resp := e.post("/v1/messages", e.key, []byte(body))
		b := readAll(t, resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("X-Gateway-Model") != faultFallback {
			t.Fatalf("stream=%v: status %d model %q: %s", stream, resp.StatusCode, resp.Header.Get("X-Gateway-Model"), b)
		}
		if !bytes.Contains(b, []byte("read-marker-5150")) {
			t.Fatalf("stream=%v: the tool result did not come back: %s", stream, b)
		}
		rec := e.lastRequest()
		if rec.Vendor != "openai" {
			t.Fatalf("last vendor call went to %s", rec.Vendor)
		}
		for _, leak := range []string{"secret-chain-of-thought", "anthropicsignature", `"thinking"`, "signature"} {
			if bytes.Contains(rec.Body, []byte(leak)) {
				t.Fatalf("stream=%v: the fallback was sent %q: %s", stream, leak, rec.Body)
			}
		}
		if !bytes.Contains(rec.Body, []byte("toolu_01abc")) {
			t.Fatalf("stream=%v: the tool call is missing from the fallback's body: %s", stream, rec.Body)
		}
	}
}

// Issue 27: a stream the vendor cut after producing tokens is not
// charged, and what the vendor may bill for it is recorded as the
// operator's cost.
func TestBrokenStreamIsOperatorCost(t *testing.T) {
	e := newEnv(t, withFaultTimings)
	for _, rt := range faultRoutes {
		resp := e.post(rt.path, e.key, rt.body(faultPrimary, "hello there friend [fake:break=3]", true, ""))
		readAll(t, resp.Body)
		rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
		if rec.ErrorCode == "" || rec.Charge != 0 || rec.Cost <= 0 || !strings.Contains(rec.Note, "operator_cost") {
			t.Fatalf("%s: record error %q charge %v cost %v note %q", rt.path, rec.ErrorCode, rec.Charge, rec.Cost, rec.Note)
		}
		if bal, err := e.m.Store().Balance(context.Background(), e.acct); err != nil || bal.Charged != 0 || bal.Held != 0 {
			t.Fatalf("balance %+v %v", bal, err)
		}
	}
}

// Issue 27: the models list works on /v1/responses too.
func TestResponsesFallback(t *testing.T) {
	e := newEnv(t, withFaultTimings)
	for _, stream := range []bool{false, true} {
		body := fmt.Sprintf(`{"model":"anthropic/claude-sonnet-5-5","models":["google/gemini-3-flash"],"stream":%t,"max_output_tokens":256,"input":"hello [fake:status=529][fake:on=anthropic]"}`, stream)
		resp := e.post("/v1/responses", e.key, []byte(body))
		b := readAll(t, resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("X-Gateway-Model") != "google/gemini-3-flash" || resp.Header.Get("X-Gateway-Attempts") != "2" {
			t.Fatalf("stream=%v: status %d model %q attempts %q: %.300s", stream, resp.StatusCode, resp.Header.Get("X-Gateway-Model"), resp.Header.Get("X-Gateway-Attempts"), b)
		}
		if !bytes.Contains(b, []byte("Hello from google")) {
			t.Fatalf("stream=%v: not the fallback's answer: %.300s", stream, b)
		}
		if rec := e.lastRequest(); bytes.Contains(rec.Body, []byte(`"models"`)) {
			t.Fatalf("the vendor was sent the models list: %s", rec.Body)
		}
	}
}

// Operator routes come from the configuration file's [routes] tables,
// are checked, and are listed by GET /v1/models with their members.
func TestRoutesFromConfigFileListed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", "rpm = 60\n[routes.\"gw/sonnet\"]\nmodels = [\"anthropic/claude-sonnet-5-5\", \"openai/gpt-6-sol\"]\nweights = [3, 1]\n")
	c, err := app.ConfigFromFile(good, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r, ok := c.Routes.Get("gw/sonnet")
	if !ok || len(r.Members) != 2 || r.Members[1] != (route.Target{Vendor: "openai", Model: "gpt-6-sol"}) || len(r.Weights) != 2 || c.RPM != 60 {
		t.Fatalf("route %+v, rpm %d", r, c.RPM)
	}
	for name, text := range map[string]string{
		"noprefix.toml": "[routes.\"sonnet\"]\nmodels = [\"openai/gpt-6-sol\"]\n",
		"badmodel.toml": "[routes.\"gw/x\"]\nmodels = [\"gpt-6-sol\"]\n",
		"weights.toml":  "[routes.\"gw/x\"]\nmodels = [\"openai/gpt-6-sol\"]\nweights = [1, 2]\n",
		"unknown.toml":  "[routes.\"gw/x\"]\nmodels = [\"openai/gpt-6-sol\"]\norder = \"random\"\n",
		"empty.toml":    "[routes.\"gw/x\"]\nmodels = []\n",
	} {
		if _, err := app.ConfigFromFile(write(name, text), func(string) string { return "" }); err == nil {
			t.Errorf("%s accepted", name)
		}
	}

	e := newEnv(t, func(cfg *app.Config) { cfg.Routes = c.Routes })
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID          string                  `json:"id"`
			OwnedBy     string                  `json:"owned_by"`
			RouteModels []string                `json:"route_models"`
			Pricing     struct{ Output string } `json:"pricing"`
		} `json:"data"`
	}
	if err := json.Unmarshal(readAll(t, resp.Body), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range list.Data {
		if m.ID == "gw/sonnet" {
			found = m.OwnedBy == "gateway" && len(m.RouteModels) == 2 && m.Pricing.Output != ""
		}
	}
	if !found {
		t.Fatalf("GET /v1/models does not list gw/sonnet with its members: %+v", list.Data)
	}
	// An unknown route is a 400 naming it.
	resp = e.post("/v1/chat/completions", e.key, chatBody("gw/nope", "hi", false, ""))
	if b := readAll(t, resp.Body); resp.StatusCode != 400 || !bytes.Contains(b, []byte("no such route")) {
		t.Fatalf("unknown route: %d %s", resp.StatusCode, b)
	}
}
