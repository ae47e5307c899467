package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/runs"
)

// TestRunIDOnTheSpan: a request naming a run carries its id as the
// span's gen_ai.conversation.id.
func TestRunIDOnTheSpan(t *testing.T) {
	rc := newOTLPReceiver(t)
	otel := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rc.srv.URL}
	e := newEnv(t, func(c *app.Config) { c.OTelEnv = func(k string) string { return otel[k] } })
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "Hello", false, ""), runs.HeaderRun, "traced-run")
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.m.Tracer().ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range rc.received() {
		if s.Name == "chat openai/"+nativeModels["openai"] {
			if got := attrs(s)[proxy.AttrConversationID]; got != "traced-run" {
				t.Errorf("%s = %q, want traced-run", proxy.AttrConversationID, got)
			}
			return
		}
	}
	t.Fatalf("no request span among %v", names(rc.received()))
}
