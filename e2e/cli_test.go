package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/cli"
	"github.com/gwlabs/gateway/internal/clitest"
	"github.com/gwlabs/gateway/ratecard"
)

// cliRun runs one command line on the store at db, in an environment
// with no settings.
func cliRun(t *testing.T, db string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	clitest.Env(t)
	var out, errb strings.Builder
	if db != "" {
		args = append(args, "--db", db)
	}
	err = cli.Run(t.Context(), args, &out, &errb)
	return out.String(), errb.String(), err
}

// runCLI runs one command line on the store at db, or through the admin API
// at server (with the test's admin token), as the process would: the
// exit status is main's.
func runCLI(t *testing.T, db, server string, args ...string) clitest.Result {
	t.Helper()
	clitest.Env(t)
	if server != "" {
		t.Setenv("GATEWAY_ADMIN_TOKEN", testAdminToken)
		args = append(args, "--server", server)
	} else if db != "" {
		args = append(args, "--db", db)
	}
	return clitest.Run(t, cli.Command, args...)
}

// Each request's log line names the account and key; GATEWAY_LOG_FORMAT
// =json writes JSON lines.
func TestRequestLogNamesAccountAndKey(t *testing.T) {
	e := newEnv(t)
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	if !strings.Contains(e.logs.String(), "account_id="+e.acct) || !strings.Contains(e.logs.String(), "key_id=key_") {
		t.Errorf("request log lacks the account and key:\n%s", e.logs.String())
	}
	var buf strings.Builder
	app.NewLogger(&buf, "info", "json").Info("request", "account_id", "acct_1")
	var line map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &line); err != nil || line["account_id"] != "acct_1" {
		t.Errorf("json log line %q: %v", buf.String(), err)
	}
}

// The CLI gives the same output through the admin API (--server) as on
// the store.
func TestCLIThroughTheAdminAPI(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	direct, _, err := cliRun(t, e.m.Config.DatabaseURL, "accounts", "show", "acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GATEWAY_ADMIN_TOKEN", testAdminToken)
	var out, errb strings.Builder
	if err := cli.Run(t.Context(), []string{"--server", e.url, "accounts", "show", "acme", "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != direct {
		t.Errorf("through the API:\n%s\non the store:\n%s", out.String(), direct)
	}
	out.Reset()
	if err := cli.Run(t.Context(), []string{"--server", e.url, "keys", "create", "--account", "viaapi", "--name", "n", "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var k cli.CreatedKeyJSON
	if err := json.Unmarshal([]byte(out.String()), &k); err != nil || !k.AccountCreated || k.Name != "n" || !strings.HasPrefix(k.Secret, "gwk_") {
		t.Errorf("keys create through the API: %q, %v", out.String(), err)
	}
	t.Setenv("GATEWAY_ADMIN_TOKEN", "")
	if err := cli.Run(t.Context(), []string{"--server", e.url, "keys", "list"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "admin token") {
		t.Errorf("--server without a token: %v", err)
	}
}

// blockedIncident sends an attack with e's key and returns the incident
// id of the 403.
func blockedIncident(t *testing.T, e *env) string {
	t.Helper()
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], attack, false, ""))
	body := readAll(t, resp.Body)
	var env struct {
		Error struct {
			IncidentID string `json:"incident_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != http.StatusForbidden || env.Error.IncidentID == "" {
		t.Fatalf("attack: %d %s", resp.StatusCode, body)
	}
	return env.Error.IncidentID
}

// Every printing command's --json is one clean JSON document on stdout,
// in the admin API's shapes (lists as {"data": [...]}), with nothing on
// stderr; keys update reports the key's real use and spend.
func TestCLIJSONIsOneDocument(t *testing.T) {
	e := newEnv(t)
	db := e.m.Config.DatabaseURL
	// Use the env's key so that its requests and spend are not zero.
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	inc := blockedIncident(t, e)
	var keys clitest.List[admin.Key]
	if r := runCLI(t, db, "", "keys", "list", "--json"); clitest.OneJSON(r.Stdout, &keys) != nil || len(keys.Data) != 1 {
		t.Fatalf("keys list: %+v", r)
	}
	used := keys.Data[0]
	if used.Requests != 2 || used.SpendUSD == "0.00000000" {
		t.Fatalf("the used key: %+v", used)
	}
	embedded, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	var cardJSON bytes.Buffer
	if err := embedded.WriteJSON(&cardJSON); err != nil {
		t.Fatal(err)
	}
	card := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(card, bytes.Replace(cardJSON.Bytes(), []byte(`"input": "2.00"`), []byte(`"input": "2.20"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		into any
		want func(any) bool
	}{
		{[]string{"accounts", "create", "json-co"}, &admin.Account{}, nil},
		{[]string{"accounts", "list"}, &clitest.List[admin.Account]{}, func(v any) bool { return len(v.(*clitest.List[admin.Account]).Data) == 2 }},
		{[]string{"accounts", "show", "acme"}, &admin.Account{}, nil},
		{[]string{"balance", "add", "--account", "json-co", "--usd", "1.5"}, &admin.TopUpResult{}, nil},
		{[]string{"balance", "show", "--account", "json-co"}, &admin.Account{}, nil},
		{[]string{"balance", "history", "--account", "acme"}, &admin.LedgerPage{}, func(v any) bool { return len(v.(*admin.LedgerPage).Data) >= 2 }},
		{[]string{"keys", "create", "--account", "json-co", "--guard", "monitor", "--expires-in", "30d"}, &cli.CreatedKeyJSON{}, func(v any) bool {
			k := v.(*cli.CreatedKeyJSON)
			return k.Guard != nil && k.Guard.Mode == "monitor" && k.EndsAt != nil && k.EndsAt.Sub(time.Now()) > 29*24*time.Hour
		}},
		{[]string{"keys", "list"}, &clitest.List[admin.Key]{}, nil},
		{[]string{"keys", "show", used.ID}, &admin.Key{}, func(v any) bool { return v.(*admin.Key).Requests == 2 }},
		{[]string{"keys", "update", used.ID, "--optimize", "off"}, &admin.Key{}, func(v any) bool {
			k := v.(*admin.Key)
			return k.Requests == used.Requests && k.SpendUSD == used.SpendUSD && k.Optimize == "off"
		}},
		{[]string{"keys", "update", used.ID, "--guard", "monitor"}, &admin.Key{}, func(v any) bool {
			k := v.(*admin.Key)
			return k.Guard.Mode == "monitor" && k.Requests == used.Requests
		}},
		{[]string{"keys", "update", "--account", "acme", "--guard-scope", "user"}, &admin.Account{}, func(v any) bool { return v.(*admin.Account).Guard.Scope == "user" }},
		{[]string{"incidents", "list"}, &clitest.List[admin.Incident]{}, func(v any) bool { return len(v.(*clitest.List[admin.Incident]).Data) == 1 }},
		{[]string{"incidents", "show", inc}, &admin.Incident{}, nil},
		{[]string{"incidents", "review", inc, "--verdict", "confirmed", "--note", "seen"}, &admin.Incident{}, func(v any) bool {
			r := v.(*admin.Incident).Review
			return r != nil && r.Verdict == "confirmed" && r.Note == "seen"
		}},
		{[]string{"models"}, &clitest.List[map[string]any]{}, func(v any) bool { return len(v.(*clitest.List[map[string]any]).Data) > 9 }},
		{[]string{"ratecard", "check", card}, &cli.RatecardCheckJSON{}, func(v any) bool {
			c := v.(*cli.RatecardCheckJSON)
			return c.Valid && len(c.Changes) == 1 && c.Changes[0].New == "2.20"
		}},
		{[]string{"config", "check"}, &struct {
			Valid    bool          `json:"valid"`
			Settings []app.Setting `json:"settings"`
		}{}, nil},
		{[]string{"version"}, &app.BuildInfo{}, func(v any) bool {
			b := v.(*app.BuildInfo)
			return b.Version != "" && strings.HasPrefix(b.GoVersion, "go")
		}},
		{[]string{"keys", "rotate", used.ID, "--grace", "1w"}, &admin.CreatedKey{}, func(v any) bool {
			k := v.(*admin.CreatedKey)
			return k.Replaces != nil && k.Replaces.Requests == 2 && k.Replaces.EndsAt.Sub(time.Now()) > 6*24*time.Hour
		}},
		{[]string{"keys", "revoke", used.ID}, &admin.Key{}, func(v any) bool { return v.(*admin.Key).Status == "revoked" }},
	} {
		r := runCLI(t, db, "", append(c.args, "--json")...)
		if r.Status != 0 || r.Stderr != "" {
			t.Errorf("%v --json: status %d, stderr %q", c.args, r.Status, r.Stderr)
			continue
		}
		if err := clitest.OneJSON(r.Stdout, c.into); err != nil {
			t.Errorf("%v --json: %v in %.300q", c.args, err, r.Stdout)
			continue
		}
		if c.want != nil && !c.want(c.into) {
			t.Errorf("%v --json: %s", c.args, r.Stdout)
		}
	}
	// The list commands' JSON is {"data": [...]}, as docs/OPERATIONS.md says.
	for _, args := range [][]string{{"accounts", "list"}, {"keys", "list"}, {"incidents", "list"}} {
		var m map[string]json.RawMessage
		if r := runCLI(t, db, "", append(args, "--json")...); clitest.OneJSON(r.Stdout, &m) != nil || len(m) != 1 || m["data"] == nil {
			t.Errorf("%v --json is not {\"data\": [...]}: %s", args, r.Stdout)
		}
	}
}

// Failures go to stderr with an exit status by kind and a message that
// names the problem; stdout stays empty.
func TestCLIErrorsByKind(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if r := runCLI(t, db, "", "keys", "create", "--account", "acme", "--json"); r.Status != 0 {
		t.Fatal(r)
	}
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"balance", "add", "--account", "acme", "--usd", "1.123456789"}, cli.ExitUsage, "at most 8"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "-5"}, cli.ExitUsage, "negative amounts are not allowed"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "five"}, cli.ExitUsage, "not an amount of US dollars"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "0"}, cli.ExitUsage, "more than 0"},
		{[]string{"keys", "create", "--account", "acme", "--expires-in", "30x"}, cli.ExitUsage, "d (days) or w (weeks)"},
		{[]string{"keys", "create", "--name", "x"}, cli.ExitUsage, "--account"},
		{[]string{"keys", "update", "key_nope"}, cli.ExitUsage, "nothing to change"},
		{[]string{"keys", "bogus"}, cli.ExitUsage, "unexpected argument"},
		{[]string{"keys", "show", "key_nope"}, cli.ExitNotFound, `no key "key_nope"`},
		{[]string{"keys", "revoke", "key_nope"}, cli.ExitNotFound, `no key "key_nope"`},
		{[]string{"incidents", "show", "inc_nope"}, cli.ExitNotFound, `no incident "inc_nope"`},
		{[]string{"balance", "add", "--account", "acmee", "--usd", "5"}, cli.ExitNotFound, `no account "acmee"`},
		{[]string{"accounts", "create", "acme"}, cli.ExitRefused, `an account named "acme" exists`},
	} {
		for _, asJSON := range []bool{false, true} {
			args := c.args
			if asJSON {
				args = append(args[:len(args):len(args)], "--json")
			}
			r := runCLI(t, db, "", args...)
			if r.Status != c.status || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
				t.Errorf("%v: status %d (want %d), stderr %q (want %q), stdout %q", args, r.Status, c.status, r.Stderr, c.want, r.Stdout)
			}
		}
	}
	// A usage error shows the command's usage, on stderr.
	if r := runCLI(t, db, "", "balance", "add", "--account", "acme", "--usd", "-5"); !strings.Contains(r.Stderr, "Usage: gateway balance add") {
		t.Errorf("no usage on stderr: %q", r.Stderr)
	}
	// The admin token refused is exit 4.
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	t.Setenv("GATEWAY_ADMIN_TOKEN", strings.Repeat("w", 40))
	var out, errb strings.Builder
	status := cli.Command(t.Context(), []string{"--server", e.url, "keys", "list", "--json"}, &out, &errb)
	if status != cli.ExitRefused || out.Len() != 0 {
		t.Errorf("a wrong admin token: %s (status %d), stdout %q", errb.String(), status, out.String())
	}
}

// Admin API parity: every CLI command run on the store and through the
// admin API (--server) of a gateway in the same state gives the same
// output, text and JSON, errors and exit statuses included.
func TestAdminAPIParity(t *testing.T) {
	type step struct {
		args []string
		// id, when set, names an id to take from this step's JSON for
		// later steps ("{key}" in their arguments).
		id string
	}
	steps := []step{
		{args: []string{"accounts", "create", "parity", "--json"}},
		{args: []string{"accounts", "create", "parity"}},
		{args: []string{"accounts", "list", "--json"}},
		{args: []string{"accounts", "list"}},
		{args: []string{"accounts", "show", "parity", "--json"}},
		{args: []string{"accounts", "show", "parity"}},
		{args: []string{"balance", "add", "--account", "parity", "--usd", "12.5", "--reference", "inv-1", "--json"}},
		{args: []string{"balance", "add", "--account", "parity", "--usd", "12.5", "--reference", "inv-1"}},
		{args: []string{"balance", "add", "--account", "nobody", "--usd", "1"}},
		{args: []string{"balance", "add", "--account", "newco", "--usd", "1", "--create", "--json"}},
		{args: []string{"balance", "show", "--account", "parity", "--json"}},
		{args: []string{"balance", "history", "--account", "acme", "--json"}},
		{args: []string{"balance", "history", "--account", "acme"}},
		{args: []string{"keys", "create", "--account", "parity", "--name", "k1", "--rpm", "5", "--guard", "monitor", "--guard-scope", "user", "--json"}, id: "key"},
		{args: []string{"keys", "create", "--account", "fresh", "--balance-usd", "2", "--models", "openai/*", "--json"}},
		{args: []string{"keys", "list", "--json"}},
		{args: []string{"keys", "list"}},
		{args: []string{"keys", "show", "{key}", "--json"}},
		{args: []string{"keys", "show", "{key}"}},
		{args: []string{"keys", "show", "key_nope"}},
		{args: []string{"keys", "update", "{key}", "--optimize", "off", "--models", "openai/*,anthropic/*", "--guard-user-threshold", "0.8", "--json"}},
		{args: []string{"keys", "update", "{key}", "--any-model"}},
		{args: []string{"keys", "update", "--account", "parity", "--guard", "off", "--json"}},
		{args: []string{"keys", "update", "--account", "parity", "--guard", "block"}},
		{args: []string{"keys", "update", "{key}", "--guard", "sometimes"}},
		{args: []string{"keys", "create", "--account", "parity", "--daily-budget-usd", "0.01", "--monthly-budget-usd", "0.25", "--json"}, id: "bkey"},
		{args: []string{"keys", "show", "{bkey}"}},
		{args: []string{"keys", "update", "{bkey}", "--daily-budget-usd", "0", "--json"}},
		{args: []string{"keys", "update", "{bkey}", "--monthly-budget-usd", "1.5"}},
		{args: []string{"keys", "update", "{bkey}", "--monthly-budget-usd", "-1"}},
		{args: []string{"keys", "update", "--account", "parity", "--daily-budget-usd", "5", "--json"}},
		{args: []string{"keys", "update", "--account", "parity", "--monthly-budget-usd", "100"}},
		{args: []string{"accounts", "show", "parity"}},
		{args: []string{"keys", "rotate", "{key}", "--grace", "2d", "--json"}},
		{args: []string{"keys", "revoke", "{key}", "--json"}},
		{args: []string{"keys", "rotate", "{key}"}},
		{args: []string{"incidents", "list", "--json"}, id: "inc"},
		{args: []string{"incidents", "list"}},
		{args: []string{"incidents", "show", "{inc}", "--json"}},
		{args: []string{"incidents", "review", "{inc}", "--verdict", "false-positive", "--note", "their own rules", "--json"}},
		{args: []string{"incidents", "review", "{inc}", "--verdict", "confirmed"}},
		{args: []string{"incidents", "show", "{inc}"}},
		{args: []string{"incidents", "show", "inc_nope", "--json"}},
	}
	runAll := func(viaServer bool) []string {
		e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
		blockedIncident(t, e)
		db, server := e.m.Config.DatabaseURL, ""
		if viaServer {
			db, server = "", e.url
		}
		ids := map[string]string{}
		seen := map[string]string{}
		var out []string
		for _, s := range steps {
			args := make([]string, len(s.args))
			for i, a := range s.args {
				for name, v := range ids {
					a = strings.ReplaceAll(a, "{"+name+"}", v)
				}
				args[i] = a
			}
			r := runCLI(t, db, server, args...)
			if s.id != "" {
				var v struct {
					ID   string `json:"id"`
					Data []struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				_ = json.Unmarshal([]byte(r.Stdout), &v)
				if len(v.Data) > 0 {
					v.ID = v.Data[0].ID
				}
				if v.ID == "" {
					t.Fatalf("%v: no id in %q", args, r.Stdout)
				}
				ids[s.id] = v.ID
			}
			stderr := r.Stderr
			if i := strings.Index(stderr, "\nUsage:"); i >= 0 {
				stderr = stderr[:i]
			}
			out = append(out, normalise(strings.Join(s.args, " ")+"\nstatus "+string(rune('0'+r.Status))+"\n"+r.Stdout+"stderr: "+stderr, seen))
		}
		return out
	}
	local, remote := runAll(false), runAll(true)
	for i := range steps {
		if local[i] != remote[i] {
			t.Errorf("on the store:\n%s\nthrough the admin API:\n%s", local[i], remote[i])
		}
	}
	if testing.Verbose() {
		var b bytes.Buffer
		for _, s := range local {
			b.WriteString(s + "\n")
		}
		t.Log(b.String())
	}
}

// A key revoked with the CLI on the store (not through the running
// instance) stops working on the running instance without waiting for
// its key cache's TTL: the instance polls the store's key generation.
// The time it took is logged (DefaultWatchInterval bounds it, plus one
// read).
func TestStoreRevocationReachesRunningInstance(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.KeyCacheTTL = time.Hour })
	chat := func() int {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	if s := chat(); s != http.StatusOK { // the key is now cached for an hour
		t.Fatalf("before: %d", s)
	}
	var keys clitest.List[admin.Key]
	if r := runCLI(t, e.m.Config.DatabaseURL, "", "keys", "list", "--json"); clitest.OneJSON(r.Stdout, &keys) != nil || len(keys.Data) != 1 {
		t.Fatal(r)
	}
	start := time.Now()
	if r := runCLI(t, e.m.Config.DatabaseURL, "", "keys", "revoke", keys.Data[0].ID); r.Status != 0 {
		t.Fatal(r)
	}
	for chat() != http.StatusUnauthorized {
		if time.Since(start) > time.Minute {
			t.Fatal("the revoked key still works a minute later")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("revoked on the store: refused by the running instance after %v", time.Since(start).Round(time.Millisecond))
}

// A guard policy set through the admin API applies to the very next
// request on that instance (its policy cache is emptied).
func TestAdminGuardPolicyAppliesAtOnce(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	attackOnce := func() int {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], attack, false, ""))
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	if s := attackOnce(); s != http.StatusForbidden { // the key's policy (block) is now cached
		t.Fatalf("before: %d", s)
	}
	c := &admin.Client{BaseURL: e.url, Token: testAdminToken}
	keys, err := c.Keys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	k, err := c.UpdateKey(t.Context(), keys[0].ID, admin.KeyUpdate{Guard: &admin.GuardPolicy{Mode: "monitor"}})
	if err != nil || k.Guard == nil || k.Guard.Mode != "monitor" {
		t.Fatalf("update: %+v, %v", k, err)
	}
	if s := attackOnce(); s != http.StatusOK {
		t.Errorf("monitor mode set through the admin API: %d, want 200 at once", s)
	}
	got, err := c.Key(t.Context(), keys[0].ID)
	if err != nil || got.Guard.Mode != "monitor" || got.Requests != 2 {
		t.Errorf("GET key: %+v, %v", got, err)
	}
}

// Issue 38 item 6: --server against a gateway whose admin API is off
// says so (before: "no such endpoint: GET /admin/v1/keys"), and the API
// itself answers 404 with the reason.
func TestServerWithAdminAPIOff(t *testing.T) {
	e := newEnv(t) // no admin token
	r := runCLI(t, "", e.url, "keys", "list")
	if r.Status == 0 || !strings.Contains(r.Stderr, "the admin API is off on the gateway at "+e.url) || !strings.Contains(r.Stderr, "GATEWAY_ADMIN_TOKEN") {
		t.Errorf("keys list --server (admin API off): status %d, stderr %q", r.Status, r.Stderr)
	}
	resp := e.get("/admin/v1/keys", testAdminToken)
	var body struct {
		Error struct {
			Message string
			Details struct {
				ErrorCode string `json:"error_code"`
			}
		}
	}
	if err := json.Unmarshal(readAll(t, resp.Body), &body); err != nil || resp.StatusCode != http.StatusNotFound ||
		body.Error.Details.ErrorCode != "admin_api_off" || !strings.Contains(body.Error.Message, "the admin API is off on this gateway") {
		t.Errorf("GET /admin/v1/keys (off): %d %+v %v", resp.StatusCode, body, err)
	}
}

// Issue 38 item 6: keys update changes a key's rate limits, on the store
// and through the admin API, and the running gateway applies them.
func TestKeysUpdateLimits(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	r := runCLI(t, db, "", "keys", "create", "--account", "acme", "--json")
	var k struct{ ID string }
	if err := json.Unmarshal([]byte(r.Stdout), &k); err != nil || k.ID == "" {
		t.Fatalf("create: %q %v", r.Stdout, err)
	}
	r = runCLI(t, db, "", "keys", "update", k.ID, "--rpm", "7", "--tpm", "9000")
	if r.Status != 0 || !strings.Contains(r.Stdout, "rpm 7, tpm 9000") {
		t.Errorf("update --rpm 7 --tpm 9000: %d %q %q", r.Status, r.Stdout, r.Stderr)
	}
	r = runCLI(t, db, "", "keys", "show", k.ID, "--json")
	var shown struct{ RPM, TPM int64 }
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.RPM != 7 || shown.TPM != 9000 {
		t.Errorf("show after update: %q %v", r.Stdout, err)
	}
	if r := runCLI(t, db, "", "keys", "update", k.ID, "--rpm", "-1"); r.Status != 2 {
		t.Errorf("--rpm -1: status %d %q", r.Status, r.Stderr)
	}

	// Through the admin API (PATCH), on a running gateway: the new
	// limit applies to the key's next requests.
	e := newEnv(t, func(c *app.Config) { c.AdminToken = testAdminToken })
	keys, err := e.m.Store().Keys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v %v", keys, err)
	}
	ok := func() int {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	if s := ok(); s != http.StatusOK {
		t.Fatalf("before: %d", s)
	}
	r = runCLI(t, "", e.url, "keys", "update", keys[0].ID, "--rpm", "2", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.RPM != 2 {
		t.Fatalf("update --rpm 2 --server: %d %q %q", r.Status, r.Stdout, r.Stderr)
	}
	// The request before the update counts in the minute.
	second, third := ok(), ok()
	if second != http.StatusOK || third != http.StatusTooManyRequests {
		t.Errorf("with rpm 2: the second request %d, the third %d; want 200 then 429", second, third)
	}
}

// Issue 38 item 6: GET /openapi.json says the release's version (the
// one scripts/build stamps from VERSION), not "1".
func TestOpenAPIVersionIsStamped(t *testing.T) {
	t.Cleanup(app.Stamp("v9.8.7", ""))
	e := newEnv(t)
	resp := e.get("/openapi.json", "")
	var doc struct {
		Info struct{ Version string }
	}
	if err := json.Unmarshal(readAll(t, resp.Body), &doc); err != nil || doc.Info.Version != "v9.8.7" {
		t.Errorf("info.version %q, %v; want the stamped v9.8.7", doc.Info.Version, err)
	}
}

// idPattern finds what differs between two runs of the same commands:
// ids, secrets, hints and times.
var idPattern = regexp.MustCompile(`(key|acct|inc|req)_[A-Za-z0-9]+|gwk_[A-Za-z0-9]+…?|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// normalise replaces each distinct id with a placeholder numbered by its
// first appearance, so that two runs compare equal when only their ids
// and times differ.
func normalise(s string, seen map[string]string) string {
	return idPattern.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] >= '0' && m[0] <= '9' {
			return "<time>"
		}
		if p, ok := seen[m]; ok {
			return p
		}
		p := "<" + strings.SplitN(m, "_", 2)[0] + string(rune('A'+len(seen)%26)) + strings.Repeat("'", len(seen)/26) + ">"
		seen[m] = p
		return p
	})
}

// Issue 38 item 6: the start-up banner names the store, Redis, the admin
// API, metrics, tracing and the optimizer in force, secrets hidden.
func TestStartupBannerNamesSettings(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cfg, err := app.ConfigFromEnv(func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(t.TempDir(), "g.db")
			cfg.Addr, cfg.DatabaseURL, cfg.FakeVendors, cfg.LogFormat = "127.0.0.1:0", db, true, format
			cfg.AdminToken, cfg.MetricsAddr, cfg.Optimize = testAdminToken, "127.0.0.1:0", false
			cfg.OTelEnv = func(k string) string {
				if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
					return "http://collector:secret-pw@127.0.0.1:1"
				}
				return ""
			}
			var stdout, stderr syncBuffer
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- app.RunServer(ctx, cfg, &stdout, &stderr) }()
			for start := time.Now(); !strings.Contains(stdout.String(), "settings in force"); time.Sleep(10 * time.Millisecond) {
				select {
				case err := <-done:
					t.Fatalf("serve ended: %v\n%s", err, stderr.String())
				default:
				}
				if time.Since(start) > 30*time.Second {
					cancel()
					t.Fatalf("no banner within 30 s:\n%s", stdout.String())
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			out := stdout.String()
			line := func(k, v string) string { return fmt.Sprintf("  %-10s %s", k+":", v) }
			wants := []string{line("store", "SQLite "+db+" (this process alone"), line("redis", "off"), line("admin API", "on, /admin/v1/"),
				line("metrics", "http://127.0.0.1:"), line("tracing", "OTLP/HTTP to http://collector:***@127.0.0.1:1"), line("optimizer", "off"), line("guard", "on")}
			if format == "json" {
				wants = []string{`"msg":"settings in force"`, `"store":"SQLite ` + db, `"redis":"off`, `"admin_API":"on`,
					`"metrics":"http://127.0.0.1:`, `"tracing":"OTLP/HTTP to http://collector:***@127.0.0.1:1"`, `"optimizer":"off`}
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("the banner lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "secret-pw") {
				t.Errorf("the banner shows a password:\n%s", out)
			}
		})
	}
}
