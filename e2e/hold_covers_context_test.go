package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// Issue 29 item 2 (before -> after), hand-worked on
// anthropic/claude-sonnet-5-5 (200 uc an input token, 1,000 an output
// token, a 1,000,000-token context window), with a vendor that bills
// what the body does not show:
//
//   - a native thread: the create's prompt is 150,000 tokens (a long
//     document the vendor now keeps), 50 output: (150,000 x 200 + 50 x
//     1,000) x 1.09 = 32,754,500. The continue sends one short turn;
//     the vendor bills the kept 150,050 tokens: (150,050 x 200 + 50 x
//     1,000) x 1.09 = 32,765,400 (before: capped at the hold its small
//     body made, 0.221 cents instead of 49.07 in the audit's case). On a
//     $0.50 account, after the create, 17,245,500 is available: the
//     continue's hold covers the thread (150,050 x 200 x 1.09 =
//     32,710,900 and its output) and it is refused with 402 before the
//     vendor is called, nothing lost (before: served, its hold the body's).
//   - a document by URL, 80,000 prompt tokens, 50 output: (80,000 x 200
//   - 50,000) x 1.09 = 17,494,500 on a $5 account (before: 0.232
//     cents instead of 26.18 in the audit's case); on $1 the hold of the
//     whole context window (1,000,000 x 200 x 1.09 = 218,000,000) is
//     refused with 402.
func TestHoldsCoverServerSideContext(t *testing.T) {
	s := newScripted(t)
	e := newEnv(t, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		c.Vendors["anthropic"] = app.VendorConfig{BaseURL: s.srv.URL, APIKey: "k"}
	})
	ctx := context.Background()
	st := e.m.Store()
	const model = "anthropic/claude-sonnet-5-5"
	answer := func(name, id string, input int64) {
		s.script(name, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":%q,"type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Noted."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":50}}`, id, input)
		})
	}
	post := func(secret, body string) (*http.Response, []byte) {
		resp := e.post("/v1/messages", secret, []byte(body), "anthropic-beta", threadBeta, "anthropic-version", "2023-06-01")
		return resp, readAll(t, resp.Body)
	}
	charged := func(t *testing.T, resp *http.Response, want gw.Money) {
		t.Helper()
		if rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id")); rec.Charge != want || rec.Loss != 0 {
			t.Errorf("charge %d loss %d (usage %+v, note %q); want %d, no loss", rec.Charge, rec.Loss, rec.Usage, rec.Note, want)
		}
	}

	thread := func(t *testing.T, balance gw.Money, tag string) (string, string) {
		secret, k, err := createKey(ctx, st, uniqueAccount("thread-hold"), balance)
		if err != nil {
			t.Fatal(err)
		}
		answer("create-"+tag, "msg_create_"+tag, 150_000)
		resp, b := post(secret, `{"model":"`+model+`","max_tokens":64,"thread":{"type":"create"},"messages":[{"role":"user","content":"Read the attached report. [case:create-`+tag+`]"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("create: %d %s", resp.StatusCode, b)
		}
		var m struct{ ID string }
		if err := json.Unmarshal(b, &m); err != nil || m.ID == "" {
			t.Fatalf("create answer: %v %s", err, b)
		}
		charged(t, resp, 32_754_500)
		return secret, k.AccountID
	}
	continueBody := func(tag string) string {
		return `{"model":"` + model + `","max_tokens":64,"thread":{"type":"continue","previous_message_id":"msg_create_` + tag + `"},"messages":[{"role":"user","content":"And the summary? [case:continue-` + tag + `]"}]}`
	}

	t.Run("thread continue billed for the kept thread", func(t *testing.T) {
		secret, acct := thread(t, gw.USD, "a")
		answer("continue-a", "msg_continue_a", 150_050)
		resp, b := post(secret, continueBody("a"))
		if resp.StatusCode != 200 {
			t.Fatalf("continue: %d %s", resp.StatusCode, b)
		}
		charged(t, resp, 32_765_400)
		if bal, err := st.Balance(ctx, acct); err != nil || bal.Charged != 32_754_500+32_765_400 || bal.Held != 0 {
			t.Errorf("balance %+v (%v); want 65,519,900 charged", bal, err)
		}
	})
	t.Run("thread continue held for the kept thread", func(t *testing.T) {
		secret, acct := thread(t, 50*gw.Cent, "b")
		answer("continue-b", "msg_continue_b", 150_050)
		resp, b := post(secret, continueBody("b"))
		if resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("continue on 17,245,500 available: %d %s; want 402 (the thread's hold)", resp.StatusCode, b)
		}
		if s.got("continue-b") != nil {
			t.Error("the refused continue reached the vendor")
		}
		if bal, err := st.Balance(ctx, acct); err != nil || bal.Charged != 32_754_500 || bal.Held != 0 || bal.Balance != 17_245_500 {
			t.Errorf("balance %+v (%v); want only the create charged", bal, err)
		}
	})
	t.Run("document by URL", func(t *testing.T) {
		doc := func(tag string) string {
			return `{"model":"` + model + `","max_tokens":64,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://example.com/report.pdf"}},{"type":"text","text":"Summarise it. [case:doc-` + tag + `]"}]}]}`
		}
		secret, _, err := createKey(ctx, st, uniqueAccount("doc-hold"), 5*gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		answer("doc-a", "msg_doc_a", 80_000)
		resp, b := post(secret, doc("a"))
		if resp.StatusCode != 200 {
			t.Fatalf("document on $5: %d %s", resp.StatusCode, b)
		}
		charged(t, resp, 17_494_500)

		secret, acct, err := createKey(ctx, st, uniqueAccount("doc-hold"), gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		answer("doc-b", "msg_doc_b", 80_000)
		resp, b = post(secret, doc("b"))
		if resp.StatusCode != http.StatusPaymentRequired || s.got("doc-b") != nil {
			t.Errorf("document on $1: %d %s; want 402 before the vendor (the context window's hold)", resp.StatusCode, b)
		}
		if bal, err := st.Balance(ctx, acct.AccountID); err != nil || bal.Charged != 0 || bal.Held != 0 {
			t.Errorf("balance %+v (%v); want nothing charged or held", bal, err)
		}
	})
}
