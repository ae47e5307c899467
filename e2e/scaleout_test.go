package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// TestTwoInstancesShareLimitsAndMoney runs two gateway instances on one
// PostgreSQL and one Redis, as a scaled-out deployment does. A key with a
// limit of 10 requests a minute bursts 30 requests across both: at most 10
// are admitted in all, every refusal is a 429 with Retry-After, and the
// shared ledger balances.
func TestTwoInstancesShareLimitsAndMoney(t *testing.T) {
	a, b := twoInstances(t, "the scale-out test")
	ctx := context.Background()
	// A fresh key with its own limit, in the shared store.
	const limit = 10
	secret, k, err := createKeyWithLimits(ctx, a.m.Store(), fmt.Sprintf("scale-%d", time.Now().UnixNano()), 50*gw.USD, gw.Limit{RPM: limit})
	if err != nil {
		t.Fatal(err)
	}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
	)
	for i := range 3 * limit {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.post("/v1/chat/completions", secret, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
			readAll(t, resp.Body)
			if resp.StatusCode == http.StatusTooManyRequests {
				if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
					t.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
				}
			}
			mu.Lock()
			status[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if status[200] != limit || status[429] != 2*limit {
		t.Fatalf("statuses %v: want exactly %d admitted across both instances", status, limit)
	}
	bal, err := b.m.Store().Balance(ctx, k.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := a.m.Store().Records(ctx, gw.RecordFilter{AccountID: k.AccountID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var charged gw.Money
	for _, r := range recs {
		charged += r.Charge
	}
	if bal.Held != 0 || bal.Charged != charged || bal.Balance != bal.TopUps-bal.Charged || len(recs) != 3*limit {
		t.Fatalf("balance %+v, %d records charging %d", bal, len(recs), charged)
	}
}

// twoInstances starts two gateways on the PostgreSQL and Redis of
// GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL, as a scaled-out
// deployment runs, with opts applied to both; what (the test) is skipped
// when either is unset. Limits stay global: a Redis hiccup fails closed
// rather than admit more. The Redis budget is the test's, not
// production's 250 ms: with many requests opening connections at once
// under -race on a loaded machine, a dial or round trip past 250 ms
// answered 503 (fail closed), which no test of two instances is about.
func twoInstances(t *testing.T, what string, opts ...envOption) (a, b *env) {
	t.Helper()
	pg, rd := os.Getenv("GATEWAY_TEST_POSTGRES_URL"), os.Getenv("GATEWAY_TEST_REDIS_URL")
	if pg == "" || rd == "" {
		t.Skip("GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL are unset: " + what + " needs both (CI sets them)")
	}
	if !strings.Contains(rd, "dial_timeout") {
		sep := "?"
		if strings.Contains(rd, "?") {
			sep = "&"
		}
		rd += sep + "dial_timeout=10s"
	}
	shared := func(c *app.Config) {
		c.DatabaseURL, c.RedisURL = pg, rd
		c.RedisFailOpen, c.RedisFailLocal = false, false
		c.RedisTimeout = 10 * time.Second
	}
	opts = append([]envOption{shared}, opts...)
	return newEnv(t, opts...), newEnv(t, opts...)
}
