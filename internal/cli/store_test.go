package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
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
		r := runCLI(t, typo, args...)
		if r.Status != 1 || !strings.Contains(r.Stderr, "no store at "+typo) {
			t.Errorf("%v --db typo.db: status %d, stderr %q; want 1 and no store at it", args, r.Status, r.Stderr)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%v created %s", args, typo)
		}
	}
	for i, args := range [][]string{
		{"keys", "create", "--account", "acme"}, {"accounts", "create", "acme"}, {"balance", "add", "--account", "acme", "--usd", "1", "--create"},
	} {
		db := filepath.Join(dir, "new"+string(rune('a'+i))+".db")
		if r := runCLI(t, db, args...); r.Status != 0 {
			t.Errorf("%v on a new store: status %d, %s", args, r.Status, r.Stderr)
		}
		if r := runCLI(t, db, "accounts", "list"); r.Status != 0 || !strings.Contains(r.Stdout, "acme") {
			t.Errorf("%v then accounts list: status %d, %q %q", args, r.Status, r.Stdout, r.Stderr)
		}
	}
}

// Issue 38 item 6: a store URL of a kind the gateway has no store for is
// refused, not taken for a SQLite file name.
func TestUnsupportedStoreScheme(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"keys", "list"}, {"keys", "create", "--account", "acme"}, {"config", "check"}} {
		r := runCLI(t, "mysql://u:secret@db/gw", args...)
		if r.Status != 1 || !strings.Contains(r.Stderr, "mysql:// is not a store this gateway has") || strings.Contains(r.Stderr, "secret") {
			t.Errorf("%v --db mysql://...: status %d, stderr %q", args, r.Status, r.Stderr)
		}
	}
	if _, err := app.OpenStore(context.Background(), "mysql://x", true); err == nil || !strings.Contains(err.Error(), "mysql://") {
		t.Errorf("serve's store with mysql://x: %v", err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files created: %v", entries)
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
		st, err := app.OpenStore(context.Background(), filepath.Join(dir, "gateway.db"), exclusive)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := app.CreateKey(context.Background(), st, "acme", 0, gw.Limit{}, false); err != nil {
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
