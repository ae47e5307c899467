package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/ratecard"
)

// storesUnderTest returns the database URLs to run a full-path test on:
// SQLite always, PostgreSQL when GATEWAY_TEST_POSTGRES_URL is set (CI
// sets it).
func storesUnderTest(t *testing.T) map[string]string {
	out := map[string]string{"sqlite": filepath.Join(t.TempDir(), "gateway.db")}
	if u := os.Getenv("GATEWAY_TEST_POSTGRES_URL"); u != "" {
		out["postgres"] = u
	} else {
		t.Log("GATEWAY_TEST_POSTGRES_URL is unset: the PostgreSQL half of this test does not run")
	}
	return out
}

// TestConcurrentHoldsNeverOverdraw: 200 parallel requests from one
// account whose balance covers only 20 holds. At most 20 succeed, the rest
// get 402, and afterwards balance == top-ups - recorded charges exactly,
// with nothing held and nothing negative.
//
// The admitted requests are held at a gate in front of the vendor until
// every request has either reached the gate or been refused: no answer
// settles (and gives back the unused part of its hold) while the others
// still compete, however slowly the machine runs them. A fixed delay at
// the vendor would let early answers settle on a loaded machine and let
// later requests in, which the count below would take for an overdraft.
func TestConcurrentHoldsNeverOverdraw(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			var (
				arrived atomic.Int64
				release = make(chan struct{})
			)
			e := newEnv(t, func(c *app.Config) {
				c.DatabaseURL = dbURL
				c.RPM, c.TPM = 0, 0
				// The gate may hold an admitted request for a while.
				c.HTTP.FirstByteTimeout = 2 * time.Minute
				c.AttemptTimeout = 2 * time.Minute
				// Every refusal its own row, for the count below.
				c.RefusedPerMinute = -1
				vc := c.Vendors["openai"]
				target, err := url.Parse(vc.BaseURL)
				if err != nil {
					t.Fatal(err)
				}
				fwd := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
				gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					arrived.Add(1)
					<-release
					fwd.ServeHTTP(w, r)
				}))
				t.Cleanup(gate.Close)
				vc.BaseURL = gate.URL + strings.TrimPrefix(vc.BaseURL, target.Scheme+"://"+target.Host)
				c.Vendors["openai"] = vc
			})
			opened := false
			open := func() {
				if !opened {
					opened = true
					close(release)
				}
			}
			defer open()
			ctx := context.Background()
			model := nativeModels["openai"]
			body := chatBody("openai/"+model, "Count to three.", false, `,"max_tokens":64`)
			card, err := ratecard.Default()
			if err != nil {
				t.Fatal(err)
			}
			hold, err := billing.New(card, billing.Options{}).HoldAmount("openai", model, len(body), 64)
			if err != nil {
				t.Fatal(err)
			}
			const affordable = 20
			secret, k, err := createKey(ctx, e.m.Store(), fmt.Sprintf("burst-%d", time.Now().UnixNano()), affordable*hold+hold-1)
			if err != nil {
				t.Fatal(err)
			}
			start, _ := e.m.Store().Balance(ctx, k.AccountID)

			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				status   = map[int]int{}
				paid     gw.Money
				answered atomic.Int64 // answers that did not pass the gate
			)
			for range 200 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp := e.post("/v1/chat/completions", secret, body)
					readAll(t, resp.Body)
					if resp.StatusCode != 200 {
						answered.Add(1)
					}
					mu.Lock()
					defer mu.Unlock()
					status[resp.StatusCode]++
					if resp.StatusCode == 200 {
						c, err := parseCents(resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
						if err != nil {
							t.Error(err)
						}
						paid += c
					}
				}()
			}
			// Open the gate once all 200 are accounted for: refused, or
			// waiting at the vendor. (Bounded: a request that is neither
			// shows up in the status counts below.)
			for deadline := time.Now().Add(time.Minute); arrived.Load()+answered.Load() < 200 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if n := arrived.Load(); n > affordable {
				t.Errorf("%d requests reached the vendor at once; the balance covers %d", n, affordable)
			}
			open()
			wg.Wait()
			if status[200] > affordable || status[200] == 0 {
				t.Errorf("%d requests succeeded; the balance covers %d", status[200], affordable)
			}
			if status[200]+status[402] != 200 {
				t.Errorf("statuses = %v, want only 200 and 402", status)
			}
			b, err := e.m.Store().Balance(ctx, k.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			if b.Held != 0 || b.Balance < 0 || b.Balance != b.TopUps-b.Charged || b.Charged != paid || b.TopUps != start.TopUps {
				t.Errorf("balance %+v; charges told to callers %d", b, paid)
			}
			recs, err := e.m.Store().Records(ctx, gw.RecordFilter{AccountID: k.AccountID, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var recorded gw.Money
			for _, r := range recs {
				recorded += r.Charge
			}
			if len(recs) != 200 || recorded != paid {
				t.Errorf("%d records summing %d, want 200 summing %d", len(recs), recorded, paid)
			}
		})
	}
}

// parseCents reads the charge header ("0.012345" cents) back into Money.
func parseCents(s string) (gw.Money, error) {
	f, err := gw.ParseUSD(s) // same digits; the unit differs by 100
	if err != nil {
		return 0, fmt.Errorf("charge header %q: %w", s, err)
	}
	return f / 100, nil
}

// TestChargeHeaderEqualsRecord: the charge sent to the caller (header or
// trailer) equals the ledger's, stream and not, on a mapped and a native
// route.
func TestChargeHeaderEqualsRecord(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	b := billing.New(card, billing.Options{})
	for _, tc := range []struct {
		path string
		body []byte
	}{
		{"/v1/chat/completions", chatBody("openai/"+nativeModels["openai"], "hi [fake:cache]", false, "")},
		{"/v1/chat/completions", chatBody("anthropic/"+nativeModels["anthropic"], "hi [fake:cache]", true, "")},
		{"/v1/messages", messagesBody("anthropic/"+nativeModels["anthropic"], "hi [fake:cache]", true, "")},
		{"/v1/messages", messagesBody("deepseek/"+nativeModels["deepseek"], "hi [fake:cache][fake:reasoning]", false, "")},
	} {
		resp := e.post(tc.path, e.key, tc.body, "Anthropic-Version", "2023-06-01")
		readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		got := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
		if got == "" {
			got = resp.Trailer.Get("X-Gateway-Customer-Charge-Cents")
		}
		r, err := e.m.Store().Record(ctx, resp.Header.Get("X-Gateway-Request-Id"))
		if err != nil {
			t.Fatal(err)
		}
		// The charge is the exact cost x 1.09 rounded once: recomputed
		// from the recorded usage, not from the rounded cost.
		q, err := b.PriceAt(r.Vendor, r.Model, r.Usage, r.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		if got != r.Charge.CentsString() || r.Charge <= 0 || r.Charge != q.Charge || r.Cost != q.Cost {
			t.Errorf("%s: caller told %q, ledger %s (cost %d), repriced %d (cost %d)", tc.path, got, r.Charge.CentsString(), r.Cost, q.Charge, q.Cost)
		}
		if r.Usage.CacheReadTokens == 0 {
			t.Errorf("%s: cache reads not recorded: %+v", tc.path, r.Usage)
		}
	}
}
