package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIReconcile: "reconcile --day D" checks that day; with no admin
// credentials configured every vendor is unreconcilable, never matching
// (text and JSON); a bad day is a usage error.
func TestCLIReconcile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	if _, _, err := cliRun(t, db, "accounts", "create", "acme"); err != nil {
		t.Fatal(err)
	}
	out, _, err := cliRun(t, db, "reconcile", "--day", "2026-06-01", "--vendor", "groq")
	if err != nil || !strings.Contains(out, "reconciliation of 2026-06-01 (final)") || !strings.Contains(out, "groq") || !strings.Contains(out, "unreconcilable") {
		t.Fatalf("reconcile: %q %v", out, err)
	}
	out, _, err = cliRun(t, db, "reconcile", "--day", "2026-06-01", "--json")
	if err != nil {
		t.Fatalf("reconcile --json: %v", err)
	}
	var r reconcileResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Day != "2026-06-01" || len(r.Lines) != 9 {
		t.Fatalf("reconcile --json = %+v, want the nine vendors' lines", r)
	}
	for _, l := range r.Lines {
		if l.Status != "unreconcilable" {
			t.Errorf("%s without admin credentials: %s, want unreconcilable", l.Vendor, l.Status)
		}
	}
	if _, _, err := cliRun(t, db, "reconcile", "--day", "June"); err == nil {
		t.Error("a bad day accepted")
	}
}
