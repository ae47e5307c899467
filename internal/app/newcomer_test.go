package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 38 item 6: a command that only reads or changes what is in a
// store refuses a --db with no store there (before: an empty store was
// created and "keys list" said nothing, status 0); the commands that
// create may create it.
func TestReadOnlyCommandsNeedTheStore(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"keys", "list"}, {"keys", "show", "key_x"}, {"keys", "update", "key_x", "--rpm", "5"}, {"keys", "revoke", "key_x"},
		{"keys", "rotate", "key_x"}, {"accounts", "list"}, {"accounts", "show", "acme"}, {"balance", "show", "--account", "acme"},
		{"balance", "history", "--account", "acme"}, {"balance", "add", "--account", "acme", "--usd", "1"},
		{"incidents", "list"}, {"incidents", "export", "--reviewed"},
	} {
		r := runCLI(t, typo, "", args...)
		if r.status != 1 || !strings.Contains(r.stderr, "no store at "+typo) {
			t.Errorf("%v --db typo.db: status %d, stderr %q; want 1 and no store at it", args, r.status, r.stderr)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%v created %s", args, typo)
		}
	}
	for i, args := range [][]string{
		{"keys", "create", "--account", "acme"}, {"accounts", "create", "acme"}, {"balance", "add", "--account", "acme", "--usd", "1", "--create"},
	} {
		db := filepath.Join(dir, "new"+string(rune('a'+i))+".db")
		if r := runCLI(t, db, "", args...); r.status != 0 {
			t.Errorf("%v on a new store: status %d, %s", args, r.status, r.stderr)
		}
		if r := runCLI(t, db, "", "accounts", "list"); r.status != 0 || !strings.Contains(r.stdout, "acme") {
			t.Errorf("%v then accounts list: status %d, %q %q", args, r.status, r.stdout, r.stderr)
		}
	}
}

// Issue 38 item 6: a store URL of a kind the gateway has no store for is
// refused, not taken for a SQLite file name.
func TestUnsupportedStoreScheme(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"keys", "list"}, {"keys", "create", "--account", "acme"}, {"config", "check"}} {
		r := runCLI(t, "mysql://u:secret@db/gw", "", args...)
		if r.status != 1 || !strings.Contains(r.stderr, "mysql:// is not a store this gateway has") || strings.Contains(r.stderr, "secret") {
			t.Errorf("%v --db mysql://...: status %d, stderr %q", args, r.status, r.stderr)
		}
	}
	if _, err := openStore(context.Background(), "mysql://x", true); err == nil || !strings.Contains(err.Error(), "mysql://") {
		t.Errorf("serve's store with mysql://x: %v", err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files created: %v", entries)
	}
}

// Issue 38 item 6: --server against a gateway whose admin API is off
// says so (before: "no such endpoint: GET /admin/v1/keys"), and the API
// itself answers 404 with the reason.
func TestServerWithAdminAPIOff(t *testing.T) {
	e := newEnv(t) // no admin token
	r := runCLI(t, "", e.url, "keys", "list")
	if r.status == 0 || !strings.Contains(r.stderr, "the admin API is off on the gateway at "+e.url) || !strings.Contains(r.stderr, "GATEWAY_ADMIN_TOKEN") {
		t.Errorf("keys list --server (admin API off): status %d, stderr %q", r.status, r.stderr)
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
	if err := json.Unmarshal([]byte(r.stdout), &k); err != nil || k.ID == "" {
		t.Fatalf("create: %q %v", r.stdout, err)
	}
	r = runCLI(t, db, "", "keys", "update", k.ID, "--rpm", "7", "--tpm", "9000")
	if r.status != 0 || !strings.Contains(r.stdout, "rpm 7, tpm 9000") {
		t.Errorf("update --rpm 7 --tpm 9000: %d %q %q", r.status, r.stdout, r.stderr)
	}
	r = runCLI(t, db, "", "keys", "show", k.ID, "--json")
	var shown struct{ RPM, TPM int64 }
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown.RPM != 7 || shown.TPM != 9000 {
		t.Errorf("show after update: %q %v", r.stdout, err)
	}
	if r := runCLI(t, db, "", "keys", "update", k.ID, "--rpm", "-1"); r.status != 2 {
		t.Errorf("--rpm -1: status %d %q", r.status, r.stderr)
	}

	// Through the admin API (PATCH), on a running gateway: the new
	// limit applies to the key's next requests.
	e := newEnv(t, func(c *Config) { c.AdminToken = testAdminToken })
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
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || shown.RPM != 2 {
		t.Fatalf("update --rpm 2 --server: %d %q %q", r.status, r.stdout, r.stderr)
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
	old := version
	version = "v9.8.7"
	t.Cleanup(func() { version = old })
	e := newEnv(t)
	resp := e.get("/openapi.json", "")
	var doc struct {
		Info struct{ Version string }
	}
	if err := json.Unmarshal(readAll(t, resp.Body), &doc); err != nil || doc.Info.Version != "v9.8.7" {
		t.Errorf("info.version %q, %v; want the stamped v9.8.7", doc.Info.Version, err)
	}
}

// Issue 38 item 6: the start-up banner names the store, Redis, the admin
// API, metrics, tracing and the optimizer in force, secrets hidden.
func TestStartupBannerNamesSettings(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cfg, err := envConfig(func(string) string { return "" })
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
			go func() { done <- serve(ctx, cfg, &stdout, &stderr) }()
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

// Issue 38 item 6: every file the store writes beside the database is
// ignored by git (before: gateway.db-holds left the tree dirty).
func TestGitignoreCoversStoreFiles(t *testing.T) {
	raw, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.Contains(l, "/") {
			patterns = append(patterns, l)
		}
	}
	dir := t.TempDir()
	for _, exclusive := range []bool{true, false} {
		st, err := openStore(context.Background(), filepath.Join(dir, "gateway.db"), exclusive)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := createKey(context.Background(), st, "acme", 0); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) < 2 {
			t.Errorf("the store wrote %d files; want the database and its companions", len(entries))
		}
		for _, e := range entries {
			ignored := false
			for _, p := range patterns {
				if ok, _ := filepath.Match(p, e.Name()); ok {
					ignored = true
				}
			}
			if !ignored {
				t.Errorf("%s (beside the store) is not in .gitignore", e.Name())
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
