package reconcile_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/postgres"
	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/sqlite"
	"github.com/jackc/pgx/v5"
)

var day0 = time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)

// source is an in-memory Source: its report is what rows says.
type source struct {
	vendor string
	rows   func(day time.Time) ([]reconcile.Row, error)
	calls  atomic.Int64
}

func (s *source) Vendor() string { return s.vendor }
func (s *source) Day(_ context.Context, day time.Time) (reconcile.Report, error) {
	s.calls.Add(1)
	rows, err := s.rows(day)
	return reconcile.Report{Vendor: s.vendor, Day: day, Rows: rows, Complete: true}, err
}

type balances struct {
	mu  sync.Mutex
	bal gw.Money
}

func (b *balances) Vendor() string { return "deepseek" }
func (b *balances) Balance(context.Context) (gw.Money, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bal, nil
}

type generations map[string]gw.Money

func (g generations) GenerationCost(_ context.Context, id string) (gw.Money, bool, error) {
	c, ok := g[id]
	return c, ok, nil
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// stores opens two instances of one database of each kind the test can
// reach: an SQLite file, and a fresh PostgreSQL schema when
// GATEWAY_TEST_POSTGRES_URL is set.
func stores(t *testing.T) map[string][2]gw.Store {
	out := map[string][2]gw.Store{}
	path := filepath.Join(t.TempDir(), "gateway.db")
	a, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	out["sqlite"] = [2]gw.Store{a, b}
	url := os.Getenv("GATEWAY_TEST_POSTGRES_URL")
	if url == "" {
		t.Log("GATEWAY_TEST_POSTGRES_URL is not set: the PostgreSQL half of this test does not run")
		return out
	}
	var rb [6]byte
	rand.Read(rb[:])
	schema := "gwtest_" + hex.EncodeToString(rb[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	})
	pa, err := postgres.OpenWith(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := postgres.OpenWith(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pa.Close(); pb.Close() })
	out["postgres"] = [2]gw.Store{pa, pb}
	return out
}

func logRecord(t *testing.T, s gw.Store, id, vendor, model string, cost gw.Money, in, out int64, at time.Time) {
	t.Helper()
	r := &gw.Record{RequestID: id, AccountID: "acct_1", KeyID: "key_1", Endpoint: gw.ShapeC, Vendor: vendor, Model: model,
		Status: 200, Cost: cost, Charge: cost * 109 / 100, CreatedAt: at,
		Usage: gw.Usage{InputTokens: in, OutputTokens: out, Reported: true}}
	if err := s.Log(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// TestJobRunsOnOneInstance: two instances tick at once on one database:
// exactly one runs; the other runs only once the first's lease lapsed,
// and then not before the next run is due.
func TestJobRunsOnOneInstance(t *testing.T) {
	for kind, pair := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			clk := &clock{t: day0.Add(10 * time.Hour)}
			src := &source{vendor: "openai", rows: func(time.Time) ([]reconcile.Row, error) { return nil, nil }}
			var jobs [2]*reconcile.Job
			for i := range jobs {
				j, err := reconcile.New(reconcile.Config{Store: pair[i].(gw.ReconcileStore), Sources: []reconcile.Source{src},
					Holder: fmt.Sprintf("instance-%d", i), Now: clk.Now, Every: time.Hour, LeaseTTL: 90 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				jobs[i] = j
			}
			tickBoth := func() [2]bool {
				var ran [2]bool
				var wg sync.WaitGroup
				for i, j := range jobs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r, err := j.Tick(t.Context())
						if err != nil {
							t.Errorf("Tick(%d): %v", i, err)
						}
						ran[i] = r
					}()
				}
				wg.Wait()
				return ran
			}
			ran := tickBoth()
			if ran[0] == ran[1] {
				t.Fatalf("first ticks ran = %v, want exactly one instance", ran)
			}
			holder := 0
			if ran[1] {
				holder = 1
			}
			// One run: yesterday and today provisional, the day three
			// days back final.
			if n := src.calls.Load(); n != 3 {
				t.Errorf("report reads after one run = %d, want 3", n)
			}
			// Within the hour: nobody runs.
			clk.Add(time.Minute)
			if ran := tickBoth(); ran[0] || ran[1] {
				t.Errorf("ticks a minute later ran = %v, want none", ran)
			}
			// An hour later: the holder, only.
			clk.Add(time.Hour)
			ran = tickBoth()
			if !ran[holder] || ran[1-holder] {
				t.Errorf("ticks an hour later ran = %v, want only instance %d", ran, holder)
			}
			if n := src.calls.Load(); n != 5 {
				t.Errorf("report reads after two runs = %d, want 5 (the final run once)", n)
			}
			// The holder dies: while its lease runs the other never
			// runs; once it lapsed the other takes over, running what is
			// due.
			other := jobs[1-holder]
			clk.Add(80 * time.Minute)
			if r, err := other.Tick(t.Context()); err != nil || r {
				t.Errorf("tick of the other while the lease runs = %v, %v; want no run", r, err)
			}
			clk.Add(11 * time.Minute)
			if r, err := other.Tick(t.Context()); err != nil || !r {
				t.Errorf("takeover tick once the lease lapsed = %v, %v; want a run", r, err)
			}
			if r, err := other.Tick(t.Context()); err != nil || r {
				t.Errorf("the new holder's next tick = %v, %v; want no run (not due)", r, err)
			}
			if r, _ := jobs[holder].Tick(t.Context()); r {
				t.Error("the former holder ran while the other holds the lease")
			}
		})
	}
}

// TestJobReconcile: one run over in-memory reports stores each vendor's
// lines with the right alerts.
func TestJobReconcile(t *testing.T) {
	for kind, pair := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			s := pair[0]
			rs := s.(gw.ReconcileStore)
			at := day0.Add(2 * time.Hour)
			// openai: gpt-a matches; gpt-b's tokens match but the vendor
			// charged 10% more (a price change).
			for i := range 10 {
				logRecord(t, s, fmt.Sprintf("oa-a-%d", i), "openai", "gpt-a", 10*gw.Cent, 1000, 100, at)
				logRecord(t, s, fmt.Sprintf("oa-b-%d", i), "openai", "gpt-b", 10*gw.Cent, 1000, 100, at)
			}
			logRecord(t, s, "an-1", "anthropic", "claude-x", gw.Cent, 10, 10, at)
			logRecord(t, s, "gq-1", "groq", "llama", gw.Cent, 10, 10, at)
			openai := &source{vendor: "openai", rows: func(time.Time) ([]reconcile.Row, error) {
				return []reconcile.Row{
					{Model: "gpt-a", Cost: gw.USD, HasCost: true, Tokens: map[string]int64{reconcile.TokensInput: 10000, reconcile.TokensOutput: 1000}},
					{Model: "gpt-b", Cost: 110 * gw.Cent, HasCost: true, Tokens: map[string]int64{reconcile.TokensInput: 10000, reconcile.TokensOutput: 1000}},
				}, nil
			}}
			anthropic := &source{vendor: "anthropic", rows: func(time.Time) ([]reconcile.Row, error) { return nil, reconcile.ErrNoCredentials }}
			// deepseek: 3 requests of $1 between two readings.
			bal := &balances{bal: 50 * gw.USD}
			// openrouter: one generation matches, one the vendor settled
			// 5 micro-cents higher.
			logRecordGen := func(id, gen string, cost gw.Money) {
				r := &gw.Record{RequestID: id, AccountID: "acct_1", Endpoint: gw.ShapeC, Vendor: "openrouter", Model: "or/m", Status: 200,
					Cost: cost, Charge: cost * 109 / 100, CreatedAt: at, VendorResponseID: gen}
				if err := s.Log(t.Context(), r); err != nil {
					t.Fatal(err)
				}
			}
			logRecordGen("or-1", "gen-1", 1000)
			logRecordGen("or-2", "gen-2", 2000)
			logRecordGen("or-3", "gen-3", 3000) // not settled at the vendor yet
			clk := &clock{t: day0.Add(3 * time.Hour)}
			j, err := reconcile.New(reconcile.Config{Store: rs, Sources: []reconcile.Source{openai, anthropic},
				Balances: []reconcile.Balances{bal}, Generations: generations{"gen-1": 1000, "gen-2": 2005},
				Vendors: []string{"groq"}, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Reconcile(t.Context(), day0, "", false); err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Hour)
			for i := range 3 {
				logRecord(t, s, fmt.Sprintf("ds-%d", i), "deepseek", "deepseek-chat", gw.USD, 100, 100, day0.Add(3*time.Hour+time.Duration(i+1)*time.Minute))
			}
			bal.mu.Lock()
			bal.bal -= 3 * gw.USD
			bal.mu.Unlock()
			lines, err := j.Reconcile(t.Context(), day0, "", false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				if l.Alert != "" || l.Level == gw.ReconBalance || l.Status == gw.ReconUnreconcilable {
					got = append(got, fmt.Sprintf("%s/%s/%s:%s:%s", l.Vendor, l.Level, l.Model, l.Status, l.Alert))
				}
			}
			want := []string{
				"anthropic/vendor/:unreconcilable:unreconcilable",
				"deepseek/balance/:match:",
				"groq/vendor/:unreconcilable:unreconcilable",
				"openai/model/gpt-b:drift:price_table_stale",
				"openrouter/vendor/:drift:generation_drift",
			}
			if !slices.Equal(got, want) {
				t.Errorf("lines = %v\nwant    %v", got, want)
			}
			for _, l := range lines {
				if l.Vendor == "deepseek" && (l.Ledger != int64(3*gw.USD) || l.Reported != int64(3*gw.USD)) {
					t.Errorf("deepseek balance line = %+v, want $3 spent on both sides", l)
				}
				if l.Model == "gpt-b" && l.Level == gw.ReconModel && (l.OurPrice != gw.USD*1_000_000/11_000 || l.ImpliedPrice != 110*gw.Cent*1_000_000/11_000) {
					t.Errorf("gpt-b prices = ours %d implied %d", l.OurPrice, l.ImpliedPrice)
				}
			}
			stored, err := rs.Recon(t.Context(), gw.ReconFilter{AlertsOnly: true})
			if err != nil || len(stored) != 4 {
				t.Errorf("stored alerts = %d, %v; want 4", len(stored), err)
			}
			adj, err := rs.Adjustments(t.Context(), gw.AdjustmentPending, 0)
			if err != nil || len(adj) != 1 || adj[0].RequestID != "or-2" || adj[0].Reported != 2005 || adj[0].Ledger != 2000 {
				t.Errorf("pending adjustments = %+v, %v; want or-2's 2000 vs 2005", adj, err)
			}
			// The charge is never touched: or-2's record is as it was.
			if r, err := s.Record(t.Context(), "or-2"); err != nil || r.Charge != 2000*109/100 {
				t.Errorf("or-2's record after the adjustment = %+v, %v; want its charge unchanged", r, err)
			}
		})
	}
}
