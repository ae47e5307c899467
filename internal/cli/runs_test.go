package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIRunDefaults: "runs set-defaults" sets a key's run caps, "runs
// defaults" prints them (text and JSON), all zero removes them; a bad
// amount and an unknown key are refused.
func TestCLIRunDefaults(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	out, _, err := cliRun(t, db, "keys", "create", "--account", "acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var k CreatedKeyJSON
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatal(err)
	}
	if out, _, err = cliRun(t, db, "runs", "set-defaults", k.ID, "--budget-usd", "2.50", "--max-requests", "40", "--idle", "30m"); err != nil ||
		!strings.Contains(out, "run budget $2.50000000; max requests 40; idle expiry 30m0s") {
		t.Fatalf("runs set-defaults: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "runs", "defaults", k.ID, "--json"); err != nil || !strings.Contains(out, `"budget_usd": "2.50000000"`) || !strings.Contains(out, `"idle_seconds": 1800`) {
		t.Fatalf("runs defaults --json: %q %v", out, err)
	}
	if out, _, err = cliRun(t, db, "runs", "set-defaults", k.ID); err != nil || !strings.Contains(out, "run budget none; max requests none; idle expiry never") {
		t.Fatalf("runs set-defaults with nothing: %q %v", out, err)
	}
	if _, _, err = cliRun(t, db, "runs", "set-defaults", k.ID, "--budget-usd", "lots"); err == nil {
		t.Fatal("a bad budget accepted")
	}
	if _, _, err = cliRun(t, db, "runs", "defaults", "key_nope"); err == nil {
		t.Fatal("an unknown key accepted")
	}
}
