package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/ratecard"
)

// cliResult is one command line's outcome as a shell sees it.
type cliResult struct {
	stdout, stderr string
	status         int
}

// runCLI runs one command line on the store at db, or through the admin API
// at server (with the test's admin token), as the process would: the
// exit status is main's.
func runCLI(t *testing.T, db, server string, args ...string) cliResult {
	t.Helper()
	for _, name := range settingNames() {
		t.Setenv(name, "")
	}
	t.Setenv("GATEWAY_CONFIG", "")
	t.Setenv("GATEWAY_ADMIN_URL", "")
	if server != "" {
		t.Setenv("GATEWAY_ADMIN_TOKEN", testAdminToken)
		args = append(args, "--server", server)
	} else if db != "" {
		args = append(args, "--db", db)
	}
	var out, errb strings.Builder
	err := run(t.Context(), args, &out, &errb)
	if err != nil && !errors.Is(err, errUsage) {
		errb.WriteString("gateway: " + errorText(err) + "\n")
	}
	return cliResult{out.String(), errb.String(), exitStatus(err)}
}

// oneJSON decodes s as exactly one JSON document: nothing before or
// after it.
func oneJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON document")
	}
	return nil
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
	var keys listJSON[admin.Key]
	if r := runCLI(t, db, "", "keys", "list", "--json"); oneJSON(r.stdout, &keys) != nil || len(keys.Data) != 1 {
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
		{[]string{"accounts", "list"}, &listJSON[admin.Account]{}, func(v any) bool { return len(v.(*listJSON[admin.Account]).Data) == 2 }},
		{[]string{"accounts", "show", "acme"}, &admin.Account{}, nil},
		{[]string{"balance", "add", "--account", "json-co", "--usd", "1.5"}, &admin.TopUpResult{}, nil},
		{[]string{"balance", "show", "--account", "json-co"}, &admin.Account{}, nil},
		{[]string{"balance", "history", "--account", "acme"}, &admin.LedgerPage{}, func(v any) bool { return len(v.(*admin.LedgerPage).Data) >= 2 }},
		{[]string{"keys", "create", "--account", "json-co", "--guard", "monitor", "--expires-in", "30d"}, &createdKeyJSON{}, func(v any) bool {
			k := v.(*createdKeyJSON)
			return k.Guard != nil && k.Guard.Mode == "monitor" && k.EndsAt != nil && k.EndsAt.Sub(time.Now()) > 29*24*time.Hour
		}},
		{[]string{"keys", "list"}, &listJSON[admin.Key]{}, nil},
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
		{[]string{"incidents", "list"}, &listJSON[admin.Incident]{}, func(v any) bool { return len(v.(*listJSON[admin.Incident]).Data) == 1 }},
		{[]string{"incidents", "show", inc}, &admin.Incident{}, nil},
		{[]string{"incidents", "review", inc, "--verdict", "confirmed", "--note", "seen"}, &admin.Incident{}, func(v any) bool {
			r := v.(*admin.Incident).Review
			return r != nil && r.Verdict == "confirmed" && r.Note == "seen"
		}},
		{[]string{"models"}, &listJSON[map[string]any]{}, func(v any) bool { return len(v.(*listJSON[map[string]any]).Data) > 9 }},
		{[]string{"ratecard", "check", card}, &ratecardCheckJSON{}, func(v any) bool {
			c := v.(*ratecardCheckJSON)
			return c.Valid && len(c.Changes) == 1 && c.Changes[0].New == "2.20"
		}},
		{[]string{"config", "check"}, &struct {
			Valid    bool      `json:"valid"`
			Settings []setting `json:"settings"`
		}{}, nil},
		{[]string{"version"}, &buildInfo{}, func(v any) bool { b := v.(*buildInfo); return b.Version != "" && strings.HasPrefix(b.GoVersion, "go") }},
		{[]string{"keys", "rotate", used.ID, "--grace", "1w"}, &admin.CreatedKey{}, func(v any) bool {
			k := v.(*admin.CreatedKey)
			return k.Replaces != nil && k.Replaces.Requests == 2 && k.Replaces.EndsAt.Sub(time.Now()) > 6*24*time.Hour
		}},
		{[]string{"keys", "revoke", used.ID}, &admin.Key{}, func(v any) bool { return v.(*admin.Key).Status == "revoked" }},
	} {
		r := runCLI(t, db, "", append(c.args, "--json")...)
		if r.status != 0 || r.stderr != "" {
			t.Errorf("%v --json: status %d, stderr %q", c.args, r.status, r.stderr)
			continue
		}
		if err := oneJSON(r.stdout, c.into); err != nil {
			t.Errorf("%v --json: %v in %.300q", c.args, err, r.stdout)
			continue
		}
		if c.want != nil && !c.want(c.into) {
			t.Errorf("%v --json: %s", c.args, r.stdout)
		}
	}
	// The list commands' JSON is {"data": [...]}, as docs/OPERATIONS.md says.
	for _, args := range [][]string{{"accounts", "list"}, {"keys", "list"}, {"incidents", "list"}} {
		var m map[string]json.RawMessage
		if r := runCLI(t, db, "", append(args, "--json")...); oneJSON(r.stdout, &m) != nil || len(m) != 1 || m["data"] == nil {
			t.Errorf("%v --json is not {\"data\": [...]}: %s", args, r.stdout)
		}
	}
}

// Failures go to stderr with an exit status by kind and a message that
// names the problem; stdout stays empty.
func TestCLIErrorsByKind(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if r := runCLI(t, db, "", "keys", "create", "--account", "acme", "--json"); r.status != 0 {
		t.Fatal(r)
	}
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"balance", "add", "--account", "acme", "--usd", "1.123456789"}, exitUsage, "at most 8"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "-5"}, exitUsage, "negative amounts are not allowed"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "five"}, exitUsage, "not an amount of US dollars"},
		{[]string{"balance", "add", "--account", "acme", "--usd", "0"}, exitUsage, "more than 0"},
		{[]string{"keys", "create", "--account", "acme", "--expires-in", "30x"}, exitUsage, "d (days) or w (weeks)"},
		{[]string{"keys", "create", "--name", "x"}, exitUsage, "--account"},
		{[]string{"keys", "update", "key_nope"}, exitUsage, "nothing to change"},
		{[]string{"keys", "bogus"}, exitUsage, "unexpected argument"},
		{[]string{"keys", "show", "key_nope"}, exitNotFound, `no key "key_nope"`},
		{[]string{"keys", "revoke", "key_nope"}, exitNotFound, `no key "key_nope"`},
		{[]string{"incidents", "show", "inc_nope"}, exitNotFound, `no incident "inc_nope"`},
		{[]string{"balance", "add", "--account", "acmee", "--usd", "5"}, exitNotFound, `no account "acmee"`},
		{[]string{"accounts", "create", "acme"}, exitRefused, `an account named "acme" exists`},
	} {
		for _, asJSON := range []bool{false, true} {
			args := c.args
			if asJSON {
				args = append(args[:len(args):len(args)], "--json")
			}
			r := runCLI(t, db, "", args...)
			if r.status != c.status || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
				t.Errorf("%v: status %d (want %d), stderr %q (want %q), stdout %q", args, r.status, c.status, r.stderr, c.want, r.stdout)
			}
		}
	}
	// A usage error shows the command's usage, on stderr.
	if r := runCLI(t, db, "", "balance", "add", "--account", "acme", "--usd", "-5"); !strings.Contains(r.stderr, "Usage: gateway balance add") {
		t.Errorf("no usage on stderr: %q", r.stderr)
	}
	// The admin token refused is exit 4.
	e := newEnv(t, func(c *Config) { c.AdminToken = testAdminToken })
	t.Setenv("GATEWAY_ADMIN_TOKEN", strings.Repeat("w", 40))
	var out, errb strings.Builder
	err := run(t.Context(), []string{"--server", e.url, "keys", "list", "--json"}, &out, &errb)
	if exitStatus(err) != exitRefused || out.Len() != 0 {
		t.Errorf("a wrong admin token: %v (status %d), stdout %q", err, exitStatus(err), out.String())
	}
}

func TestCLIMoneyAndDurationText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"30d", 30 * 24 * time.Hour}, {"2w", 14 * 24 * time.Hour}, {"1d12h", 36 * time.Hour}, {"90m", 90 * time.Minute}, {"0", 0}} {
		if got, err := parseDuration(c.in); err != nil || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "d", "30", "3x", "-1d"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"-0.00000035": "-$0.00000035", "12.50000000": "$12.50000000"} {
		if got := dollars(in); got != want {
			t.Errorf("dollars(%q) = %q, want %q", in, got, want)
		}
	}
}

// config check shows every setting's effective value and its default
// (never "-"); an unknown key in the file gets a suggestion.
func TestConfigCheckShowsDefaults(t *testing.T) {
	r := runCLI(t, "", "", "config", "check", "--json")
	var got struct {
		Settings []setting `json:"settings"`
	}
	if err := oneJSON(r.stdout, &got); err != nil {
		t.Fatal(err)
	}
	for _, s := range got.Settings {
		if s.Default == "" || s.Default == "?" || s.Effective == "" {
			t.Errorf("%s: default %q, effective %q", s.Name, s.Default, s.Effective)
		}
		if s.Name == "GATEWAY_RPM" && (s.Effective != "600" || s.Default != "600") {
			t.Errorf("GATEWAY_RPM: %+v", s)
		}
	}
	if r := runCLI(t, "", "", "config", "check"); strings.Contains(r.stdout, "  -  ") {
		t.Errorf("a default shown as -:\n%s", r.stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("openai_api_ky = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "", "--config", bad, "config", "check"); !strings.Contains(r.stderr, `did you mean "openai_api_key"?`) {
		t.Errorf("no suggestion: %+v", r)
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
		e := newEnv(t, func(c *Config) { c.AdminToken = testAdminToken })
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
				_ = json.Unmarshal([]byte(r.stdout), &v)
				if len(v.Data) > 0 {
					v.ID = v.Data[0].ID
				}
				if v.ID == "" {
					t.Fatalf("%v: no id in %q", args, r.stdout)
				}
				ids[s.id] = v.ID
			}
			stderr := r.stderr
			if i := strings.Index(stderr, "\nUsage:"); i >= 0 {
				stderr = stderr[:i]
			}
			out = append(out, normalise(strings.Join(s.args, " ")+"\nstatus "+string(rune('0'+r.status))+"\n"+r.stdout+"stderr: "+stderr, seen))
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
	e := newEnv(t, func(c *Config) { c.keyCacheTTL = time.Hour })
	chat := func() int {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
		readAll(t, resp.Body)
		return resp.StatusCode
	}
	if s := chat(); s != http.StatusOK { // the key is now cached for an hour
		t.Fatalf("before: %d", s)
	}
	var keys listJSON[admin.Key]
	if r := runCLI(t, e.m.Config.DatabaseURL, "", "keys", "list", "--json"); oneJSON(r.stdout, &keys) != nil || len(keys.Data) != 1 {
		t.Fatal(r)
	}
	start := time.Now()
	if r := runCLI(t, e.m.Config.DatabaseURL, "", "keys", "revoke", keys.Data[0].ID); r.status != 0 {
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

func TestEnvTypos(t *testing.T) {
	got := envTypos([]string{"GATEWAY_RMP=5", "GATEWAY_RPM=5", "GATEWAY_KEY=gwk_x", "GATEWAY_GAURD=off", "HOME=/root", "GATEWAY_ADMIN_URL=http://x"})
	want := []string{"GATEWAY_GAURD is not a setting; did you mean GATEWAY_GUARD?", "GATEWAY_RMP is not a setting; did you mean GATEWAY_RPM?"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A guard policy set through the admin API applies to the very next
// request on that instance (its policy cache is emptied).
func TestAdminGuardPolicyAppliesAtOnce(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AdminToken = testAdminToken })
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

// parseDuration never panics; what it accepts is not negative unless
// Go's own syntax said so, and whole days and weeks come out exact.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "2w", "1d12h", "90m", "0", "1.5d", "-1d", "d", "99999999999999w", "3x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		if d < 0 && !strings.Contains(s, "-") {
			t.Fatalf("parseDuration(%q) = %v", s, d)
		}
	})
}

// parseUSDFlag never panics; an accepted amount is not negative, has at
// most 8 decimals and prints back to the same value.
func FuzzParseUSDFlag(f *testing.F) {
	for _, s := range []string{"12.5", "1.123456789", "-5", "0", "1e3", "1/3", ".5", "five", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseUSDFlag(s)
		if err != nil {
			return
		}
		if m < 0 {
			t.Fatalf("parseUSDFlag(%q) = %d", s, m)
		}
		back, err := gw.ParseUSD(m.USDString())
		if err != nil || back != m {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, m, m.USDString(), back, err)
		}
	})
}
