package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, args := range [][]string{{"keys", "list"}, {"keys", "create", "--account", "acme"}} {
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
