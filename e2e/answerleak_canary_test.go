package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize"
)

// TestAnswerCanary: with GATEWAY_GUARD_CANARY=on the optimizer's
// directive carries a marker, new for each request; an answer carrying
// only the marker (base64 of the system content's last word) is stopped
// even though the caller's own system prompt is too short to leak, and
// the marker's tokens are not billed. Without the canary the same answer
// passes.
func TestAnswerCanary(t *testing.T) {
	for _, canary := range []bool{true, false} {
		name := "off"
		if canary {
			name = "on"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, withOptimizer, func(c *app.Config) { c.GuardCanary = canary })
			ctx := context.Background()
			markers := map[string]bool{}
			for _, rt := range []struct{ path, vendor string }{
				{"/v1/messages", "anthropic"}, {"/v1/messages", "openai"},
				{"/v1/chat/completions", "openai"}, {"/v1/chat/completions", "google"},
			} {
				for _, stream := range []bool{false, true} {
					model := rt.vendor + "/" + nativeModels[rt.vendor]
					body := messagesBody(model, "Hi [fake:leak=tail-base64]", stream, `,"system":"Be brief."`)
					if rt.path == "/v1/chat/completions" {
						body = chatBody(model, "Hi [fake:leak=tail-base64]", stream, "")
					}
					e.fake.Reset()
					resp := e.post(rt.path, e.key, body, "Anthropic-Version", "2023-06-01")
					got := readAll(t, resp.Body)
					var sent []byte
					for _, rq := range e.fake.Requests() {
						if bytes.Contains(rq.Body, []byte("tail-base64")) {
							sent = rq.Body // the newest
						}
					}
					if !bytes.Contains(sent, []byte(strings.TrimSuffix(optimize.Text, " "))) {
						t.Fatalf("%s %s: the directive was not sent: %s", rt.path, rt.vendor, sent)
					}
					i := bytes.Index(sent, []byte("(ref "))
					if canary != (i >= 0) {
						t.Fatalf("%s %s: canary %v, body %s", rt.path, rt.vendor, canary, sent)
					}
					stopped := bytes.Contains(got, []byte("request_blocked"))
					if canary {
						m := string(sent[i+5 : i+21])
						if markers[m] {
							t.Errorf("marker %s sent twice", m)
						}
						markers[m] = true
						if !stopped {
							t.Errorf("%s %s stream=%v: the canary leaked: %d %s", rt.path, rt.vendor, stream, resp.StatusCode, got)
						}
						continue
					}
					if stopped || resp.StatusCode != http.StatusOK {
						t.Errorf("%s %s stream=%v: stopped without a canary: %d %s", rt.path, rt.vendor, stream, resp.StatusCode, got)
					}
				}
			}
			// The marker's tokens are the gateway's: a record's directive
			// tokens cover it.
			recs := waitRecords(t, e.m.Store(), e.acct, 8)
			for _, r := range recs {
				if r.Usage.OptimizerTokens == 0 && r.Usage.Reported {
					t.Errorf("%s: no optimizer tokens: %+v", r.RequestID, r.Usage)
				}
			}
			_ = ctx
		})
	}
}
