package openai

import (
	"context"
	"io"
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
	kind := func(r *http.Request) string {
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
	}
	srv := providertest.NewKeyPoolServer(t, "Authorization", kind, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "refuse") {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"no"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"resp_1","object":"response"}`))
	})
	cfg, _ := Defaults("openai")
	cfg.BaseURL, cfg.APIKey = srv.URL+"/v1", providertest.PoolSetting
	cfg.HTTP = upstream.Config{MaxRetries: -1}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := func(up *gw.Upstream, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		up.Body.Close()
	}
	for i := 0; i < 40; i++ {
		done(p.Send(ctx, &gw.Call{Body: []byte(`{}`), Header: http.Header{}}))
		done(p.Send(ctx, &gw.Call{Body: []byte(`{}`), Header: http.Header{}, Endpoint: gw.ShapeR}))
		done(p.ResponseState(ctx, http.MethodGet, "/resp_1", ""))
		done(p.ResponseState(ctx, http.MethodDelete, "/resp_1", ""))
		done(p.ResponseState(ctx, http.MethodGet, "/resp_1/input_items", "limit=1"))
	}
	// A 401: the gateway's own probe checks the key that was refused.
	if _, err := p.Send(ctx, &gw.Call{Body: []byte(`{"refuse":1}`), Header: http.Header{}}); err == nil {
		t.Fatal("a refused call answered")
	}
	for _, k := range []string{"chat", "responses", "state GET", "state DELETE", "input_items"} {
		srv.Used(k, true)
	}
	srv.Used("probe", false)
}
