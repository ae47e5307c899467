package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// dbBytes is the SQLite database's size in use, committed write-ahead log
// included (page_count x page_size, read on a connection of its own).
func dbBytes(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages, size int64
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	return pages * size
}

// mb formats n bytes in MB (10^6), or kB below one MB.
func mb(n int64) string {
	if n < 0 {
		return "(not measured)"
	}
	if n < 1e6 {
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// Issue 29 item 7, the storage bounds, measured as the growth of the
// SQLite database with the default bounds, which must hold:
//
//   - 100 thread creates on a mapped route, each carrying a 1.5 MB
//     thinking signature: the threads kept for the account grew the
//     database by 165 MB; GATEWAY_STATE_MAX_BYTES (64 MiB) bounds it.
//   - refused requests from one key (an rpm=1 key sending 10,000; the
//     audit sent 40,000 for +57 MB): a row each; with
//     GATEWAY_REFUSED_RECORDS_PER_MINUTE (60) 60 rows a minute plus one
//     aggregate.
//   - 1,100 blocked requests with about 17 KB of flagged text each (19
//     MB of incidents): GATEWAY_INCIDENT_TEXTS_PER_MINUTE (30) keeps the
//     text of 30 a minute, each at most 4 KB.
//
// With GATEWAY_TEST_STORAGE_BEFORE=1 each case also runs with its bound
// out of the way (what the audit saw), and -v prints both figures:
//
//	GATEWAY_TEST_STORAGE_BEFORE=1 go test -run TestStorageBoundsDatabaseGrowth -v ./e2e/
func TestStorageBoundsDatabaseGrowth(t *testing.T) {
	ctx := context.Background()
	before := os.Getenv("GATEWAY_TEST_STORAGE_BEFORE") == "1"
	grow := func(t *testing.T, opt envOption, work func(t *testing.T, e *env)) int64 {
		if opt == nil {
			return -1 // the unbounded run, not asked for
		}
		e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 }, opt)
		start := dbBytes(t, e.m.Config.DatabaseURL)
		work(t, e)
		return dbBytes(t, e.m.Config.DatabaseURL) - start
	}

	unbounded := func(o envOption) envOption {
		if before {
			return o
		}
		return nil
	}

	t.Run("threads with a 1.5 MB signature", func(t *testing.T) {
		sig := strings.Repeat("S", 1_500_000)
		work := func(t *testing.T, e *env) {
			for i := range 100 {
				body := fmt.Sprintf(`{"model":"groq/llama-3.3-70b-versatile","max_tokens":64,"thread":{"type":"create"},"messages":[
					{"role":"user","content":"Think about it. %d"},
					{"role":"assistant","content":[{"type":"thinking","thinking":"Let me see.","signature":%q},{"type":"text","text":"Done."}]},
					{"role":"user","content":"And now?"}]}`, i, sig)
				if a := e.postThread(t, e.key, []byte(body), false); a.status != http.StatusOK {
					t.Fatalf("create %d: %d %.300s", i, a.status, a.raw)
				}
			}
		}
		off := grow(t, unbounded(func(c *app.Config) { c.StateMaxBytes = 1 << 40 }), work)
		on := grow(t, func(*app.Config) {}, work)
		t.Logf("100 threads of 1.5 MB: the database grew %s unbounded, %s with the 64 MiB account bound", mb(off), mb(on))
		if on > 64<<20+8<<20 || before && off < 150e6 {
			t.Errorf("grew %d bounded (%d unbounded); want at most the 64 MiB bound (+ 8 MiB of pages), and about 150 MB unbounded", on, off)
		}
	})

	t.Run("10,000 refused requests from one key", func(t *testing.T) {
		const n = 10_000
		work := func(t *testing.T, e *env) {
			secret, _, err := createKeyWithLimits(ctx, e.m.Store(), uniqueAccount("refused"), gw.USD, gw.Limit{RPM: 1})
			if err != nil {
				t.Fatal(err)
			}
			body := chatBody("groq/llama-3.3-70b-versatile", "hi", false, `,"max_tokens":16`)
			var wg sync.WaitGroup
			var mu sync.Mutex
			limited := 0
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n; i += 8 {
						req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", bytes.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+secret)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode == http.StatusTooManyRequests {
							mu.Lock()
							limited++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			if limited < n-2 {
				t.Errorf("%d of %d refused; want all but the first", limited, n)
			}
		}
		off := grow(t, unbounded(func(c *app.Config) { c.RefusedPerMinute = -1 }), work)
		on := grow(t, func(*app.Config) {}, work)
		t.Logf("%d refused requests: the database grew %s with a row each, %s with 60 rows a minute and an aggregate", n, mb(off), mb(on))
		if on > 256<<10 || before && off < 10*on {
			t.Errorf("grew %d aggregated (%d with a row each); want under 256 KiB, a tenth of the other at most", on, off)
		}
	})

	t.Run("1,100 blocked requests with 17 KB of flagged text", func(t *testing.T) {
		flagged := strings.Repeat(attack+" ", 17<<10/(len(attack)+1))
		work := func(t *testing.T, e *env) {
			secret, _, err := createKey(ctx, e.m.Store(), uniqueAccount("flood"), gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			body := messagesBody("anthropic/"+nativeModels["anthropic"], flagged, false, "")
			for i := range 1100 {
				resp := e.post("/v1/messages", secret, body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("request %d: %d, want 403", i, resp.StatusCode)
				}
			}
		}
		off := grow(t, unbounded(func(c *app.Config) { c.IncidentTextsPerMinute = 1 << 30 }), work)
		on := grow(t, func(*app.Config) {}, work)
		t.Logf("1,100 blocked requests: the database grew %s keeping every text (4 KB each), %s keeping 30 a minute", mb(off), mb(on))
		if on > 3<<20 || before && on >= off {
			t.Errorf("grew %d bounded (%d keeping every text); want under 3 MiB, and less", on, off)
		}
	})
}
