package anthropic

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

// With a two-key pool, every kind of call to Anthropic carries one key
// of the pool, spread over both: messages, the count endpoint (token
// counts and the optimizer's calibration) and the gateway's own probe.
func TestKeyPoolEveryCall(t *testing.T) {
	kind := func(r *http.Request) string {
		switch r.URL.Path {
		case "/v1/models":
			return "probe"
		case "/v1/messages":
			return "chat"
		case "/v1/messages/count_tokens":
			return "count"
		}
		return "other"
	}
	srv := providertest.NewKeyPoolServer(t, "X-Api-Key", kind, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "refuse") {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"no"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"input_tokens":7}`))
	})
	p, err := New(Config{BaseURL: srv.URL, APIKey: providertest.PoolSetting, HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		up, err := p.Send(ctx, &gw.Call{Body: []byte(`{}`), Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		up.Body.Close()
		if n, err := p.CountTokens(ctx, "claude-x", []byte(`{"messages":[]}`)); err != nil || n != 7 {
			t.Fatalf("count: %d %v", n, err)
		}
	}
	if _, err := p.Send(ctx, &gw.Call{Body: []byte(`{"refuse":1}`), Header: http.Header{}}); err == nil {
		t.Fatal("a refused call answered")
	}
	srv.Used("chat", true)
	srv.Used("count", true)
	srv.Used("probe", false)
}
