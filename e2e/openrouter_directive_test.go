package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/optimize"
)

// OpenRouter's reported usage.cost covers every token it got, the
// optimizer's directive included; the directive's tokens are taken off
// it at the model's listed prompt price before x 1.09. The fake
// OpenRouter reports (P + 2 x O) micro-USD and lists
// anthropic/claude-sonnet-4.5 at $1 / $2 per million: 100 uc a prompt
// token, 200 an output token. With the directive's share of D tokens the
// record keeps the whole reported cost (P + 2 x O) x 100, the caller pays
// (P - D + 2 x O) x 109 and the share is D x 109. Before, the caller paid
// (P + 2 x O) x 109: the directive's D x 109 too.
func TestOpenRouterDirectiveUnbilled(t *testing.T) {
	e := newEnv(t, withOptimizer)
	ctx := context.Background()
	st := e.m.Store()
	model := "openrouter/anthropic/claude-sonnet-4.5"
	for _, c := range []struct {
		name   string
		path   string
		stream bool
	}{
		{"chat", "/v1/chat/completions", false},
		{"chat stream", "/v1/chat/completions", true},
		{"messages mapped", "/v1/messages", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			send := func(text string, hdr ...string) *gw.Record {
				t.Helper()
				secret, k, err := createKey(ctx, st, uniqueAccount("or-directive"), gw.USD)
				if err != nil {
					t.Fatal(err)
				}
				body := chatBody(model, text, c.stream, "")
				if c.path == "/v1/messages" {
					body = messagesBody(model, text, c.stream, "")
				}
				resp := e.post(c.path, secret, body, hdr...)
				b := readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id"))
				bal, err := st.Balance(ctx, k.AccountID)
				if err != nil || bal.Charged != rec.Charge || bal.Held != 0 {
					t.Errorf("balance %+v (%v); want %d charged, nothing held", bal, err, rec.Charge)
				}
				return rec
			}
			// Distinct prompts, so the fake's prefix cache reads nothing.
			text := fmt.Sprintf("Explain why the sky is blue (%s).", c.name)
			off := send(text, optimize.Header, "off")
			on := send(text + " ")
			if off.Usage.OptimizerTokens != 0 || off.DirectiveShare != 0 {
				t.Errorf("off: directive tokens %d, share %d; want none", off.Usage.OptimizerTokens, off.DirectiveShare)
			}
			if want := gw.Money(off.Usage.PromptTokens()+2*off.Usage.OutputTokens) * 100; off.Cost != want || off.Charge != gw.Charge(want) {
				t.Errorf("off: cost %d charge %d; want %d, %d", off.Cost, off.Charge, want, gw.Charge(want))
			}
			d := on.Usage.OptimizerTokens
			if grown := on.Usage.PromptTokens() - off.Usage.PromptTokens(); d <= 0 || d < grown || d > grown+2 {
				t.Fatalf("directive share %d tokens, the prompt grew by %d", d, grown)
			}
			p, o := on.Usage.PromptTokens(), on.Usage.OutputTokens
			cost, charge, share := gw.Money(p+2*o)*100, gw.Money(p-d+2*o)*109, gw.Money(d)*109
			t.Logf("%s: P %d (own %d), D %d, O %d: cost %d, charge %d (before: %d), share %d", c.name, p, off.Usage.PromptTokens(), d, o, on.Cost, on.Charge, gw.Charge(cost), on.DirectiveShare)
			if on.Cost != cost || on.Charge != charge || on.DirectiveShare != share {
				t.Errorf("cost %d charge %d share %d; want %d, %d, %d", on.Cost, on.Charge, on.DirectiveShare, cost, charge, share)
			}
			if on.Charge+on.DirectiveShare != gw.Charge(on.Cost) {
				t.Errorf("charge %d + share %d != cost x 1.09 = %d", on.Charge, on.DirectiveShare, gw.Charge(on.Cost))
			}
			// The caller's own tokens (one more prompt byte than the off
			// request, at most one more token), less at most the
			// directive's rounding in the customer's favour (two tokens,
			// issue 46 D9).
			if own := gw.Money(off.Usage.PromptTokens()+2*o) * 109; on.Charge < own-2*109 || on.Charge > own+109 {
				t.Errorf("charge %d; the caller's own tokens cost %d", on.Charge, own)
			}
			if !strings.Contains(on.Note, "openrouter reported cost") {
				t.Errorf("note %q; want it priced from the reported cost", on.Note)
			}
		})
	}
}
