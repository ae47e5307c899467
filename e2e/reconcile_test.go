package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/reconcile"
)

// withAdminKeys gives the reconcilable vendors the fakes' admin keys
// (and lifts the key's rate limits: the test sends 1,000 requests).
func withAdminKeys(c *app.Config) {
	c.RPM, c.TPM = 0, 0
	for _, v := range app.AdminKeyVendors {
		vc := c.Vendors[v]
		vc.AdminKey = fakevendor.AdminKey(v)
		c.Vendors[v] = vc
	}
}

// reconStores lists the stores the reconciliation e2e runs on: SQLite,
// and PostgreSQL (a fresh schema) when GATEWAY_TEST_POSTGRES_URL is set.
func reconStores(t *testing.T) map[string]envOption {
	out := map[string]envOption{"sqlite": func(*app.Config) {}}
	pg := os.Getenv("GATEWAY_TEST_POSTGRES_URL")
	if pg == "" {
		t.Log("GATEWAY_TEST_POSTGRES_URL is not set: the PostgreSQL run is left out")
		return out
	}
	out["postgres"] = func(c *app.Config) { c.DatabaseURL = pgSchemaURL(t, pg) }
	return out
}

// pgSchemaURL creates a fresh schema (dropped when t ends) and returns
// pg with its search_path set to it.
func pgSchemaURL(t *testing.T, pg string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "gwe2e_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, pg); err == nil {
			c.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			c.Close(ctx)
		}
	})
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// reconModels are the models the reconciliation e2e sends to, with how
// many of its 1,000 requests each gets.
var reconModels = []struct {
	vendor, model string
	n             int
}{
	{"openai", "gpt-4.1", 200},
	{"openai", "gpt-4.1-mini", 50},
	{"openai", "gpt-5.4-mini", 50},
	{"anthropic", "claude-sonnet-4-5", 200},
	{"anthropic", "claude-haiku-4-5", 50},
	{"openrouter", "meta-llama/llama-3.3-70b-instruct", 200},
	{"deepseek", "deepseek-flash", 250},
}

// sendReconTraffic sends each model its requests, 16 at a time, and
// checks every one was answered.
func sendReconTraffic(t *testing.T, e *env) {
	type job struct{ vendor, model string }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := map[int]int{}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				var status int
				if j.vendor == "anthropic" {
					resp := e.post("/v1/messages", e.key, messagesBody(j.vendor+"/"+j.model, "Reconcile me, please.", false, ""))
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				} else {
					resp := e.post("/v1/chat/completions", e.key, chatBody(j.vendor+"/"+j.model, "Reconcile me, please.", false, ""))
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				if status != 200 {
					mu.Lock()
					failed[status]++
					mu.Unlock()
				}
			}
		}()
	}
	for _, m := range reconModels {
		for range m.n {
			jobs <- job{m.vendor, m.model}
		}
	}
	close(jobs)
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("requests not answered 200: %v", failed)
	}
}

// alertsOf lists the lines that alert as "vendor/level/model/class:alert".
func alertsOf(lines []gw.ReconLine) []string {
	var out []string
	for _, l := range lines {
		if l.Alert != "" {
			out = append(out, fmt.Sprintf("%s/%s/%s/%s:%s", l.Vendor, l.Level, l.Model, l.Class, l.Alert))
		}
	}
	sort.Strings(out)
	return out
}

func lineOf(lines []gw.ReconLine, vendor, level, model, class string) (gw.ReconLine, bool) {
	for _, l := range lines {
		if l.Vendor == vendor && l.Level == level && l.Model == model && l.Class == class {
			return l, true
		}
	}
	return gw.ReconLine{}, false
}

// TestReconcileEndToEnd: 1,000 requests across the reconcilable vendors
// through the gateway to the fakes; their reports matching, no alert;
// then each drift knob raises exactly its alert, on its vendor, day and
// model, with its figure. On SQLite and on PostgreSQL.
func TestReconcileEndToEnd(t *testing.T) {
	for kind, store := range reconStores(t) {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, withAdminKeys, store)
			j, err := app.ReconcileJob(e.m.Config, e.m.Store(), "e2e", slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			today := reconcile.Day(time.Now())
			// DeepSeek's balance before the traffic.
			if _, err := j.Reconcile(ctx, today, "deepseek", false); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			sendReconTraffic(t, e)
			lines, err := j.Reconcile(ctx, today, "", false)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if got := alertsOf(lines); len(got) != 0 {
				t.Fatalf("alerts with matching reports = %v, want none", got)
			}
			for _, want := range []struct{ vendor, level string }{{"openai", gw.ReconVendor}, {"anthropic", gw.ReconVendor}, {"openrouter", gw.ReconVendor}, {"deepseek", gw.ReconBalance}} {
				l, ok := lineOf(lines, want.vendor, want.level, "", "")
				// DeepSeek's balance is a decimal of cents: its fall
				// is known to a cent.
				tolerance := int64(0)
				if want.level == gw.ReconBalance {
					tolerance = int64(gw.Cent)
				}
				if !ok || l.Status != gw.ReconMatch || l.Ledger == 0 || max(l.Ledger-l.Reported, l.Reported-l.Ledger) > tolerance {
					t.Errorf("%s %s line = %+v, want matching, non-zero", want.vendor, want.level, l)
				}
			}
			if l, _ := lineOf(lines, "groq", gw.ReconVendor, "", ""); l.Status != gw.ReconUnreconcilable {
				t.Errorf("groq = %+v, want unreconcilable (no report), never matching", l)
			}

			// The knobs, each on its own model.
			// gpt-4.1's price up 10% at the vendor, not on our card.
			card, err := ratecard.Default()
			if err != nil {
				t.Fatal(err)
			}
			cm, ok := card.Lookup("openai", "gpt-4.1")
			if !ok {
				t.Fatal("gpt-4.1 is not on the card")
			}
			r, _ := cm.RatesFor(0)
			e.fake.SetReportPrice("openai", "gpt-4.1", today, fakevendor.Rates{Input: r.Input * 11 / 10, CacheRead: r.CachedInput * 11 / 10, Output: r.Output * 11 / 10})
			// Anthropic's report loses the hour of the traffic (both,
			// should it have crossed one).
			e.fake.DropReportHour("anthropic", start)
			e.fake.DropReportHour("anthropic", time.Now())
			e.fake.DuplicateInReport("openai", "gpt-4.1-mini")
			// A cost line the card does not price: a cent a request.
			e.fake.AddReportSurcharge("openai", "gpt-5.4-mini", "web_search", gw.Cent)
			lines, err = j.Reconcile(ctx, today, "", false)
			if err != nil {
				t.Fatalf("reconcile with the knobs: %v", err)
			}
			got := alertsOf(lines)
			for _, l := range lines {
				if l.Alert != "" {
					t.Logf("%s %s %s %s %s: ledger %d, vendor %d, drift %d ppm, ours %d implied %d", l.Alert, l.Vendor, l.Day.Format(time.DateOnly), l.Model, l.Class, l.Ledger, l.Reported, l.DriftPPM, l.OurPrice, l.ImpliedPrice)
				}
			}
			want := []string{
				"anthropic/tokens/claude-haiku-4-5/input:token_drift",
				"anthropic/tokens/claude-haiku-4-5/output:token_drift",
				"anthropic/tokens/claude-sonnet-4-5/input:token_drift",
				"anthropic/tokens/claude-sonnet-4-5/output:token_drift",
				"openai/model/gpt-4.1/:price_table_stale",
				"openai/model/gpt-5.4-mini/:price_table_stale",
				"openai/tokens/gpt-4.1-mini/input:token_drift",
				"openai/tokens/gpt-4.1-mini/output:token_drift",
				"openai/tokens/gpt-4.1-mini/requests:token_drift",
			}
			if !slices.Equal(got, want) {
				t.Errorf("alerts with the knobs = %v\nwant %v", got, want)
			}
			stale, _ := lineOf(lines, "openai", gw.ReconModel, "gpt-4.1", "")
			// The vendor's implied price is ours plus 10% (to the
			// rounding of each side's cost).
			if d := stale.ImpliedPrice*10 - stale.OurPrice*11; d < -stale.OurPrice/100 || d > stale.OurPrice/100 || !stale.Day.Equal(today) {
				t.Errorf("price_table_stale line = %+v, want the vendor's implied price 10%% above ours, on today", stale)
			}
			sur, _ := lineOf(lines, "openai", gw.ReconModel, "gpt-5.4-mini", "")
			if sur.Reported-sur.Ledger != int64(50*gw.Cent) {
				t.Errorf("surcharged model = %+v, want the vendor 50 cents above the ledger", sur)
			}
			dup, _ := lineOf(lines, "openai", gw.ReconTokens, "gpt-4.1-mini", reconcile.TokensInput)
			if dup.Reported*50 != dup.Ledger*51 {
				t.Errorf("duplicated request: reported %d input tokens against %d, want one request's more of 50", dup.Reported, dup.Ledger)
			}
		})
	}
}

// TestReconcileWithoutAdminKeys: with no admin credentials the vendors
// with traffic are unreconcilable, with the alert, never matching.
func TestReconcileWithoutAdminKeys(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"openai/gpt-4.1", "deepseek/deepseek-flash", "openrouter/meta-llama/llama-3.3-70b-instruct"} {
		resp := e.post("/v1/chat/completions", e.key, chatBody(m, "hi", false, ""))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", m, resp.StatusCode)
		}
	}
	j, err := app.ReconcileJob(e.m.Config, e.m.Store(), "e2e", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := j.Reconcile(t.Context(), time.Now(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"openai", "deepseek", "openrouter"} {
		var l gw.ReconLine
		for _, x := range lines {
			if x.Vendor == v {
				l = x
			}
		}
		if l.Status != gw.ReconUnreconcilable || l.Alert != gw.AlertUnreconcilable {
			t.Errorf("%s without an admin key = %+v, want unreconcilable with its alert", v, l)
		}
	}
	if l, _ := lineOf(lines, "anthropic", gw.ReconVendor, "", ""); l.Status != gw.ReconUnreconcilable || l.Alert != "" {
		t.Errorf("anthropic without traffic or key = %+v, want unreconcilable, no alert", l)
	}
}

// TestReconcileRunsOnceOnTwoInstances: two gateways on one store; their
// jobs tick at once and exactly one reconciles.
func TestReconcileRunsOnceOnTwoInstances(t *testing.T) {
	for kind, store := range reconStores(t) {
		t.Run(kind, func(t *testing.T) {
			var shared envOption = store
			if kind == "sqlite" {
				path := ""
				shared = func(c *app.Config) {
					if path == "" {
						path = c.DatabaseURL
					}
					c.DatabaseURL, c.SQLiteShared = path, true
				}
			} else {
				var dsn string
				shared = func(c *app.Config) {
					if dsn == "" {
						store(c)
						dsn = c.DatabaseURL
					}
					c.DatabaseURL = dsn
				}
			}
			a := newEnv(t, withAdminKeys, shared)
			b := newEnv(t, withAdminKeys, shared)
			var ran [2]bool
			var wg sync.WaitGroup
			for i, e := range []*env{a, b} {
				j, err := reconcile.New(reconcileConfig(t, e, fmt.Sprintf("e2e-%d", i)))
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := j.Tick(t.Context())
					if err != nil {
						t.Errorf("tick %d: %v", i, err)
					}
					ran[i] = r
				}()
			}
			wg.Wait()
			if ran[0] == ran[1] {
				t.Errorf("ran = %v, want exactly one instance", ran)
			}
		})
	}
}

// reconcileConfig is e's job configuration under its own lease name, so
// that the gateways' own background jobs do not take part.
func reconcileConfig(t *testing.T, e *env, holder string) reconcile.Config {
	t.Helper()
	// Ten days ahead: days the gateways' own jobs have not run yet.
	later := func() time.Time { return time.Now().Add(240 * time.Hour) }
	return reconcile.Config{Store: e.m.Store().(gw.ReconcileStore), Vendors: []string{"groq"}, Holder: holder, LeaseName: "reconcile-e2e", Now: later}
}
