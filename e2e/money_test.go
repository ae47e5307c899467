package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
)

// testBiller prices like the gateway under test: the embedded card and
// the fake OpenRouter's price list.
func testBiller(t *testing.T) *billing.Biller {
	t.Helper()
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ratecard.ParseOpenRouter(strings.NewReader(fakevendor.OpenRouterModels), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := &ratecard.OpenRouterPrices{}
	p.Set(l)
	return billing.New(card, billing.Options{OpenRouter: p})
}

// uniqueAccount names an account no other run of any test uses (the
// PostgreSQL database is shared).
func uniqueAccount(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

// waitRecord polls the store until the request's record is written.
func waitRecord(t *testing.T, st gw.Store, rid string) *gw.Record {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := st.Record(context.Background(), rid)
		if err == nil {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record for %s: %v", rid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allRoutes is every endpoint x vendor pair: 18 routes.
func allRoutes() []nativeRoute {
	var out []nativeRoute
	for _, v := range route.Vendors() {
		out = append(out, nativeRoute{"/v1/messages", v, messagesBody}, nativeRoute{"/v1/chat/completions", v, chatBody})
	}
	return out
}

// Issue 19.2/19.3: a caller who abandons a stream on any of the 18
// routes is billed for what the vendor reported (or, where it reported
// nothing yet, the text relayed), and the request is recorded as a
// success noted "abandoned", never as upstream_error; on both stores.
func TestAbandonedStreamBilledEveryRoute(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL; c.RPM, c.TPM = 0, 0 })
			b := testBiller(t)
			routes := allRoutes()
			if len(routes) != 18 {
				t.Fatalf("%d routes", len(routes))
			}
			for _, r := range routes {
				t.Run(r.vendor+r.path, func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					secret, k, err := createKey(ctx, e.m.Store(), uniqueAccount("abandon-"+r.vendor), 10*gw.USD)
					if err != nil {
						t.Fatal(err)
					}
					body := r.body(r.vendor+"/"+nativeModels[r.vendor], "Tell a story. [fake:delay=100ms][fake:chunks=40]", true, "")
					cctx, cancel := context.WithCancel(ctx)
					defer cancel()
					req, _ := http.NewRequestWithContext(cctx, http.MethodPost, e.url+r.path, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+secret)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Anthropic-Version", "2023-06-01")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp.Body))
					}
					rid := resp.Header.Get("X-Gateway-Request-Id")
					// Read a few content events, then hang up.
					var got bytes.Buffer
					done := make(chan struct{})
					go func() { _, _ = io.Copy(&got, resp.Body); close(done) }()
					time.Sleep(450 * time.Millisecond)
					cancel()
					<-done
					resp.Body.Close()

					rec := waitRecord(t, e.m.Store(), rid)
					if rec.Status != http.StatusOK || rec.ErrorCode != "" || !strings.Contains(rec.Note, "abandoned") {
						t.Fatalf("record status %d error %q note %q, want 200 abandoned", rec.Status, rec.ErrorCode, rec.Note)
					}
					if rec.Usage.OutputTokens <= 0 || rec.Usage.PromptTokens() <= 0 {
						t.Errorf("usage %+v, want prompt and output billed", rec.Usage)
					}
					q, err := b.PriceAt(rec.Vendor, rec.Model, rec.Usage, rec.CreatedAt)
					if err != nil {
						t.Fatal(err)
					}
					if rec.Charge <= 0 || rec.Charge != q.Charge {
						t.Errorf("charge %d, repriced from the recorded usage %d", rec.Charge, q.Charge)
					}
					t.Logf("%s %s: output %d (reported %v), charge %s cents, note %q", r.path, r.vendor, rec.Usage.OutputTokens, rec.Usage.Reported, rec.Charge.CentsString(), rec.Note)
					bal, err := e.m.Store().Balance(ctx, k.AccountID)
					if err != nil {
						t.Fatal(err)
					}
					if bal.Charged != rec.Charge || bal.Held != 0 || bal.Balance != bal.TopUps-bal.Charged {
						t.Errorf("balance %+v, charge %d", bal, rec.Charge)
					}
				})
			}
		})
	}
}

// Issue 19 (must show): on every route, stream and non-stream answers are
// billed by the same rule: each record's charge is the card's price of
// its recorded usage (one rounding), the caller is told that charge
// (header or trailer), and the same answer has the same output count.
func TestStreamAndNonStreamBilledAlike(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	b := testBiller(t)
	for _, r := range allRoutes() {
		t.Run(r.vendor+r.path, func(t *testing.T) {
			var outputs [2]int64
			for i, stream := range []bool{false, true} {
				body := r.body(r.vendor+"/"+nativeModels[r.vendor], "hi [fake:cache][fake:reasoning]", stream, "")
				resp := e.post(r.path, e.key, body, "Anthropic-Version", "2023-06-01")
				readAll(t, resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("stream=%v: status %d", stream, resp.StatusCode)
				}
				told := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
				if told == "" {
					told = resp.Trailer.Get("X-Gateway-Customer-Charge-Cents")
				}
				rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
				q, err := b.PriceAt(rec.Vendor, rec.Model, rec.Usage, rec.CreatedAt)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Charge <= 0 || rec.Charge != q.Charge || told != rec.Charge.CentsString() || !rec.Usage.Reported {
					t.Errorf("stream=%v: charge %d, repriced %d, told %q, usage %+v", stream, rec.Charge, q.Charge, told, rec.Usage)
				}
				outputs[i] = rec.Usage.OutputTokens
			}
			if outputs[0] != outputs[1] {
				t.Errorf("output tokens %d non-stream, %d stream", outputs[0], outputs[1])
			}
		})
	}
}
