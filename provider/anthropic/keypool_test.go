package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// With a two-key pool, every kind of call to Anthropic carries one key
// of the pool, spread over both: messages, the count endpoint (token
// counts and the optimizer's calibration) and the gateway's own probe.
func TestKeyPoolEveryCall(t *testing.T) {
	providertest.RunKeyPool(t, providertest.KeyPoolCase{
		Header: "X-Api-Key",
		Kind: func(r *http.Request) string {
			switch r.URL.Path {
			case "/v1/models":
				return "probe"
			case "/v1/messages":
				return "chat"
			case "/v1/messages/count_tokens":
				return "count"
			}
			return "other"
		},
		Refusal: `{"type":"error","error":{"type":"authentication_error","message":"no"}}`,
		Answer:  `{"input_tokens":7}`,
		Start: func(t *testing.T, baseURL string) ([]providertest.KeyPoolCall, func(context.Context) error) {
			p, err := New(Config{BaseURL: baseURL, APIKey: providertest.PoolSetting, HTTP: upstream.Config{MaxRetries: -1}})
			if err != nil {
				t.Fatal(err)
			}
			send := func(body string) func(context.Context) error {
				return func(ctx context.Context) error {
					up, err := p.Send(ctx, &gw.Call{Body: []byte(body), Header: http.Header{}})
					if err == nil {
						up.Body.Close()
					}
					return err
				}
			}
			count := func(ctx context.Context) error {
				if n, err := p.CountTokens(ctx, "claude-x", []byte(`{"messages":[]}`)); err != nil || n != 7 {
					return fmt.Errorf("count: %d %v", n, err)
				}
				return nil
			}
			return []providertest.KeyPoolCall{{Kind: "chat", Do: send(`{}`)}, {Kind: "count", Do: count}}, send(`{"refuse":1}`)
		},
	})
}
