package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize"
)

// scriptedAnthropic is an Anthropic Messages vendor whose usage depends
// on whether the body carries the optimizer's directive: a prompt of
// base tokens, directive more when it is there (its count endpoint says
// so too), and output tokens out.
type scriptedAnthropic struct {
	srv                  *httptest.Server
	base, directive, out int64

	mu   sync.Mutex
	last []byte // the last Messages body
}

func newScriptedAnthropic(t *testing.T, base, directive, out int64) *scriptedAnthropic {
	s := &scriptedAnthropic{base: base, directive: directive, out: out}
	marker := []byte(optimize.Text[:40])
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := s.base
		if bytes.Contains(body, marker) {
			n += s.directive
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			fmt.Fprintf(w, `{"input_tokens":%d}`, n)
			return
		}
		s.mu.Lock()
		s.last = body
		s.mu.Unlock()
		fmt.Fprintf(w, `{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`, n, s.out)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scriptedAnthropic) lastBody() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Issue 29 item 3, the small-balance limit on a mapped route, with the
// vendor's usage following what it was sent. A $0.50 account asks
// anthropic/claude-sonnet-5-5 (200 uc an input token, 1,000 an output
// token) through /v1/chat/completions with no output limit: the gateway
// imposes the limit the balance covers by encoding the body again. The
// vendor bills 880 prompt tokens, plus the directive's 120 when it is
// sent, and 50 output tokens.
//
//	directive sent:    cost 1,000 x 200 + 50 x 1,000 = 250,000; the
//	                   directive counts 120 + 1 = 121 (a count rounds in
//	                   the customer's favour, never below the directive's
//	                   size: issue 46 D9), so the caller pays (879 x 200
//	                   + 50,000) x 1.09 = 246,122, the directive's share
//	                   272,500 - 246,122 = 26,378
//	directive off:     cost 226,000; charge 246,340, share 0
//	before the fix:    the re-encoded body lost the directive (the vendor
//	                   billed 880) but its 120 tokens were still taken
//	                   off and the header said "applied": (760 x 200 +
//	                   50,000) x 1.09 = 220,180
//
// The header must say "applied" exactly when the vendor body carries the
// directive.
func TestImposedLimitDirectiveHandWorked(t *testing.T) {
	a := newScriptedAnthropic(t, 880, 120, 50)
	e := newEnv(t, withOptimizer, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		c.Vendors["anthropic"] = app.VendorConfig{BaseURL: a.srv.URL, APIKey: "k"}
	})
	ctx := context.Background()
	marker := []byte(optimize.Text[:40])
	for _, c := range []struct {
		name                      string
		hdr                       []string
		cost, charge, share, free gw.Money
		optimizerTokens           int64
	}{
		{"directive sent", nil, 250_000, 246_122, 26_378, 0, 121},
		{"directive off", []string{optimize.Header, "off"}, 226_000, 246_340, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret, k, err := createKey(ctx, e.m.Store(), uniqueAccount("impose-hw"), 50*gw.Cent)
			if err != nil {
				t.Fatal(err)
			}
			// A prompt of about 2,500 bytes, so that the 880 tokens
			// reported are within the gateway's bound (1.5 times its
			// own count, issue 46 D10).
			resp := e.post("/v1/chat/completions", secret, chatBody("anthropic/claude-sonnet-5-5", "Hi"+strings.Repeat(" please", 350), false, ""), c.hdr...)
			b := readAll(t, resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("X-Gateway-Max-Tokens") == "" {
				t.Fatalf("status %d, imposed limit %q: %s; want 200 with a limit imposed", resp.StatusCode, resp.Header.Get("X-Gateway-Max-Tokens"), b)
			}
			sent := bytes.Contains(a.lastBody(), marker)
			applied := strings.HasPrefix(resp.Header.Get(optimize.Header), "applied")
			if applied != sent {
				t.Errorf("header %s: %q, but the directive was %s the vendor", optimize.Header, resp.Header.Get(optimize.Header), map[bool]string{true: "sent to", false: "left out of the body sent to"}[sent])
			}
			if want := c.optimizerTokens > 0; sent != want {
				t.Errorf("directive sent: %v, want %v", sent, want)
			}
			rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
			if rec.Charge != c.charge || rec.Cost != c.cost || rec.DirectiveShare != c.share || rec.Usage.OptimizerTokens != c.optimizerTokens {
				t.Errorf("charge %d cost %d share %d directive tokens %d; want %d, %d, %d, %d", rec.Charge, rec.Cost, rec.DirectiveShare, rec.Usage.OptimizerTokens, c.charge, c.cost, c.share, c.optimizerTokens)
			}
			bal, err := e.m.Store().Balance(ctx, k.AccountID)
			if err != nil || bal.Charged != c.charge || bal.Held != 0 {
				t.Errorf("balance %+v (%v); want %d charged, nothing held", bal, err, c.charge)
			}
		})
	}
}

// Issue 29 item 3, the gateway's own estimate (before -> after): where
// the vendor reports no usage, the prompt is estimated from the caller's
// body, which never held the directive; its tokens were still taken off
// (on groq the upper bound, one a byte plus 16: more than this whole
// prompt), so the prompt fell to 0 (the audit's 288 instead of 6,331).
// Now nothing is taken off an estimate. The body (118 bytes without its
// stream flag) is 30 prompt tokens, "Hello there." 12 output tokens:
// (30 x 59 + 12 x 79) x 1.09 = 2,962.62 -> 2,963, stream or not (before:
// 12 x 79 x 1.09 = 1,033.32 -> 1,033).
func TestEstimateKeepsTheDirective(t *testing.T) {
	e, s := moneyEnv(t, "", withOptimizer)
	ctx := context.Background()
	s.script("nu-stream", func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello there.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	s.script("nu-answer", func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
	})
	for name, stream := range map[string]bool{"nu-stream": true, "nu-answer": false} {
		secret, _, err := createKey(ctx, e.m.Store(), uniqueAccount("estimate"), gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		body := chatBody("groq/llama-3.3-70b-versatile", "hi [case:"+name+"]", stream, `,"max_tokens":100`)
		resp := e.post("/v1/chat/completions", secret, body)
		readAll(t, resp.Body)
		if !bytes.Contains(s.got(name), []byte(optimize.Text[:40])) {
			t.Fatalf("%s: the directive was not sent", name)
		}
		rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
		if rec.Charge != 2_963 || rec.Usage.InputTokens != 30 || rec.Usage.OptimizerTokens != 0 || !strings.Contains(rec.Note, "usage_missing") {
			t.Errorf("%s: charge %d usage %+v note %q; want 2,963 on 30 prompt tokens, nothing taken off, usage_missing", name, rec.Charge, rec.Usage, rec.Note)
		}
	}
}
