package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// googleQuota429 is a Gemini API 429 as Google sends it: no rate-limit
// headers; a QuotaFailure naming the quota and a RetryInfo delay in the
// google.rpc.Status body.
func googleQuota429(quotaID, metric, delay string) string {
	details := `{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}`
	if quotaID != "" {
		details = `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"` + metric + `","quotaId":"` + quotaID + `","quotaDimensions":{"location":"global","model":"gemini-3-flash"},"quotaValue":"15"}]},` + details
	}
	if delay != "" {
		details += `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}`
	}
	return `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[` + details + `]}}`
}

// A Google 429 rests the key it was about for the RetryInfo delay (at
// most KeyRestMax) when its QuotaFailure names a quota of the key's
// project; a RESOURCE_EXHAUSTED without one (shared capacity) rests
// nothing. The caller is told the delay (capped) as Retry-After, and the
// body reaches it whole.
func TestGoogle429RetryInfoRestsTheKey(t *testing.T) {
	const (
		perMinute = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
		requests  = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
		tokens    = "GenerateContentInputTokensPerModelPerMinute-FreeTier"
		tokMetric = "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count"
	)
	for _, c := range []struct {
		name          string
		body          string
		rest          time.Duration // of every key; 0: none rests
		retryAfter    string
		callsAtLeast  int32
		callsAtMost   int32
		keysAfterCall int // -1: the client waited and retried, so some rests ended
	}{
		{"per-project requests quota, 37s", googleQuota429(perMinute, requests, "37s"), 37 * time.Second, "37", 2, 2, 2},
		{"fractional delay", googleQuota429(perMinute, requests, "1.5s"), 1500 * time.Millisecond, "2", 3, 4, -1},
		{"token quota of the project", googleQuota429(tokens, tokMetric, "26s"), 26 * time.Second, "26", 2, 2, 2},
		{"a day asked, capped", googleQuota429(perMinute, requests, "86400s"), 45 * time.Second, "45", 2, 2, 2},
		{"shared capacity: no quota failure", googleQuota429("", "", "37s"), 0, "37", 1, 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			keys, _ := ParseKeys("k1,k2")
			cl, clk := newTestClient(Config{Keys: keys, KeyRestMax: 45 * time.Second, BreakerFailures: -1})
			start := clk.now()
			resp, err := cl.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Body: []byte("{}"), Auth: bearerAuth})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 429 || string(body) != c.body {
				t.Errorf("answer %d %s; want Google's 429 whole", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Retry-After"); got != c.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, c.retryAfter)
			}
			if n := calls.Load(); n < c.callsAtLeast || n > c.callsAtMost {
				t.Errorf("%d vendor calls, want %d to %d", n, c.callsAtLeast, c.callsAtMost)
			}
			rested := 0
			for _, k := range cl.Health(clk.now()).Keys {
				if k.RestUntil.IsZero() {
					continue
				}
				rested++
				if c.rest == 0 {
					t.Errorf("key %s rests until %v after a 429 not about it", k.Name, k.RestUntil)
				} else if got := k.RestUntil.Sub(start); got < c.rest || got > c.rest+clk.now().Sub(start) {
					t.Errorf("key %s rests %v, want %v", k.Name, got, c.rest)
				}
			}
			if c.rest > 0 && c.keysAfterCall >= 0 && rested != c.keysAfterCall {
				t.Errorf("%d keys rest, want %d", rested, c.keysAfterCall)
			}
		})
	}
}

func TestRPCRetry(t *testing.T) {
	for _, c := range []struct {
		body     string
		delay    time.Duration
		hasDelay bool
		key      bool
	}{
		{googleQuota429("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "x/y", "37s"), 37 * time.Second, true, true},
		{googleQuota429("Other", "aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model", "0.25s"), 250 * time.Millisecond, true, true},
		{googleQuota429("Other", "other.googleapis.com/shared", "37s"), 37 * time.Second, true, false},
		{googleQuota429("", "", ""), 0, false, false},
		{googleQuota429("", "", "-3s"), 0, false, false},
		{googleQuota429("", "", "37"), 0, false, false},
		{`{"error":{"message":"rate limited","type":"requests"}}`, 0, false, false},
		{`not json google.rpc.`, 0, false, false},
	} {
		d, ok, key := rpcRetry([]byte(c.body))
		if d != c.delay || ok != c.hasDelay || key != c.key {
			t.Errorf("%.80s...: %v %v %v, want %v %v %v", strings.TrimPrefix(c.body, `{"error":`), d, ok, key, c.delay, c.hasDelay, c.key)
		}
	}
}
