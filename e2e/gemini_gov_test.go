package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/route"
)

// TestGeminiGuardBlocks: the guard reads a G request's text and a block
// answers 403 PERMISSION_DENIED in Google's envelope, with the incident,
// no vendor call kept and no money moved; on a native and a mapped
// prefix, streamed and not.
func TestGeminiGuardBlocks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct{ vendor, mode string }{{"google", "body"}, {"google", "sse"}, {"anthropic", "body"}, {"openai", "array"}} {
		t.Run(c.vendor+"/"+c.mode, func(t *testing.T) {
			before, _ := e.m.Store().Balance(ctx, e.acct)
			resp := e.gpost(gPath(c.vendor+"/"+nativeModels[c.vendor], c.mode), geminiBody(attack+" [fake:slow=3s]", ""))
			body := readAll(t, resp.Body)
			var env struct {
				Error struct {
					Code    int    `json:"code"`
					Status  string `json:"status"`
					Details []struct {
						Reason   string            `json:"reason"`
						Metadata map[string]string `json:"metadata"`
					} `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != http.StatusForbidden || env.Error.Status != "PERMISSION_DENIED" || len(env.Error.Details) == 0 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			d := env.Error.Details[0]
			if d.Reason != "request_blocked" || !strings.HasPrefix(d.Metadata["incident_id"], "inc_") {
				t.Errorf("ErrorInfo %+v", d)
			}
			rec, err := e.m.Store().Record(ctx, d.Metadata["request_id"])
			if err != nil || rec.Status != 403 || rec.Charge != 0 || !strings.HasPrefix(rec.Guard, "flagged:") {
				t.Errorf("record %+v, %v", rec, err)
			}
			after, _ := e.m.Store().Balance(ctx, e.acct)
			if after.Charged != before.Charged || after.Held != 0 {
				t.Errorf("a blocked request moved money: %+v -> %+v", before, after)
			}
		})
	}
}

// TestGeminiOptimizer: with the optimization layer on, a G request
// reaches every vendor with the directive once (native google/: the
// caller's bytes plus the directive), and its tokens are not billed.
func TestGeminiOptimizer(t *testing.T) {
	e := newEnv(t, withOptimizer, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	b := testBiller(t)
	body := []byte(`{"systemInstruction":{"parts":[{"text":"You are terse and exact."}]},"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}`)
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			resp := e.gpost(gPath(v+"/"+nativeModels[v], "body"), body)
			got := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			if h := resp.Header.Get("X-Gateway-Optimize"); h != "applied; v=1" {
				t.Errorf("x-gateway-optimize = %q", h)
			}
			var sent []byte
			for _, r := range e.fake.Requests() {
				if r.Vendor == v && !strings.Contains(r.Path, "count") {
					sent = r.Body
				}
			}
			if n := bytes.Count(sent, []byte(optimize.Text)); n != 1 {
				t.Errorf("directive appears %d times upstream", n)
			}
			if v == "google" {
				want, err := optimize.Apply("gemini", body)
				if err != nil || !bytes.Equal(sent, want) {
					t.Errorf("native: vendor received\n%s\nwant the caller's body plus the directive\n%s", sent, want)
				}
			}
			rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
			q, err := b.PriceAt(rec.Vendor, rec.Model, rec.Usage, rec.CreatedAt)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Usage.OptimizerTokens <= 0 || rec.Charge != q.Charge || rec.Charge <= 0 {
				t.Errorf("optimizer tokens %d, charge %d, repriced %d", rec.Usage.OptimizerTokens, rec.Charge, q.Charge)
			}
		})
	}
}

// TestGeminiRateLimit: the key's request limit answers 429
// RESOURCE_EXHAUSTED with RetryInfo and Retry-After, and the rate-limit
// headers are set.
func TestGeminiRateLimit(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 2, 0 })
	path := gPath("openai/"+nativeModels["openai"], "body")
	var last *http.Response
	var body []byte
	for range 3 {
		last = e.gpost(path, geminiBody("Say hello.", ""))
		body = readAll(t, last.Body)
	}
	if last.StatusCode != http.StatusTooManyRequests || !bytes.Contains(body, []byte(`"RESOURCE_EXHAUSTED"`)) || !bytes.Contains(body, []byte(`google.rpc.RetryInfo`)) || last.Header.Get("Retry-After") == "" {
		t.Errorf("third request: %d %s", last.StatusCode, body)
	}
}
