package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// TestMigrationBackfillsHeld: a database of the first schema with open
// holds (one expired, not swept) opens under the current one with its
// holds kept, the running held total backfilled from them, and the money
// identities intact.
func TestMigrationBackfillsHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := migrations.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	future, past := now.Add(time.Hour).UnixMicro(), now.Add(-time.Minute).UnixMicro()
	for _, q := range []string{
		string(v1),
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0)`,
		`INSERT INTO accounts (id, name, top_ups, balance, created_at) VALUES ('acct_a', 'a', 1000, 1000, 0), ('acct_b', 'b', 500, 500, 0)`,
		`INSERT INTO ledger (account_id, amount, note, created_at) VALUES ('acct_a', 1000, 'top up', 0), ('acct_b', 500, 'top up', 0)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, h := range []struct {
		id, account string
		amount      int64
		exp         int64
	}{{"req_1", "acct_a", 100, future}, {"req_2", "acct_a", 250, future}, {"req_3", "acct_a", 40, past}, {"req_4", "acct_b", 7, future}} {
		if _, err := raw.Exec(`INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at) VALUES (?, ?, 'key_1', ?, ?, 0)`,
			h.id, h.account, h.amount, h.exp); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open (migrating): %v", err)
	}
	defer db.Close()
	for acct, want := range map[string]gw.Balance{
		"acct_a": {TopUps: 1000, Balance: 1000, Held: 350, Available: 650},
		"acct_b": {TopUps: 500, Balance: 500, Held: 7, Available: 493},
	} {
		b, err := db.Balance(t.Context(), acct)
		if err != nil || b != want {
			t.Errorf("Balance(%s) = %+v, %v; want %+v", acct, b, err, want)
		}
		if err := db.VerifyLedger(t.Context(), acct); err != nil {
			t.Error(err)
		}
	}
	// The migrated holds work: one settles, the expired one is swept.
	if err := db.Settle(t.Context(), "req_2", &gw.Record{Status: 200, Charge: 200}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ExpireHolds(t.Context(), time.Now()); err != nil || n != 1 {
		t.Errorf("ExpireHolds = %d, %v; want 1", n, err)
	}
	b, _ := db.Balance(t.Context(), "acct_a")
	if want := (gw.Balance{TopUps: 1000, Charged: 200, Balance: 800, Held: 100, Available: 700}); b != want {
		t.Errorf("after settle and sweep: %+v, want %+v", b, want)
	}
	if err := db.VerifyLedger(t.Context(), "acct_a"); err != nil {
		t.Error(err)
	}
}
