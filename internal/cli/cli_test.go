package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/clitest"
)

// cliRun runs one command line against a fresh SQLite file, with the
// environment cleared of GATEWAY_* settings.
func cliRun(t *testing.T, db string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	clitest.Env(t)
	var out, errb strings.Builder
	if db != "" {
		args = append(args, "--db", db)
	}
	err = Run(t.Context(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestCLIHelpEverywhere(t *testing.T) {
	for _, cmd := range []string{"", "serve", "keys", "keys create", "keys list", "keys show", "keys rotate", "keys revoke", "balance", "balance add", "balance show",
		"balance history", "accounts", "accounts create", "accounts list", "accounts show",
		"models", "ratecard", "ratecard check", "incidents", "incidents list", "incidents show", "incidents review", "incidents export", "keys update", "optimize", "optimize eval", "guard", "guard eval", "config", "config check", "version"} {
		args := append(strings.Fields(cmd), "--help")
		out, _, err := cliRun(t, "", args...)
		if err != nil || !strings.Contains(out, "Usage: gateway") {
			t.Errorf("%q --help: err %v, output %q", cmd, err, out)
		}
	}
}

func TestCLIRefusesWhatItDoesNotKnow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	for _, args := range [][]string{
		{"serve", "extra", "--addr", "127.0.0.1:1"}, // an extra argument is not ignored
		{"keys", "create", "--bogus"},
		{"keys"}, // a group without its subcommand
		{"models", "extra"},
		{"keys", "revoke"},                      // missing KEY_ID
		{"balance", "add", "--account", "acme"}, // missing --usd
		{"nonsense"},
	} {
		if _, _, err := cliRun(t, db, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestCLIFlagsAnywhereAndJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	// Flags before the command, between the command's words, after it.
	out, _, err := cliRun(t, "", "--db", db, "keys", "create", "--json", "--account", "acme", "--balance-usd", "2.5")
	if err != nil {
		t.Fatal(err)
	}
	var k CreatedKeyJSON
	if err := json.Unmarshal([]byte(out), &k); err != nil || !strings.HasPrefix(k.Secret, "gwk_") || k.Account != "acme" || !k.AccountCreated {
		t.Fatalf("keys create --json: %q (%v)", out, err)
	}
	checks := []struct {
		args []string
		into any
	}{
		{[]string{"keys", "list", "--json"}, &clitest.List[admin.Key]{}},
		{[]string{"balance", "show", "--json", "--account", "acme"}, &admin.Account{}},
		{[]string{"balance", "add", "--json", "--account", "acme", "--usd", "1", "--reference", "r1"}, &admin.TopUpResult{}},
		{[]string{"balance", "history", "--json", "--account", "acme"}, &admin.LedgerPage{}},
		{[]string{"accounts", "list", "--json"}, &clitest.List[admin.Account]{}},
		{[]string{"accounts", "show", "acme", "--json"}, &admin.Account{}},
		{[]string{"keys", "rotate", k.ID, "--grace", "1m", "--json"}, &admin.CreatedKey{}},
		{[]string{"incidents", "list", "--json"}, &clitest.List[admin.Incident]{}},
		{[]string{"models", "--json"}, &map[string]any{}},
		{[]string{"version", "--json"}, &app.BuildInfo{}},
		{[]string{"config", "check", "--json"}, &map[string]any{}},
		{[]string{"keys", "revoke", k.ID, "--json"}, &map[string]any{}},
	}
	for _, c := range checks {
		out, _, err := cliRun(t, db, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if err := json.Unmarshal([]byte(out), c.into); err != nil {
			t.Errorf("%v: not JSON: %q", c.args, out)
		}
	}
	out, _, _ = cliRun(t, db, "balance", "show", "--account", "acme", "--json")
	var b admin.Account
	_ = json.Unmarshal([]byte(out), &b)
	if b.Balance.TopUps != "3.50000000" {
		t.Errorf("top-ups %q, want 3.50000000", b.Balance.TopUps)
	}
}

func TestCLIAccountTypos(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if _, _, err := cliRun(t, db, "keys", "create", "--account", "acme"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, db, "balance", "add", "--account", "acmee", "--usd", "5"); err == nil || !strings.Contains(err.Error(), `no account "acmee"`) {
		t.Fatalf("a typo in balance add: %v", err)
	}
	if _, _, err := cliRun(t, db, "balance", "show", "--account", "acmee"); err == nil {
		t.Fatal("a typo in balance show is not an error")
	}
	if out, _, err := cliRun(t, db, "balance", "add", "--account", "newco", "--usd", "5", "--create"); err != nil || !strings.Contains(out, "newco") {
		t.Fatalf("--create: %q, %v", out, err)
	}
}

func TestConfigFileAndCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "gateway.toml")
	if err := os.WriteFile(good, []byte("addr = \"127.0.0.1:9999\"\nrpm = 42\nopenai_api_key = \"sk-secret\"\nguard = \"off\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := app.ConfigFromFile(good, func(name string) string {
		if name == "GATEWAY_RPM" {
			return "7" // the environment wins over the file
		}
		return ""
	})
	if err != nil || cfg.Addr != "127.0.0.1:9999" || cfg.RPM != 7 || cfg.Vendors["openai"].APIKey != "sk-secret" || cfg.Guard {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	out, _, err := cliRun(t, "", "--config", good, "config", "check")
	if err != nil || !strings.Contains(out, "configuration is valid") || strings.Contains(out, "sk-secret") || !strings.Contains(out, "GATEWAY_RPM") {
		t.Fatalf("config check: %q, %v", out, err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("rpm = \"lots\"\nopenai_api_ky = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, "", "--config", bad, "config", "check"); err == nil || !strings.Contains(err.Error(), `unknown setting "openai_api_ky"`) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := os.WriteFile(bad, []byte("rpm = \"lots\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, "", "--config", bad, "config", "check"); err == nil || !strings.Contains(err.Error(), "GATEWAY_RPM") {
		t.Fatalf("bad value: %v", err)
	}
	t.Setenv("GATEWAY_LOG_LEVEL", "verbose")
	if _, err := app.ConfigFromFile("", os.Getenv); err == nil || !strings.Contains(err.Error(), "GATEWAY_LOG_LEVEL") {
		t.Fatalf("GATEWAY_LOG_LEVEL=verbose: %v", err)
	}
}

func TestCLIKeyModels(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	out, _, err := cliRun(t, db, "keys", "create", "--account", "m", "--models", "openai/*,anthropic/claude-*", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var k CreatedKeyJSON
	if err := json.Unmarshal([]byte(out), &k); err != nil || len(k.Models) != 2 || k.Models[1] != "anthropic/claude-*" {
		t.Fatalf("keys create --models: %q, %v", out, err)
	}
	if out, _, err := cliRun(t, db, "keys", "update", k.ID, "--any-model"); err != nil || !strings.Contains(out, "models: every model") {
		t.Fatalf("keys update --any-model: %q, %v", out, err)
	}
	if _, _, err := cliRun(t, db, "keys", "update", k.ID, "--any-model", "--models", "openai/*"); err == nil {
		t.Fatal("--models with --any-model accepted")
	}
}

// TestKeysCreateOptimizeFlag: "keys create --optimize off" stores the
// key's switch, "keys list --json" shows it, "keys update" changes it, a
// bad value is refused.
func TestKeysCreateOptimizeFlag(t *testing.T) {
	db := t.TempDir() + "/keys.db"
	if _, _, err := cliRun(t, db, "keys", "create", "--account", "a", "--optimize", "off", "--json"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, db, "keys", "create", "--account", "b", "--json"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, db, "keys", "create", "--optimize", "maybe"); err == nil {
		t.Error("--optimize maybe accepted")
	}
	list := func() map[string]admin.Key {
		t.Helper()
		out, _, err := cliRun(t, db, "keys", "list", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rows clitest.List[admin.Key]
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		got := map[string]admin.Key{}
		for _, r := range rows.Data {
			got[r.Account] = r
		}
		return got
	}
	got := list()
	if got["a"].Optimize != "off" || got["b"].Optimize != "on" {
		t.Fatalf("keys list: %+v", got)
	}
	if _, _, err := cliRun(t, db, "keys", "update", got["a"].ID, "--optimize", "on"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cliRun(t, db, "keys", "update", "key_none", "--optimize", "on"); err == nil {
		t.Error("update of an unknown key succeeded")
	}
	if list()["a"].Optimize != "on" {
		t.Error("keys update did not switch the layer on")
	}
}

// The text lines of a key's budgets: each period, capped or not.
func TestPrintBudgets(t *testing.T) {
	resets := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		b    *admin.Budgets
		want string
	}{
		{nil, "daily     no budget\nmonthly   no budget\n"},
		{&admin.Budgets{Monthly: &admin.BudgetStatus{BudgetUSD: "1.00000000", SpentUSD: "0.25000000", HeldUSD: "0.05000000", RemainingUSD: "0.70000000", ResetsAt: resets}},
			"daily     no budget\nmonthly   $1.00000000 (spent $0.25000000, held $0.05000000, remaining $0.70000000; resets 2026-12-01T00:00:00Z)\n"},
	} {
		var buf bytes.Buffer
		if err := printBudgets(&buf, c.b); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("printBudgets(%+v) =\n%s\nwant\n%s", c.b, buf.String(), c.want)
		}
	}
}
