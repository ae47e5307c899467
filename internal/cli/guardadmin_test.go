package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/policy"
	"github.com/gwlabs/gateway/internal/app"
)

func TestKeysGuardPolicyCommands(t *testing.T) {
	ctx := context.Background()
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = filepath.Join(t.TempDir(), "gateway.db")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runKeys(ctx, cfg, args, &out)
		return out.String(), err
	}
	out, err := run("create", "--account", "acme", "--guard", "monitor", "--guard-scope", "tools", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		KeyID     string `json:"id"`
		AccountID string `json:"account_id"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.KeyID == "" {
		t.Fatalf("create --json: %q, %v", out, err)
	}
	if out, err = run("update", created.KeyID, "--guard-tool-threshold", "0.95"); err != nil || !strings.Contains(out, "guard monitor, scope tools, tool threshold 0.95") {
		t.Errorf("update: %q, %v", out, err)
	}
	if _, err = run("update", "--account", "acme", "--guard", "off", "--guard-user-threshold", "0.97"); err != nil {
		t.Fatal(err)
	}
	var p gw.GuardPolicy
	err = withStoreCfg(ctx, cfg, false, func(st gw.Store) error {
		p, err = policy.Effective(ctx, st, created.KeyID, created.AccountID)
		return err
	})
	want := gw.GuardPolicy{Mode: gw.GuardMonitor, Scope: "tools", UserThreshold: 0.97, ToolThreshold: 0.95}
	if err != nil || p != want {
		t.Errorf("effective policy %+v, %v; want %+v (the key's fields over the account's)", p, err, want)
	}
	for _, bad := range [][]string{
		{"update", created.KeyID, "--guard", "bogus"},
		{"update", created.KeyID, "--guard-scope", "most"},
		{"update", created.KeyID, "--guard-user-threshold", "1.5"},
		{"update", created.KeyID},
		{"update", "key_nope", "--guard", "off"},
		{"update", "--account", "nobody", "--guard", "off"},
		{"create", "--guard", "strict"},
	} {
		if _, err := run(bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	var buf bytes.Buffer
	if err := runIncidents(ctx, cfg, []string{"review", "inc_nope", "--verdict", "confirmed"}, &buf); err == nil || !strings.Contains(err.Error(), "no incident") {
		t.Errorf("review of an unknown incident: %v", err)
	}
	if err := runIncidents(ctx, cfg, []string{"review", "inc_nope", "--verdict", "maybe"}, &buf); err == nil {
		t.Error("verdict maybe accepted")
	}
	if err := runIncidents(ctx, cfg, []string{"export"}, &buf); err == nil {
		t.Error("export without --reviewed accepted")
	}
}
