package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/browsertest"
)

// The operator's round trip in a real browser: the administrator signs in,
// creates an account, tops it up, creates a key and rotates it; the new
// secret works on both endpoints; then the customer signs in with it and
// sees its requests with their charges, never the vendor cost. With
// GATEWAY_DASHBOARD_SCREENSHOTS=<dir> it saves 1280 px screenshots.
func TestAdminRoundTripInBrowser(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken }, withOptimizer)
	parent, stop := context.WithTimeout(t.Context(), 120*time.Second)
	defer stop()
	ctx := browsertest.Start(t, parent)
	shots := os.Getenv("GATEWAY_DASHBOARD_SCREENSHOTS")
	save := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	// submit clicks a form's button and waits for the page that answers.
	submit := func(what, button string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__gwOld = true`)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		do(what, chromedp.Click(chromedp.CSS(button)))
		for deadline := time.Now().Add(15 * time.Second); ; {
			// Errors while the page navigates are expected: try again.
			done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__gwOld === undefined && document.readyState === "complete"`))
			if err == nil && done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no answer page (%v)", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	signIn := func(secret string) {
		do("sign in", chromedp.Navigate(e.url+"/dashboard"), chromedp.WaitVisible(chromedp.CSS("#key")),
			chromedp.SendKeys(chromedp.CSS("#key"), secret),
			chromedp.Click(chromedp.CSS(`.signin-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("main")))
	}

	do("viewport", chromedp.EmulateViewport(1280, 900))
	signIn(testAdminToken)
	do("open accounts", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/dashboard/accounts"]`)), chromedp.WaitVisible(chromedp.CSS(`form[aria-label="New account"]`)))
	do("name the account", chromedp.SendKeys(chromedp.CSS(`form[aria-label="New account"] input[name=name]`), "initech"))
	submit("create the account", `form[aria-label="New account"] button`)
	do("fill the top-up",
		chromedp.SendKeys(chromedp.CSS(`form[aria-label="Top up initech"] input[name=amount_usd]`), "5"),
		chromedp.SendKeys(chromedp.CSS(`form[aria-label="Top up initech"] input[name=reference]`), "inv-42"))
	submit("top it up", `form[aria-label="Top up initech"] button`)
	if got := text(".notice.ok"); !strings.Contains(got, "Added $5.00000000 to initech") {
		t.Fatalf("after the top-up: %q", got)
	}
	do("name the key", chromedp.SendKeys(chromedp.CSS(`form[aria-label="New key for initech"] input[name=name]`), "web"))
	submit("create a key", `form[aria-label="New key for initech"] button`)
	first := text("#new-secret")
	if !strings.HasPrefix(first, "gwk_") {
		t.Fatalf("new key secret %q", first)
	}
	submit("rotate it", `#acct-`+acctID(t, e, "initech")+` form[action$="/rotate"] button`)
	second := text("#new-secret")
	if !strings.HasPrefix(second, "gwk_") || second == first {
		t.Fatalf("rotated secret %q (first %q)", second, first)
	}
	save("accounts")
	fitsPage(t, ctx, "accounts")

	for _, r := range []struct{ path, body string }{
		{"/v1/chat/completions", string(chatBody("openai/"+nativeModels["openai"], "Hello", false, ""))},
		{"/v1/messages", string(messagesBody("anthropic/"+nativeModels["anthropic"], "Hello", false, ""))},
	} {
		resp := e.post(r.path, second, []byte(r.body))
		readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s with the rotated key: %d", r.path, resp.StatusCode)
		}
	}
	if resp := e.post("/v1/chat/completions", first, chatBody("openai/"+nativeModels["openai"], "Hello", false, "")); resp.StatusCode != http.StatusOK {
		readAll(t, resp.Body)
		t.Fatalf("the old secret in its grace period: %d", resp.StatusCode)
	} else {
		readAll(t, resp.Body)
	}

	do("sign out", chromedp.Click(chromedp.CSS(`.who button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#key")))
	signIn(second)
	do("customer logs", chromedp.WaitVisible(chromedp.CSS("table.logs")))
	body := text("body")
	if n := strings.Count(body, "/v1/"); n < 3 {
		t.Errorf("the customer's logs show %d requests, want 3:\n%s", n, body)
	}
	for _, hidden := range []string{"Vendor cost", "Markup", "markup"} {
		if strings.Contains(body, hidden) {
			t.Errorf("the customer's logs show %q", hidden)
		}
	}
	charges, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.logs tbody td.money")].map(td => td.title)`))
	if err != nil || len(charges) != 3 {
		t.Fatalf("charge cells %v, %v", charges, err)
	}
	for _, c := range charges {
		if c == "$0.00000000" || !strings.HasPrefix(c, "$0.") {
			t.Errorf("a request's charge is %q", c)
		}
	}
	// One precision in the Charge column: every cell shows its exact
	// amount (eight decimals), the same as its title.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.logs tbody td.money")].map(td => td.textContent.trim())`))
	exact := regexp.MustCompile(`^\$\d+\.\d{8}$`)
	for i, c := range shown {
		if err != nil || !exact.MatchString(c) || c != charges[i] {
			t.Errorf("charge cell %q (title %q): want the exact amount, eight decimals", c, charges[i])
		}
	}
	// Reconciliation: the optimizer's directive is counted in the vendor's
	// input tokens, shown beside them and not billed.
	recs, err := e.m.Store().Records(t.Context(), gw.RecordFilter{AccountID: acctID(t, e, "initech")})
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %v, %v", len(recs), err)
	}
	directives, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.logs tbody tr")].map(tr => (tr.querySelector("td.num .sub") || {textContent: ""}).textContent.trim())`))
	if err != nil || len(directives) != 3 {
		t.Fatalf("input cells %v, %v", directives, err)
	}
	for i, r := range recs {
		if r.Usage.OptimizerTokens == 0 {
			t.Fatalf("%s: the optimizer was on, no directive tokens", r.RequestID)
		}
		if want := strconv.FormatInt(r.Usage.OptimizerTokens, 10) + " free"; directives[i] != want {
			t.Errorf("row %d (%s): directive %q, want %q", i, r.RequestID, directives[i], want)
		}
	}
	save("customer-logs")
	fitsPage(t, ctx, "the customer's logs")
	do("customer activity", chromedp.Click(chromedp.CSS(`nav.tabs a[href^="/dashboard/activity"]`)), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if strings.Contains(text("body"), "Vendor cost") {
		t.Error("the customer's activity shows the vendor cost")
	}
	save("customer-activity")

	// Revoking from the accounts page asks first; only the confirmation
	// revokes.
	do("sign out again", chromedp.Click(chromedp.CSS(`.who button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#key")))
	signIn(testAdminToken)
	do("accounts again", chromedp.Click(chromedp.CSS(`nav.tabs a[href="/dashboard/accounts"]`)), chromedp.WaitVisible(chromedp.CSS(`form[aria-label="New account"]`)))
	var liveID string
	for _, k := range mustKeys(t, e) {
		if k.Hint == auth.Hint(second) {
			liveID = k.ID
		}
	}
	submit("ask to revoke", `form[action="/dashboard/keys/`+liveID+`/revoke"] button`)
	if got := text("#confirm-revoke"); !strings.Contains(got, "Revoke key "+liveID+"?") {
		t.Fatalf("no confirmation: %q", got)
	}
	save("revoke-confirm")
	if resp := e.post("/v1/chat/completions", second, chatBody("openai/"+nativeModels["openai"], "Hello", false, "")); resp.StatusCode != http.StatusOK {
		t.Fatalf("the key stopped working before the confirmation: %d", resp.StatusCode)
	} else {
		readAll(t, resp.Body)
	}
	submit("confirm the revocation", `#confirm-revoke button[type="submit"]`)
	if got := text(".notice.ok"); !strings.Contains(got, "Revoked "+liveID) {
		t.Fatalf("after the confirmation: %q", got)
	}
	resp := e.post("/v1/chat/completions", second, chatBody("openai/"+nativeModels["openai"], "Hello", false, ""))
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", resp.StatusCode)
	}
}

// mustKeys lists the store's keys.
func mustKeys(t *testing.T, e *env) []gw.Key {
	t.Helper()
	keys, err := e.m.Store().Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// fitsPage fails when a table on the page is wider than its box at the
// viewport's width.
func fitsPage(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(0, ...[...document.querySelectorAll(".table-wrap")].map(w => w.scrollWidth - w.clientWidth), document.documentElement.scrollWidth - document.documentElement.clientWidth)`))
	if err != nil {
		t.Fatalf("%s: measure: %v", what, err)
	}
	if over > 0 {
		t.Errorf("%s overflows by %.0f px at 1280 px", what, over)
	}
}

// acctID returns the id of the named account.
func acctID(t *testing.T, e *env, name string) string {
	t.Helper()
	a, err := e.m.Store().AccountByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
