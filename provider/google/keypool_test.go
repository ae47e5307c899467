package google

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

// With a two-key pool, every kind of call to Gemini carries one key of
// the pool, spread over both: generateContent, countTokens (token
// counts and the optimizer's calibration) and the gateway's own probe.
func TestKeyPoolEveryCall(t *testing.T) {
	kind := func(r *http.Request) string {
		switch {
		case r.URL.Path == "/v1beta/models":
			return "probe"
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			return "chat"
		case strings.HasSuffix(r.URL.Path, ":countTokens"):
			return "count"
		}
		return "other"
	}
	srv := providertest.NewKeyPoolServer(t, "X-Goog-Api-Key", kind, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "refuse") {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":401,"message":"no","status":"UNAUTHENTICATED"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"totalTokens":7}`))
	})
	p, err := New(Config{BaseURL: srv.URL, APIKey: providertest.PoolSetting, HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		up, err := p.Send(ctx, &gw.Call{Model: "gemini-x", Body: []byte(`{}`), Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		up.Body.Close()
		if n, err := p.CountTokens(ctx, "gemini-x", []byte(`{"contents":[]}`)); err != nil || n != 7 {
			t.Fatalf("count: %d %v", n, err)
		}
	}
	if _, err := p.Send(ctx, &gw.Call{Model: "gemini-x", Body: []byte(`{"refuse":1}`), Header: http.Header{}}); err == nil {
		t.Fatal("a refused call answered")
	}
	srv.Used("chat", true)
	srv.Used("count", true)
	srv.Used("probe", false)
}
