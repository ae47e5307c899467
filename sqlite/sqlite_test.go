package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/gwlabs/gateway/internal/sqlstore"
	"github.com/gwlabs/gateway/storetest"
	"go.uber.org/goleak"
)

// crashEnv, when set, makes the test binary the child of
// TestSettleSurvivesKill: it settles requests on the database file it names
// until it is killed.
const crashEnv = "GATEWAY_SQLITE_CRASH_CHILD"

// crashExclusiveEnv, when set too, makes the child's store exclusive
// (holds in memory).
const crashExclusiveEnv = "GATEWAY_SQLITE_CRASH_EXCLUSIVE"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		os.Exit(crashChild(path))
	}
	goleak.VerifyTestMain(m)
}

// crashChild settles requests one after another from a few goroutines and
// prints each request id once its Settle returned.
func crashChild(path string) int {
	ctx := context.Background()
	db, err := OpenWith(ctx, path, Options{Exclusive: os.Getenv(crashExclusiveEnv) != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	a, err := db.EnsureAccount(ctx, "crash")
	if err == nil {
		err = db.TopUp(ctx, a.ID, gw.USD, "t")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("req_%d_%06d", g, i)
				if err := db.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, Amount: 100, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				if err := db.Settle(ctx, id, &gw.Record{Status: 200, Charge: 90}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println(id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

// TestSettleSurvivesKill kills a process that is settling requests (kill
// -9, no chance to clean up) and checks that every Settle that returned is
// in the database, with the ledger consistent; with holds in the table
// and in memory (whose holds die with the process, their charges not).
func TestSettleSurvivesKill(t *testing.T) {
	t.Run("table", func(t *testing.T) { testSettleSurvivesKill(t, false) })
	t.Run("memory", func(t *testing.T) { testSettleSurvivesKill(t, true) })
}

func testSettleSurvivesKill(t *testing.T, exclusive bool) {
	path := filepath.Join(t.TempDir(), "gateway.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	if exclusive {
		cmd.Env = append(cmd.Env, crashExclusiveEnv+"=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var settled []string
	sc := bufio.NewScanner(out)
	for len(settled) < 300 && sc.Scan() {
		settled = append(settled, sc.Text())
	}
	cmd.Process.Kill()
	for sc.Scan() { // settles reported between the last read and the kill
		settled = append(settled, sc.Text())
	}
	cmd.Wait()
	if len(settled) < 300 {
		t.Fatalf("child settled only %d requests: %s", len(settled), stderr.String())
	}

	db := open2(t, path)
	for _, id := range settled {
		r, err := db.Record(t.Context(), id)
		if err != nil || r.Charge != 90 {
			t.Fatalf("Record(%s) after the kill = %+v, %v; want the settled charge", id, r, err)
		}
	}
	a, err := db.AccountByName(t.Context(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.VerifyLedger(t.Context(), a.ID); err != nil {
		t.Error(err)
	}
	b, err := db.Balance(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(settled)); b.Charged < gw.Money(90*n) {
		t.Errorf("Charged = %d after %d reported settles of 90", b.Charged, n)
	}
	t.Logf("%d settles reported before the kill; %d charged in the file", len(settled), b.Charged/90)
}

// open2 opens the existing file at path, closed when t ends.
func open2(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
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

// TestStoreExclusive runs the suite on a store keeping its holds in
// memory.
func TestStoreExclusive(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gw.Store { return openWith(t, Options{Exclusive: true}) })
}

func openWith(t testing.TB, opt Options) *DB {
	t.Helper()
	db, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), opt)
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

// BenchmarkSettle is many concurrent requests' store path (16 goroutines
// per CPU each placing a hold and settling it), with holds in the table
// (shared) and in memory (exclusive). Besides time and CPU it reports
// counts that do not depend on the machine's load: commits, statements
// and write-ahead log frames per request (no checkpoint restarts the log
// during the run).
func BenchmarkSettle(b *testing.B) {
	for _, mode := range []struct {
		name      string
		exclusive bool
	}{{"table", false}, {"memory", true}} {
		b.Run(mode.name, func(b *testing.B) {
			db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: time.Hour, Exclusive: mode.exclusive, backstop: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			wal := walSize(b, db)
			storetest.BenchmarkSettle(b, db)
			st := db.Stats()
			b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
			b.ReportMetric(float64(st.Retried)/float64(max(st.Ops, 1)), "retried/call")
			b.ReportMetric(float64(st.Batches)/float64(b.N), "commits/op")
			b.ReportMetric(float64(walSize(b, db)-wal)/(4096+24)/float64(b.N), "frames/op")
		})
	}
}

// BenchmarkSettleAtRate is the store path at a steady rate of requests
// (holds in memory), with the group commit waiting for more calls
// (linger) or not: the CPU, commits and log frames per request it saves,
// and the time per request it adds.
func BenchmarkSettleAtRate(b *testing.B) {
	for _, rate := range []float64{1000, 2000, 4000} {
		for _, linger := range []time.Duration{-1, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond} {
			name := fmt.Sprintf("%g/linger=%v", rate, max(linger, 0))
			b.Run(name, func(b *testing.B) {
				db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: time.Hour, Exclusive: true, Linger: linger, backstop: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				wal := walSize(b, db)
				storetest.BenchmarkSettleAtRate(b, db, rate)
				st := db.Stats()
				b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
				b.ReportMetric(float64(walSize(b, db)-wal)/(4096+24)/float64(b.N), "frames/op")
			})
		}
	}
}

// BenchmarkRequestsAtRate is the store path of requests arriving at a
// steady rate and taking 500 us from hold to settle, with the group
// commit waiting for the calls the arrival rate promises (rate) or only
// for the requests in flight (inflight, the default), or not at all.
func BenchmarkRequestsAtRate(b *testing.B) {
	for _, rate := range []float64{1000, 2000} {
		for _, mode := range []string{"off", "rate", "inflight"} {
			b.Run(fmt.Sprintf("%g/%s", rate, mode), func(b *testing.B) {
				opt := Options{SyncInterval: time.Hour, Exclusive: true, backstop: 1 << 30}
				switch mode {
				case "off":
					opt.Linger = -1
				case "rate":
					opt.rateLinger = true
				}
				db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), opt)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				wal := walSize(b, db)
				storetest.BenchmarkRequestsAtRate(b, db, rate, 500*time.Microsecond)
				st := db.Stats()
				b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
				b.ReportMetric(float64(walSize(b, db)-wal)/(4096+24)/float64(b.N), "frames/op")
			})
		}
	}
}

// walSize returns the size of db's write-ahead log.
func walSize(b *testing.B, db *DB) int64 {
	fi, err := os.Stat(db.path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkSettleSyncEach is BenchmarkSettle with synchronous=FULL (an
// fsync per commit, as before the background sync), for comparison.
func BenchmarkSettleSyncEach(b *testing.B) {
	db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: -1})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer db.Close()
	storetest.BenchmarkSettle(b, db)
	st := db.Stats()
	b.ReportMetric(float64(st.Ops)/float64(max(st.Batches, 1)), "calls/commit")
}

// TestSynchronousMode: commits are synced in the background by default
// (NORMAL), every one before it returns with a negative SyncInterval
// (FULL); either way the store closes without leaking its syncer.
func TestSynchronousMode(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		want     int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{0, 1}, {-1, 2}, {10 * time.Millisecond, 1}} {
		db, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), Options{SyncInterval: c.interval})
		if err != nil {
			t.Fatal(err)
		}
		var got, auto int
		if err := db.w.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&got); err != nil || got != c.want {
			t.Errorf("SyncInterval %v: synchronous = %d, %v; want %d", c.interval, got, err, c.want)
		}
		// Background sync: the checkpoints are the syncer's, not the
		// committer's.
		wantAuto := map[int]int{1: backstopPages, 2: 1000}[c.want]
		if err := db.w.QueryRowContext(t.Context(), `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != wantAuto {
			t.Errorf("SyncInterval %v: wal_autocheckpoint = %d, %v; want %d", c.interval, auto, err, wantAuto)
		}
		if _, err := db.EnsureAccount(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBackgroundCheckpoints: the syncer checkpoints the log (the commits'
// own checkpoint only runs past a log of backstopPages, far more than this
// test writes), so the database file grows with the commits while the
// store runs, not only at a forced checkpoint.
func TestBackgroundCheckpoints(t *testing.T) {
	db, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), Options{SyncInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.EnsureAccount(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TopUp(t.Context(), a.ID, gw.USD, "t"); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(db.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	start := size()
	for i := range 200 {
		id := fmt.Sprintf("req_%d", i)
		if err := db.PlaceHold(t.Context(), gw.Hold{ID: id, AccountID: a.ID, Amount: 10, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := db.Settle(t.Context(), id, &gw.Record{Status: 200, Charge: 5}); err != nil {
			t.Fatal(err)
		}
	}
	// The syncer's ticks checkpoint the log: wait for the file to grow,
	// at most 10 s.
	got := size()
	for deadline := time.Now().Add(10 * time.Second); got <= start && time.Now().Before(deadline); got = size() {
		time.Sleep(10 * time.Millisecond)
	}
	if got <= start {
		t.Errorf("database file: %d bytes at the start, %d after 200 requests and 10 s: the syncer did not checkpoint", start, got)
	}
	if err := db.VerifyLedger(t.Context(), a.ID); err != nil {
		t.Error(err)
	}
}

// BenchmarkSettleNoBatch is BenchmarkSettle with group commit off (one
// transaction per call), for comparison.
func BenchmarkSettleNoBatch(b *testing.B) {
	db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{MaxBatch: 1})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	defer db.Close()
	storetest.BenchmarkSettle(b, db)
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
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if versions != len(files) || len(files) < 2 {
		t.Errorf("schema_migrations has %d rows, want one per migration file (%d)", versions, len(files))
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

// TestCommitIsolatesFailingCall: see storetest.CommitIsolation.
func TestCommitIsolatesFailingCall(t *testing.T) {
	db := open(t)
	storetest.CommitIsolation(t, db, db.gc)
}

// BenchmarkHoldSettleRecord is one request's store path, serially, with
// the background sync (default; holds in the table and in memory) and
// with an fsync per commit.
func BenchmarkHoldSettleRecord(b *testing.B) {
	for _, mode := range []struct {
		name      string
		exclusive bool
	}{{"bgsync", false}, {"bgsync-memory", true}} {
		b.Run(mode.name, func(b *testing.B) {
			// Count the log frames a request writes (deterministic,
			// unlike its time): no checkpoint restarts the log during
			// the run.
			db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: time.Hour, Exclusive: mode.exclusive, backstop: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			wal := walSize(b, db)
			storetest.BenchmarkHoldSettleRecord(b, db)
			b.ReportMetric(float64(walSize(b, db)-wal)/(4096+24)/float64(b.N), "frames/op")
			b.ReportMetric(float64(db.Stats().Batches)/float64(b.N), "commits/op")
		})
	}
	b.Run("synceach", func(b *testing.B) {
		db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: -1})
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		defer db.Close()
		storetest.BenchmarkHoldSettleRecord(b, db)
	})
}

// BenchmarkHoldSettleBudgeted is BenchmarkHoldSettleRecord's bgsync and
// bgsync-memory under budgets, after 0 and 2,000 prior requests of the
// key this month: holds in memory read the period's spend once, holds in
// the table sum it on every hold.
func BenchmarkHoldSettleBudgeted(b *testing.B) {
	for _, mode := range []struct {
		name      string
		exclusive bool
	}{{"bgsync", false}, {"bgsync-memory", true}} {
		for _, prior := range []int{0, 2_000} {
			b.Run(fmt.Sprintf("%s/prior=%d", mode.name, prior), func(b *testing.B) {
				db, err := OpenWith(b.Context(), filepath.Join(b.TempDir(), "gateway.db"), Options{SyncInterval: time.Hour, Exclusive: mode.exclusive, backstop: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				storetest.BenchmarkHoldSettleBudgeted(b, db, prior)
			})
		}
	}
}

// TestExclusiveOwnsHolds: an exclusive store (holds in memory) and a
// store keeping holds in the table never place holds on one file
// together, whichever came first; stores that place no holds open the
// file beside either; a killed or closed owner gives the file back.
func TestExclusiveOwnsHolds(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "gateway.db")
	ex, err := OpenWith(ctx, path, Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWith(ctx, path, Options{Exclusive: true}); !errors.Is(err, errHoldsLocked) {
		t.Fatalf("second exclusive Open = %v, want %v", err, errHoldsLocked)
	}
	admin := open2(t, path) // an admin command: no holds
	a, err := admin.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.TopUp(ctx, a.ID, 500, "t"); err != nil {
		t.Fatal(err)
	}
	if err := admin.PlaceHold(ctx, gw.Hold{ID: "req_1", AccountID: a.ID, Amount: 1, ExpiresAt: time.Now().Add(time.Hour)}); !errors.Is(err, errHoldsLocked) {
		t.Fatalf("PlaceHold beside an exclusive store = %v, want %v", err, errHoldsLocked)
	}
	// The exclusive store sees the other process's top-up.
	if err := ex.PlaceHold(ctx, gw.Hold{ID: "req_2", AccountID: a.ID, Amount: 500, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatalf("PlaceHold of the whole balance: %v", err)
	}
	if err := admin.TopUp(ctx, a.ID, 300, "t"); err != nil {
		t.Fatal(err)
	}
	if err := ex.PlaceHold(ctx, gw.Hold{ID: "req_3", AccountID: a.ID, Amount: 300, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatalf("PlaceHold after another process's top-up: %v", err)
	}
	wantErr := func(err error) {
		t.Helper()
		var e *gw.Error
		if !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance {
			t.Fatalf("PlaceHold beyond the balance = %v, want insufficient balance", err)
		}
	}
	wantErr(ex.PlaceHold(ctx, gw.Hold{ID: "req_4", AccountID: a.ID, Amount: 1, ExpiresAt: time.Now().Add(time.Hour)}))
	if b, err := admin.Balance(ctx, a.ID); err != nil || b.Balance != 800 || b.Held != 0 {
		t.Fatalf("another process's Balance = %+v, %v; want 800, its own holds (none)", b, err)
	}
	if b, err := ex.Balance(ctx, a.ID); err != nil || b.Balance != 800 || b.Held != 800 || b.Available != 0 {
		t.Fatalf("Balance = %+v, %v; want 800 all held", b, err)
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed, the file takes holds in the table again.
	if err := admin.PlaceHold(ctx, gw.Hold{ID: "req_5", AccountID: a.ID, Amount: 1, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatalf("PlaceHold after the exclusive store closed: %v", err)
	}
	if _, err := OpenWith(ctx, path, Options{Exclusive: true}); !errors.Is(err, errHoldsLocked) {
		t.Fatalf("exclusive Open beside a store with table holds = %v, want %v", err, errHoldsLocked)
	}
}

// TestExclusiveSettleBound: on a store keeping holds in memory, the
// settle bound starts from the book's balance and reads the table only
// when that does not cover the charge: a top-up by another process
// covers a charge above the hold, and settles of one account in one
// batch are bounded by each other's charges, which the batch writes to
// the account only at its end.
func TestExclusiveSettleBound(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "gateway.db")
	ex, err := OpenWith(ctx, path, Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	admin := open2(t, path)
	a, err := admin.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.TopUp(ctx, a.ID, 100, "t"); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	if err := ex.PlaceHold(ctx, gw.Hold{ID: "req_1", AccountID: a.ID, Amount: 100, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if err := admin.TopUp(ctx, a.ID, 500, "t"); err != nil {
		t.Fatal(err)
	}
	r := &gw.Record{Status: 200, Charge: 400}
	if err := ex.Settle(ctx, "req_1", r); err != nil {
		t.Fatal(err)
	}
	if r.Charge != 400 || r.Loss != 0 {
		t.Fatalf("settle covered by another process's top-up: charge %d loss %d, want 400, 0", r.Charge, r.Loss)
	}

	// Balance 200: three holds of 50 settled in one batch at 120 each.
	var batch []*groupcommit.Op
	for _, id := range []string{"req_a", "req_b", "req_c"} {
		if err := ex.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, Amount: 50, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"req_a", "req_b", "req_c"} {
		h, err := ex.book.take(id, "settle")
		if err != nil {
			t.Fatal(err)
		}
		o, err := sqlstore.SettleOp(id, &gw.Record{Status: 200, Charge: 120}, ex.now)
		if err != nil {
			t.Fatal(err)
		}
		o.Hold = h
		batch = append(batch, o)
	}
	for i, err := range ex.gc.Commit(batch) {
		if err != nil {
			t.Fatalf("settle %d: %v", i, err)
		}
	}
	// a: 200 less the others' 100 held covers 100. b: 200 less a's 100
	// charged, less c's 50 held, covers 50. c: the 50 left.
	for i, want := range []gw.Money{100, 50, 50} {
		if r := batch[i].Rec; r.Charge != want || r.Loss != 120-want {
			t.Errorf("%s: charge %d loss %d, want %d, %d", r.RequestID, r.Charge, r.Loss, want, 120-want)
		}
	}
	b, err := ex.Balance(ctx, a.ID)
	if err != nil || b.Balance != 0 || b.Held != 0 || b.Charged != 600 {
		t.Errorf("Balance = %+v, %v; want all 600 charged, nothing held", b, err)
	}
	if err := ex.VerifyLedger(ctx, a.ID); err != nil {
		t.Error(err)
	}
	// The book's balance follows: nothing is left to hold.
	if err := ex.PlaceHold(ctx, gw.Hold{ID: "req_d", AccountID: a.ID, Amount: 1, ExpiresAt: exp}); err == nil {
		t.Error("PlaceHold on an empty balance succeeded")
	}
}

// TestBookCountsInFlight: the holds the group commit may wait for are
// those placed and not yet being settled or released, swept or given
// back after a failed settle.
func TestBookCountsInFlight(t *testing.T) {
	ctx := t.Context()
	db := openWith(t, Options{Exclusive: true})
	a, err := db.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TopUp(ctx, a.ID, 1000, "t"); err != nil {
		t.Fatal(err)
	}
	want := func(n int64) {
		t.Helper()
		if got := db.book.open.Load(); got != n {
			t.Fatalf("in flight = %d, want %d", got, n)
		}
	}
	now := time.Now()
	for _, h := range []gw.Hold{
		{ID: "req_1", AccountID: a.ID, Amount: 10, ExpiresAt: now.Add(time.Hour)},
		{ID: "req_2", AccountID: a.ID, Amount: 10, ExpiresAt: now.Add(time.Hour)},
		{ID: "req_3", AccountID: a.ID, Amount: 10, ExpiresAt: now.Add(time.Hour)},
		{ID: "req_old", AccountID: a.ID, Amount: 10, ExpiresAt: now.Add(-time.Second)},
	} {
		if err := db.PlaceHold(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	want(4)
	if err := db.Settle(ctx, "req_1", &gw.Record{Status: 200, Charge: 5}); err != nil {
		t.Fatal(err)
	}
	if err := db.Release(ctx, "req_2", nil); err != nil {
		t.Fatal(err)
	}
	want(2)
	if _, err := db.book.take("req_3", "settle"); err != nil {
		t.Fatal(err)
	}
	want(1)
	db.book.untake("req_3")
	db.book.untake("req_3") // a second give-back changes nothing
	want(2)
	if n, err := db.ExpireHolds(ctx, now); err != nil || n != 1 {
		t.Fatalf("ExpireHolds = %d, %v; want 1", n, err)
	}
	want(1)
	if err := db.Release(ctx, "req_3", &gw.Record{Status: 499}); err != nil {
		t.Fatal(err)
	}
	want(0)
}
