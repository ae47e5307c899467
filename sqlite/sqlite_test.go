package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t testing.TB) *DB {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gw.Store { return open(t) })
}

func BenchmarkSettle(b *testing.B) {
	storetest.BenchmarkSettle(b, open(b))
}

func TestOpenIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	a, err := db.EnsureAccount(t.Context(), "acme")
	if err != nil {
		t.Fatalf("EnsureAccount: %v", err)
	}
	if err := db.TopUp(t.Context(), a.ID, 42, "first"); err != nil {
		t.Fatalf("TopUp: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	defer db.Close()
	var versions int
	if err := db.r.QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatalf("count migrations: %v", err)
	}
	if versions != 1 {
		t.Errorf("schema_migrations has %d rows, want 1", versions)
	}
	var mode string
	if err := db.r.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	b, err := db.Balance(t.Context(), a.ID)
	if err != nil || b.Balance != 42 {
		t.Errorf("Balance after reopening = %+v, %v; want 42", b, err)
	}
}

func TestOpenConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := Open(t.Context(), path)
			if err != nil {
				errs <- err
				return
			}
			errs <- db.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}

// TestTwoHandlesShareOneFile: two stores on one file (as two processes
// would be) never over-commit the balance between them.
func TestTwoHandlesShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(t.Context(), path)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer db.Close()
		dbs[i] = db
	}
	a, err := dbs[0].EnsureAccount(t.Context(), "acme")
	if err != nil {
		t.Fatalf("EnsureAccount: %v", err)
	}
	if err := dbs[1].TopUp(t.Context(), a.ID, 10*100, "t"); err != nil {
		t.Fatalf("TopUp: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	placed := 0
	for i := range 60 {
		wg.Go(func() {
			id := fmt.Sprintf("req_%02d", i)
			err := dbs[i%2].PlaceHold(t.Context(), gw.Hold{ID: id, AccountID: a.ID, Amount: 100, ExpiresAt: time.Now().Add(time.Hour)})
			var e *gw.Error
			switch {
			case err == nil:
				mu.Lock()
				placed++
				mu.Unlock()
				if err := dbs[(i+1)%2].Settle(t.Context(), id, &gw.Record{Status: 200, Charge: 100}); err != nil {
					t.Errorf("Settle: %v", err)
				}
			case !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance:
				t.Errorf("PlaceHold: %v", err)
			}
		})
	}
	wg.Wait()
	if placed != 10 {
		t.Errorf("placed %d holds, want 10", placed)
	}
	b, err := dbs[0].Balance(t.Context(), a.ID)
	if err != nil || b.Balance != 0 || b.Charged != 1000 {
		t.Errorf("Balance = %+v, %v; want everything charged", b, err)
	}
	if err := dbs[1].VerifyLedger(t.Context(), a.ID); err != nil {
		t.Error(err)
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
