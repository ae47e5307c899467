package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// Issue 46 D8: a caller that leaves a google/ stream right after its
// first event is billed the usage the vendor reports at the end of its
// stream, on every shape (the mapped M and R as the relayed G and C):
// the vendor's stream is read on, unwritten, after the caller left. Ten
// runs per shape, each compared with the same request read to its end.
func TestAbandonedGoogleStreamBillsReportedUsage(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL; c.RPM, c.TPM = 0, 0 })
			st := e.m.Store()
			ctx := context.Background()
			secret, k, err := createKeyWith(ctx, st, uniqueAccount("d8"), 100*gw.USD, gw.Limit{}, true)
			if err != nil {
				t.Fatal(err)
			}
			model := "google/" + nativeModels["google"]
			text := "Tell a story. [fake:delay=30ms][fake:chunks=30]"
			shapes := []struct {
				name, path string
				body       []byte
			}{
				{"M", "/v1/messages", messagesBody(model, text, true, "")},
				{"R", "/v1/responses", []byte(`{"model":` + quote(model) + `,"input":` + quote(text) + `,"stream":true,"max_output_tokens":256}`)},
				{"C", "/v1/chat/completions", chatBody(model, text, true, "")},
				{"G", gPath(model, "sse"), geminiBody(text, "")},
			}
			// send posts a stream; leave hangs up after its first event.
			send := func(path string, body []byte, leave bool) string {
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				req, _ := http.NewRequestWithContext(cctx, http.MethodPost, e.url+path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("X-Goog-Api-Key", secret)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Anthropic-Version", "2023-06-01")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return ""
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: status %d", path, resp.StatusCode)
					return ""
				}
				rid := resp.Header.Get("X-Gateway-Request-Id")
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					if err != nil || leave && strings.HasPrefix(line, "data:") {
						break
					}
				}
				if leave {
					cancel()
				}
				return rid
			}
			for _, s := range shapes {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					want := waitRecord(t, st, send(s.path, s.body, false))
					if !want.Usage.Reported || want.Usage.OutputTokens <= 0 {
						t.Fatalf("the whole stream's usage %+v, want reported output", want.Usage)
					}
					var wg sync.WaitGroup
					rids := make([]string, 10)
					for i := range rids {
						wg.Add(1)
						go func() { defer wg.Done(); rids[i] = send(s.path, s.body, true) }()
					}
					wg.Wait()
					for _, rid := range rids {
						if rid == "" {
							continue
						}
						rec := waitRecord(t, st, rid)
						if rec.Usage.OutputTokens != want.Usage.OutputTokens || rec.Usage.PromptTokens() != want.Usage.PromptTokens() || !rec.Usage.Reported || rec.Charge != want.Charge {
							t.Errorf("%s left after the first event: usage %d+%d reported %v charge %d note %q; want the vendor's %d+%d, charge %d",
								rid, rec.Usage.PromptTokens(), rec.Usage.OutputTokens, rec.Usage.Reported, rec.Charge, rec.Note, want.Usage.PromptTokens(), want.Usage.OutputTokens, want.Charge)
						}
					}
				})
			}
			_ = k
		})
	}
}
