package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// urlEnv names the variable holding the test server's URL, for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const urlEnv = "GATEWAY_TEST_POSTGRES_URL"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashEnv); spec != "" {
		os.Exit(crashChild(spec))
	}
	goleak.VerifyTestMain(m)
}

// testSchema returns the test server's URL and a fresh schema name, which
// is dropped when t ends; it skips t when no server is configured.
func testSchema(t testing.TB) (url, schema string) {
	t.Helper()
	url = os.Getenv(urlEnv)
	if url == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	var b [6]byte
	rand.Read(b[:])
	schema = "gwtest_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}

// open opens a store in a fresh schema, closed (then dropped) when t ends.
func open(t testing.TB) *DB {
	t.Helper()
	url, schema := testSchema(t)
	return openIn(t, url, schema)
}

func openIn(t testing.TB, url, schema string) *DB {
	t.Helper()
	db, err := OpenWith(t.Context(), url, Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestStore(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	storetest.Run(t, func(t *testing.T) gw.Store { return open(t) })
}

func BenchmarkSettle(b *testing.B) {
	db := open(b)
	defer storetest.ServerCPU(b, "postgres")()
	storetest.BenchmarkSettle(b, db)
	st := db.Stats()
	b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
}

// BenchmarkSettleSyncEach is BenchmarkSettle with every group commit
// waiting for the WAL flush, for comparison.
func BenchmarkSettleSyncEach(b *testing.B) {
	url, schema := testSchema(b)
	db, err := OpenWith(b.Context(), url, Options{Schema: schema, SyncEachCommit: true})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer db.Close()
	defer storetest.ServerCPU(b, "postgres")()
	storetest.BenchmarkSettle(b, db)
	st := db.Stats()
	b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
}

// BenchmarkSettleNoBatch is BenchmarkSettle with group commit off (one
// transaction per call), for comparison.
func BenchmarkSettleNoBatch(b *testing.B) {
	url, schema := testSchema(b)
	db, err := OpenWith(b.Context(), url, Options{Schema: schema, MaxBatch: 1})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer db.Close()
	storetest.BenchmarkSettle(b, db)
}

// TestOpenConcurrently: instances starting together apply the migrations
// once, and reopening applies nothing.
func TestOpenConcurrently(t *testing.T) {
	url, schema := testSchema(t)
	var wg sync.WaitGroup
	dbs := make([]*DB, 4)
	for i := range dbs {
		wg.Go(func() {
			db, err := OpenWith(t.Context(), url, Options{Schema: schema})
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			dbs[i] = db
		})
	}
	wg.Wait()
	for _, db := range dbs {
		if db != nil {
			db.Close()
		}
	}
	db := openIn(t, url, schema)
	var n int
	if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatalf("count migrations: %v", err)
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(files) || len(files) < 2 {
		t.Errorf("schema_migrations has %d rows, want one per migration file (%d)", n, len(files))
	}
}

// TestInstancesShareAccounts: several instances (pools) placing and
// settling holds on one account never over-commit it.
func TestInstancesShareAccounts(t *testing.T) {
	url, schema := testSchema(t)
	dbs := []*DB{openIn(t, url, schema), openIn(t, url, schema), openIn(t, url, schema)}
	a, err := dbs[0].EnsureAccount(t.Context(), "acme")
	if err != nil {
		t.Fatalf("EnsureAccount: %v", err)
	}
	if err := dbs[1].TopUp(t.Context(), a.ID, 25*100, "t"); err != nil {
		t.Fatalf("TopUp: %v", err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		placed int
	)
	for i := range 150 {
		wg.Go(func() {
			id := fmt.Sprintf("req_%03d", i)
			err := dbs[i%3].PlaceHold(t.Context(), gw.Hold{ID: id, AccountID: a.ID, Amount: 100, ExpiresAt: time.Now().Add(time.Hour)})
			var e *gw.Error
			switch {
			case err == nil:
				mu.Lock()
				placed++
				mu.Unlock()
				if err := dbs[(i+1)%3].Settle(t.Context(), id, &gw.Record{Status: 200, Charge: 100}); err != nil {
					t.Errorf("Settle: %v", err)
				}
			case !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance:
				t.Errorf("PlaceHold: %v", err)
			}
		})
	}
	wg.Wait()
	if placed != 25 {
		t.Errorf("placed %d holds, want 25", placed)
	}
	b, err := dbs[2].Balance(t.Context(), a.ID)
	if err != nil || b.Balance != 0 || b.Charged != 2500 {
		t.Errorf("Balance = %+v, %v; want everything charged", b, err)
	}
	if err := dbs[0].VerifyLedger(t.Context(), a.ID); err != nil {
		t.Error(err)
	}
	for _, db := range dbs {
		t.Logf("%+v", db.Stats())
	}
}

func TestGroupCommitBatches(t *testing.T) {
	db := open(t)
	const n = 200
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			if err := db.Log(t.Context(), &gw.Record{RequestID: fmt.Sprintf("req_%03d", i), Status: 200}); err != nil {
				t.Errorf("Log: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	st := db.Stats()
	if st.Ops != n || st.Batches >= n {
		t.Errorf("Stats = %+v, want %d ops in fewer than %d transactions", st, n, n)
	}
	t.Logf("%d calls in %d transactions", st.Ops, st.Batches)
}

// TestCommitIsolatesFailingCall: see storetest.CommitIsolation.
func TestCommitIsolatesFailingCall(t *testing.T) {
	db := open(t)
	storetest.CommitIsolation(t, db, db.gc)
}

// BenchmarkHoldSettleRecord is one request's store path, serially, with
// the default synchronous_commit=off for group commits and with every
// commit flushed.
func BenchmarkHoldSettleRecord(b *testing.B) {
	b.Run("async", func(b *testing.B) {
		db := open(b)
		defer storetest.ServerCPU(b, "postgres")()
		storetest.BenchmarkHoldSettleRecord(b, db)
	})
	b.Run("synceach", func(b *testing.B) {
		url, schema := testSchema(b)
		db, err := OpenWith(b.Context(), url, Options{Schema: schema, SyncEachCommit: true})
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		defer db.Close()
		defer storetest.ServerCPU(b, "postgres")()
		storetest.BenchmarkHoldSettleRecord(b, db)
	})
}

// BenchmarkHoldSettleBudgeted is BenchmarkHoldSettleRecord under budgets,
// after 0 and 2,000 prior requests of the key this month (each hold
// under a budget sums the period's records).
func BenchmarkHoldSettleBudgeted(b *testing.B) {
	for _, prior := range []int{0, 2_000} {
		b.Run(fmt.Sprintf("prior=%d", prior), func(b *testing.B) {
			db := open(b)
			storetest.BenchmarkHoldSettleBudgeted(b, db, prior)
		})
	}
}

// BenchmarkSettleManyAccounts is BenchmarkSettle in a store holding
// 20,000 other accounts: a batch's cost must not grow with them.
func BenchmarkSettleManyAccounts(b *testing.B) {
	db := open(b)
	if _, err := db.pool.Exec(b.Context(), `INSERT INTO accounts (id, name, created_at)
		SELECT 'acct_many_' || i, 'many-' || i, now() FROM generate_series(1, 20000) i`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.pool.Exec(b.Context(), `ANALYZE accounts`); err != nil {
		b.Fatal(err)
	}
	defer storetest.ServerCPU(b, "postgres")()
	storetest.BenchmarkSettle(b, db)
	st := db.Stats()
	b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
}

// BenchmarkRequestsAtRate is the store path of 1,000 requests a second,
// each taking 500 us from hold to settle, as a gateway's store sees them:
// PostgreSQL's CPU per request beside the median and 99th percentile
// time in the store.
func BenchmarkRequestsAtRate(b *testing.B) {
	db := open(b)
	defer storetest.ServerCPU(b, "postgres")()
	storetest.BenchmarkRequestsAtRate(b, db, 1000, 500*time.Microsecond)
}
