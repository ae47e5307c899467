package postgres

import (
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/jackc/pgx/v5"
)

// TestMigrationBackfillsHeld: a database of the first schema with open
// holds (one expired, not swept) opens under the current one with the
// running held total backfilled from its holds.
func TestMigrationBackfillsHeld(t *testing.T) {
	url, schema := testSchema(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	v1, err := migrations.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, q := range []string{
		`CREATE SCHEMA ` + pgx.Identifier{schema}.Sanitize(),
		`SET search_path = ` + pgx.Identifier{schema}.Sanitize(),
		string(v1),
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql')`,
		`INSERT INTO accounts (id, name, top_ups, balance, created_at) VALUES ('acct_a', 'a', 1000, 1000, now()), ('acct_b', 'b', 500, 500, now())`,
		`INSERT INTO ledger (account_id, amount, note, created_at) VALUES ('acct_a', 1000, 'top up', now()), ('acct_b', 500, 'top up', now())`,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, h := range []struct {
		id, account string
		amount      int64
		exp         time.Time
	}{{"req_1", "acct_a", 100, now.Add(time.Hour)}, {"req_2", "acct_a", 250, now.Add(time.Hour)}, {"req_3", "acct_a", 40, now.Add(-time.Minute)}, {"req_4", "acct_b", 7, now.Add(time.Hour)}} {
		if _, err := conn.Exec(t.Context(), `INSERT INTO holds (id, account_id, key_id, amount, expires_at, created_at) VALUES ($1, $2, 'key_1', $3, $4, now())`,
			h.id, h.account, h.amount, h.exp); err != nil {
			t.Fatal(err)
		}
	}

	db := openIn(t, url, schema)
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
