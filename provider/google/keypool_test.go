package google

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// With a two-key pool, every kind of call to Gemini carries one key of
// the pool, spread over both: generateContent, countTokens (token
// counts and the optimizer's calibration) and the gateway's own probe.
func TestKeyPoolEveryCall(t *testing.T) {
	providertest.RunKeyPool(t, providertest.KeyPoolCase{
		Header: "X-Goog-Api-Key",
		Kind: func(r *http.Request) string {
			switch {
			case r.URL.Path == "/v1beta/models":
				return "probe"
			case strings.HasSuffix(r.URL.Path, ":generateContent"):
				return "chat"
			case strings.HasSuffix(r.URL.Path, ":countTokens"):
				return "count"
			}
			return "other"
		},
		Refusal: `{"error":{"code":401,"message":"no","status":"UNAUTHENTICATED"}}`,
		Answer:  `{"totalTokens":7}`,
		Start: func(t *testing.T, baseURL string) ([]providertest.KeyPoolCall, func(context.Context) error) {
			p, err := New(Config{BaseURL: baseURL, APIKey: providertest.PoolSetting, HTTP: upstream.Config{MaxRetries: -1}})
			if err != nil {
				t.Fatal(err)
			}
			send := func(body string) func(context.Context) error {
				return func(ctx context.Context) error {
					up, err := p.Send(ctx, &gw.Call{Model: "gemini-x", Body: []byte(body), Header: http.Header{}})
					if err == nil {
						up.Body.Close()
					}
					return err
				}
			}
			count := func(ctx context.Context) error {
				if n, err := p.CountTokens(ctx, "gemini-x", []byte(`{"contents":[]}`)); err != nil || n != 7 {
					return fmt.Errorf("count: %d %v", n, err)
				}
				return nil
			}
			return []providertest.KeyPoolCall{{Kind: "chat", Do: send(`{}`)}, {Kind: "count", Do: count}}, send(`{"refuse":1}`)
		},
	})
}
