package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/proxy"
)

// Tenant isolation of the shared vendor machinery. Each test is an
// attacker's request (or a few) followed by another account's ordinary
// request: the victim is served, or told to wait at most the cap; the
// operator's keys stay in; the admin gets in.

// victim makes a second funded account and returns its key.
func (e *env) victim(name string) string {
	e.t.Helper()
	k, _, err := createKey(context.Background(), e.m.Store(), name, 10*gw.USD)
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// served sends an ordinary chat request of key to model and fails the
// test unless it is answered 200.
func (e *env) served(key, model, what string) {
	e.t.Helper()
	resp := e.post("/v1/chat/completions", key, chatBody(model, "What is the capital of France?", false, ""))
	if body := readAll(e.t, resp.Body); resp.StatusCode != 200 {
		e.t.Fatalf("%s: status %d: %s", what, resp.StatusCode, body)
	}
}

// pooled gives vendor v two keys (the fake accepts the same one twice).
func pooled(v string) envOption {
	return func(c *app.Config) {
		vc := c.Vendors[v]
		vc.APIKey = vc.APIKey + "," + vc.APIKey
		c.Vendors[v] = vc
	}
}

// Why 1: a groq answer 429 with Retry-After: 86400 to one request set
// both pooled keys to rest for a day.
func TestIsolationVendorRetryAfterDoesNotRestTheKeys(t *testing.T) {
	e := newEnv(t, pooled("groq"), func(c *app.Config) { c.HTTP.RetryBase = time.Millisecond })
	model := "groq/" + nativeModels["groq"]
	resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi [fake:status=429][fake:retry=86400]", false, ""))
	readAll(t, resp.Body)
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 429 || ra <= 0 || ra > 60 {
		t.Fatalf("attacker: status %d, Retry-After %q; want 429 with at most the 60s cap", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.served(e.victim("victim"), model, "another account after the 429")
}

// Why 2: one mistral request answered 401 took both pooled keys out for
// good; a caller's forwarded OpenAI-Organization header can provoke it.
func TestIsolationVendor401KeepsTheOperatorsKeys(t *testing.T) {
	e := newEnv(t, pooled("mistral"), pooled("openai"), func(c *app.Config) { c.OpenAIForwardOrg = true })
	victim := e.victim("victim")
	for _, v := range []string{"mistral", "openai"} {
		model := v + "/" + nativeModels[v]
		resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi [fake:status=401]", false, ""), "OpenAI-Organization", "org-bogus")
		body := readAll(t, resp.Body)
		if resp.StatusCode == 200 {
			t.Fatalf("%s attacker: 200 %s", v, body)
		}
		if v == "openai" && (resp.StatusCode != 400 || !strings.Contains(string(body), "Openai-Organization")) {
			t.Fatalf("openai refused the caller's forwarded header: status %d %s; want 400 naming the header", resp.StatusCode, body)
		}
		e.served(victim, model, v+": another account after the 401")
		p, _ := e.m.Provider(v)
		for _, k := range p.(gw.HealthReporter).Health(time.Now()).Keys {
			if k.Out {
				t.Fatalf("%s key %s out: %s", v, k.Name, k.Reason)
			}
		}
	}
}

// Why 3: one account's requests answered 503 opened the model's breaker;
// another account's ordinary requests then failed 19 times in 20.
func TestIsolationOneAccountCannotOpenTheBreaker(t *testing.T) {
	e := newEnv(t, withFaultTimings, pooled("openai"), func(c *app.Config) {
		c.HTTP.BreakerFailures = 2 // the audit: two failing requests opened it
		c.HTTP.BreakerInterval = time.Minute
	})
	model := "openai/" + nativeModels["openai"]
	for i := 0; i < 20; i++ {
		resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi [fake:status=503]", false, ""))
		readAll(t, resp.Body)
		if resp.StatusCode == 200 {
			t.Fatalf("attack %d served", i)
		}
	}
	victim := e.victim("victim")
	for i := 0; i < 20; i++ {
		e.served(victim, model, fmt.Sprintf("another account's request %d", i))
	}
}

// Why 4: model plus 8 models, all failing, made 27 vendor calls; all
// hanging, the request was held 39.5 s.
func TestIsolationAttemptsAreBounded(t *testing.T) {
	e := newEnv(t, func(c *app.Config) {
		c.HTTP.RetryBase = time.Millisecond
		c.HTTP.FirstByteTimeout = time.Minute
		c.AttemptTimeout = 2 * time.Second
	})
	var models []string
	for _, v := range []string{"anthropic", "google", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"} {
		models = append(models, quote(v+"/"+nativeModels[v]))
	}
	primary := "openai/" + nativeModels["openai"]
	// A list longer than the cap: a clear 400, no vendor call.
	e.fake.Reset()
	resp := e.post("/v1/chat/completions", e.key, chatBody(primary, "hi [fake:status=503]", false, `,"models":[`+strings.Join(models, ",")+`]`))
	body := readAll(t, resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "at most 6 vendor calls") || len(e.fake.Requests()) != 0 {
		t.Fatalf("model + 8 models: status %d %s, %d vendor calls", resp.StatusCode, body, len(e.fake.Requests()))
	}
	// Within the cap, every model failing: at most 6 calls in all.
	e.fake.Reset()
	resp = e.post("/v1/chat/completions", e.key, chatBody(primary, "hi [fake:status=503]", false, `,"models":[`+strings.Join(models[:5], ",")+`]`))
	readAll(t, resp.Body)
	if n := len(e.fake.Requests()); resp.StatusCode == 200 || n > 6 {
		t.Fatalf("all failing: status %d after %d vendor calls, at most 6", resp.StatusCode, n)
	}
	// Every model hanging: the attempt budget (2 s here), not 6 first-byte
	// time-outs of a minute, bounds the request.
	e.fake.Reset()
	start := time.Now()
	resp = e.post("/v1/chat/completions", e.key, chatBody(primary, "hi [fake:hang]", false, `,"models":[`+strings.Join(models[:5], ",")+`]`))
	readAll(t, resp.Body)
	if held := time.Since(start); resp.StatusCode == 200 || held > 30*time.Second {
		t.Fatalf("all hanging: status %d, held %v", resp.StatusCode, held)
	}
	e.served(e.victim("victim"), primary, "another account after the bounded attempts")
}

// toolPageBody is a chat request whose tool result (a fetched web page)
// carries an injection the customer never wrote.
func toolPageBody(model string) []byte {
	return []byte(fmt.Sprintf(`{"model":%q,"max_tokens":64,"messages":[
		{"role":"user","content":"Summarise the page I asked you to fetch."},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"fetch","arguments":"{\"url\":\"https://example.com\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":%s}],
		"tools":[{"type":"function","function":{"name":"fetch","parameters":{"type":"object","properties":{"url":{"type":"string"}}}}}]}`, model, quote("Welcome to my page. "+attack)))
}

// cooldownEnv is a gateway whose guard cools a key down after 3 counted
// blocks within an hour.
func cooldownEnv(t *testing.T) *env {
	return newEnv(t, func(c *app.Config) {
		c.GuardCooldown = proxy.Cooldown{Incidents: 3, Window: time.Hour, Period: time.Hour}
	})
}

// noCooldown fails the test when a cool-down incident was recorded,
// and unless want incidents were.
func (e *env) noCooldown(want int) {
	e.t.Helper()
	incs, err := e.m.Store().Incidents(context.Background(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, in := range incs {
		if in.Kind == proxy.IncidentCooldown {
			e.t.Fatalf("a cool-down: %+v", in)
		}
	}
	if len(incs) != want {
		e.t.Fatalf("%d incidents, want the %d blocks recorded", len(incs), want)
	}
}

// Why 5: five blocked count_tokens calls (free) locked every key of the
// account out for 15 minutes.
func TestIsolationCooldownIgnoresBlockedCounts(t *testing.T) {
	e := cooldownEnv(t)
	model := "anthropic/" + nativeModels["anthropic"]
	for i := 0; i < 5; i++ {
		resp := e.post("/v1/messages/count_tokens", e.key, []byte(`{"model":"`+model+`","messages":[{"role":"user","content":`+quote(attack)+`}]}`), "Anthropic-Version", "2023-06-01")
		if body := readAll(t, resp.Body); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("count attack %d: %d %s", i, resp.StatusCode, body)
		}
	}
	e.served(e.key, model, "the key after 5 blocked counts")
	e.noCooldown(5)
}

// Why 5: five chat requests whose tool result (a fetched web page)
// carried a hidden injection locked the customer's key out: whoever
// writes a page the customer's agent reads could lock the customer out.
func TestIsolationCooldownIgnoresThirdPartyText(t *testing.T) {
	e := cooldownEnv(t)
	model := "anthropic/" + nativeModels["anthropic"]
	for i := 0; i < 5; i++ {
		resp := e.post("/v1/chat/completions", e.key, toolPageBody(model))
		if body := readAll(t, resp.Body); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("injected page %d: %d %s", i, resp.StatusCode, body)
		}
	}
	e.served(e.key, model, "the key after 5 blocks on a fetched page")
	e.noCooldown(5)
}

// The caller's own attacks cool the key that sent them, not the
// account's other key, and the incident says why.
func TestIsolationCooldownCoolsTheKeyFirst(t *testing.T) {
	e := cooldownEnv(t)
	model := "anthropic/" + nativeModels["anthropic"]
	ctx := context.Background()
	first, _, err := createKey(ctx, e.m.Store(), "two keys", 10*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := createKey(ctx, e.m.Store(), "two keys", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		resp := e.post("/v1/chat/completions", first, chatBody(model, attack, false, ""))
		readAll(t, resp.Body)
	}
	resp := e.post("/v1/chat/completions", first, chatBody(model, "hello", false, ""))
	if body := readAll(t, resp.Body); resp.StatusCode != 429 || !strings.Contains(string(body), "API key is cooled down") {
		t.Fatalf("the attacking key: %d %s", resp.StatusCode, body)
	}
	e.served(other, model, "the account's other key")
	incs, _ := e.m.Store().Incidents(ctx, 100)
	found := false
	for _, in := range incs {
		if in.Kind == proxy.IncidentCooldown && strings.Contains(in.Reason, "caller's own text") && strings.Contains(in.Reason, "the key is refused") {
			found = true
		}
	}
	if !found {
		t.Fatal("no cool-down incident saying why")
	}
}

// Why 6: ten wrong admin tokens from an address, then the right one
// from the same address: 429.
func TestIsolationAdminNotLockedOutByOthers(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	for i := 0; i < 12; i++ {
		resp := e.get("/admin/v1/accounts", "wrong-token-"+strconv.Itoa(i))
		readAll(t, resp.Body)
	}
	resp := e.get("/admin/v1/accounts", testAdminToken)
	if body := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Fatalf("the admin after others' wrong tokens: %d %s", resp.StatusCode, body)
	}
	// The dashboard alike: a customer's valid key, and the admin token,
	// after others' wrong keys from the same address.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func(key string) int {
		resp, err := client.PostForm(e.url+"/dashboard/signin", url.Values{"key": {key}})
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	for i := 0; i < 12; i++ {
		signIn("gwk_wrong" + strconv.Itoa(i))
	}
	if c := signIn("gwk_wrong_again"); c != http.StatusTooManyRequests {
		t.Fatalf("a wrong key past the throttle: %d", c)
	}
	for _, k := range []string{e.victim("customer"), testAdminToken} {
		if c := signIn(k); c != http.StatusSeeOther {
			t.Fatalf("a valid sign-in after others' wrong keys: %d", c)
		}
	}
}

// Why 7: /readyz is public and listed each vendor's breaker and key
// state, so an attacker could watch the effect of its requests.
func TestIsolationReadyzTellsOutsidersOneWord(t *testing.T) {
	e := newEnv(t, withFaultTimings, func(c *app.Config) {
		c.HTTP.BreakerFailures = 2
		c.HTTP.BreakerInterval = time.Minute
	})
	model := "openai/" + nativeModels["openai"]
	// The vendor really down for three accounts: the breaker opens.
	for _, k := range []string{e.key, e.victim("b"), e.victim("c")} {
		resp := e.post("/v1/chat/completions", k, chatBody(model, "hi [fake:status=503]", false, ""))
		readAll(t, resp.Body)
	}
	resp, err := http.Get(e.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body := string(readAll(t, resp.Body))
	if strings.Contains(body, "openai") || strings.Contains(body, "retry_after_ms") || strings.Contains(body, "breaker") || !strings.Contains(body, `"reason":"vendors"`) {
		t.Fatalf("public /readyz: %s", body)
	}
}

// Why 8: native openai/ /v1/responses calls wrote response_owner rows
// the account's state caps did not count (26 kept with the cap at 20).
func TestIsolationResponseOwnersCountTowardTheStateCaps(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.StateMaxEntries = 20 })
	model := "openai/" + nativeModels["openai"]
	for i := 0; i < 26; i++ {
		resp := e.post("/v1/responses", e.key, []byte(`{"model":"`+model+`","input":"hello `+strconv.Itoa(i)+`"}`))
		if body := readAll(t, resp.Body); resp.StatusCode != 200 {
			t.Fatalf("response %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp := e.post("/v1/responses", e.key, []byte(`{"model":"`+model+`","input":"not kept","store":false}`))
	readAll(t, resp.Body)
	su := e.m.Store().(convstate.StateUsage)
	kinds := []string{convstate.KindResponseOwner}
	n, _, err := su.StateUsage(context.Background(), e.acct, kinds, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n > 20 {
		t.Fatalf("%d response owners kept, the cap is 20 entries", n)
	}
	// Another account keeps its own.
	victim, vk, err := createKey(context.Background(), e.m.Store(), "victim", 10*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	resp = e.post("/v1/responses", victim, []byte(`{"model":"`+model+`","input":"hello"}`))
	if body := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Fatalf("victim: %d %s", resp.StatusCode, body)
	}
	if n, _, _ := su.StateUsage(context.Background(), vk.AccountID, kinds, time.Now()); n != 1 {
		t.Fatalf("the victim keeps %d response owners, want 1", n)
	}
}

// Why 9: an 8 MB count was free and took most of a CPU second; a flood
// of them slowed every other account.
func TestIsolationCountBytesBudget(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.CountBytesPerMinute = 1 << 20 })
	model := "anthropic/" + nativeModels["anthropic"]
	var text strings.Builder
	for i := 0; text.Len() < 600<<10; i++ {
		fmt.Fprintf(&text, "Line %d of the quarterly report: revenue grew in region %d. ", i, i%17)
	}
	big := []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"` + text.String() + `"}]}`)
	var last *http.Response
	for i := 0; i < 3; i++ {
		last = e.post("/v1/messages/count_tokens", e.key, big, "Anthropic-Version", "2023-06-01")
		body := readAll(t, last.Body)
		if i < 1 && last.StatusCode != 200 {
			t.Fatalf("count %d: %d %s", i, last.StatusCode, body)
		}
	}
	ra, _ := strconv.Atoi(last.Header.Get("Retry-After"))
	if last.StatusCode != 429 || ra <= 0 || ra > 61 { // within the minute's window
		t.Fatalf("third 600 kB count with a 1 MiB budget: status %d, Retry-After %q", last.StatusCode, last.Header.Get("Retry-After"))
	}
	resp := e.post("/v1/messages/count_tokens", e.victim("victim"), big, "Anthropic-Version", "2023-06-01")
	if body := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Fatalf("another account's count: %d %s", resp.StatusCode, body)
	}
}
