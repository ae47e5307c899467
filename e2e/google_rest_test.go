package e2e

import (
	"strconv"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// Google sends no rate-limit headers: its 429 says in the body which
// quota ran out (QuotaFailure) and how long to wait (RetryInfo). A 429 of
// the key's project quota rests the google keys for that delay, capped by
// GATEWAY_KEY_REST_MAX, and the caller is told the capped wait; while
// they rest nothing is sent to Google. A 429 without a QuotaFailure
// (shared capacity) rests no key.
func TestGoogle429RestsTheKeys(t *testing.T) {
	model := "google/" + nativeModels["google"]
	for _, c := range []struct {
		name, directives string
		rests            bool
	}{
		{"project quota", "[fake:status=429][fake:retry=37]", true},
		{"shared capacity", "[fake:status=429][fake:retry=37][fake:quota=none]", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, pooled("google"), func(c *app.Config) {
				c.HTTP.KeyRestMax = 20 * time.Second
				c.HTTP.RetryBase = time.Millisecond
			})
			start := time.Now()
			resp := e.post("/v1/chat/completions", e.key, chatBody(model, "hi "+c.directives, false, ""))
			b := readAll(t, resp.Body)
			if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || ra != 20 {
				t.Fatalf("status %d, Retry-After %q: %s; want 429 told the 37 s delay capped at 20", resp.StatusCode, resp.Header.Get("Retry-After"), b)
			}
			p, _ := e.m.Provider("google")
			keys := p.(gw.HealthReporter).Health(time.Now()).Keys
			if len(keys) != 2 {
				t.Fatalf("%d google keys, want the pool of 2", len(keys))
			}
			for _, k := range keys {
				switch rest := k.RestUntil.Sub(start); {
				case !c.rests && !k.RestUntil.IsZero():
					t.Errorf("key %s rests until %v after a 429 not about it", k.Name, k.RestUntil)
				case c.rests && (rest < 19*time.Second || rest > 21*time.Second+time.Since(start)):
					t.Errorf("key %s rests %v, want the 20 s cap", k.Name, rest)
				}
			}
			before := len(e.fake.Requests())
			resp = e.post("/v1/chat/completions", e.key, chatBody(model, "hi", false, ""))
			b = readAll(t, resp.Body)
			sent := len(e.fake.Requests()) - before
			if c.rests {
				ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
				if resp.StatusCode == 200 || sent != 0 || ra <= 0 || ra > 20 {
					t.Errorf("while the keys rest: status %d, %d requests sent to Google, Retry-After %q: %s; want none sent and a wait of at most 20 s", resp.StatusCode, sent, resp.Header.Get("Retry-After"), b)
				}
			} else if resp.StatusCode != 200 || sent != 1 {
				t.Errorf("after a capacity 429: status %d, %d requests sent: %s; want served", resp.StatusCode, sent, b)
			}
		})
	}
}
