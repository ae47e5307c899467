package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// With a two-key pool, every kind of call to the vendor carries one key
// of the pool, spread over both: chat (also what the optimizer's
// calibration sends), Responses, the Responses state calls (GET, DELETE,
// input_items: they sent the whole setting) and the gateway's own probe.
func TestKeyPoolEveryCall(t *testing.T) {
	providertest.RunKeyPool(t, providertest.KeyPoolCase{
		Header: "Authorization",
		Kind: func(r *http.Request) string {
			switch {
			case r.URL.Path == "/v1/models":
				return "probe"
			case r.URL.Path == "/v1/chat/completions":
				return "chat"
			case r.URL.Path == "/v1/responses":
				return "responses"
			case strings.HasSuffix(r.URL.Path, "/input_items"):
				return "input_items"
			case strings.HasPrefix(r.URL.Path, "/v1/responses/"):
				return "state " + r.Method
			}
			return "other"
		},
		Refusal: `{"error":{"message":"no"}}`,
		Answer:  `{"id":"resp_1","object":"response"}`,
		Start: func(t *testing.T, baseURL string) ([]providertest.KeyPoolCall, func(context.Context) error) {
			cfg, _ := Defaults("openai")
			cfg.BaseURL, cfg.APIKey = baseURL+"/v1", providertest.PoolSetting
			cfg.HTTP = upstream.Config{MaxRetries: -1}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			done := func(up *gw.Upstream, err error) error {
				if err == nil {
					up.Body.Close()
				}
				return err
			}
			send := func(body string, shape gw.Shape) func(context.Context) error {
				return func(ctx context.Context) error {
					return done(p.Send(ctx, &gw.Call{Body: []byte(body), Header: http.Header{}, Endpoint: shape}))
				}
			}
			state := func(method, path, query string) func(context.Context) error {
				return func(ctx context.Context) error { return done(p.ResponseState(ctx, method, path, query)) }
			}
			// A 401 (the refused call): the gateway's own probe checks
			// the key that was refused.
			return []providertest.KeyPoolCall{
				{Kind: "chat", Do: send(`{}`, "")},
				{Kind: "responses", Do: send(`{}`, gw.ShapeR)},
				{Kind: "state GET", Do: state(http.MethodGet, "/resp_1", "")},
				{Kind: "state DELETE", Do: state(http.MethodDelete, "/resp_1", "")},
				{Kind: "input_items", Do: state(http.MethodGet, "/resp_1/input_items", "limit=1")},
			}, send(`{"refuse":1}`, "")
		},
	})
}
