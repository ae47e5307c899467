package e2e

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/proxy"
)

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes the
// protobuf export requests the gateway posts to /v1/traces.
type otlpReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service string
	headers http.Header
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.headers = r.Header.Clone()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					rc.service = a.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *otlpReceiver) received() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

// attrs flattens a span's attributes to strings.
func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, a := range s.Attributes {
		out[a.Key] = anyValue(a.Value)
	}
	return out
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return itoa(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// A request through the gateway with OTEL_EXPORTER_OTLP_ENDPOINT set is
// exported over OTLP/HTTP as one trace: the request's span (server,
// named "chat <vendor/model>", a child of the caller's traceparent) with
// the GenAI attributes, tokens, cost, charge, guard verdict and
// attempts, and under it auth, guard, the vendor call (client, GenAI
// attributes) and settle. The exporter's headers variable is honoured.
func TestOTLPTraceOfARequest(t *testing.T) {
	rc := newOTLPReceiver(t)
	otel := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": rc.srv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-tenant=ops",
		"OTEL_SERVICE_NAME":           "gateway-test",
	}
	e := newEnv(t, func(c *app.Config) { c.OTelEnv = func(k string) string { return otel[k] } })
	if e.m.Tracer() == nil {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT set, no tracer")
	}
	const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "Hello", false, ""),
		"Traceparent", "00-"+parentTrace+"-00f067aa0ba902b7-01")
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rec := recordOf(t, e, resp)
	// A request refused before the guard: its span says so.
	bad := e.post("/v1/chat/completions", "gwk_"+strings.Repeat("x", 43), chatBody("openai/"+nativeModels["openai"], "Hello", false, ""))
	readAll(t, bad.Body)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.m.Tracer().ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rc.received()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	root := byName["chat openai/"+nativeModels["openai"]]
	if root == nil {
		t.Fatalf("no request span among %d: %v", len(spans), names(spans))
	}
	if root.Kind != tracepb.Span_SPAN_KIND_SERVER || string(hexID(root.TraceId)) != parentTrace {
		t.Errorf("request span: kind %v, trace %x (want the caller's %s)", root.Kind, root.TraceId, parentTrace)
	}
	a := attrs(root)
	want := map[string]string{
		proxy.AttrOperation:     "chat",
		proxy.AttrProvider:      "openai",
		proxy.AttrSystem:        "openai",
		proxy.AttrRequestModel:  nativeModels["openai"],
		proxy.AttrResponseModel: nativeModels["openai"],
		proxy.AttrInputTokens:   itoa(rec.Usage.PromptTokens()),
		proxy.AttrOutputTokens:  itoa(rec.Usage.OutputTokens),
		proxy.AttrCost:          rec.Cost.USDString(),
		proxy.AttrCharge:        rec.Charge.USDString(),
		proxy.AttrChargeCents:   resp.Header.Get("X-Gateway-Customer-Charge-Cents"),
		proxy.AttrGuard:         rec.Guard,
		proxy.AttrAttempts:      "1",
		proxy.AttrRequestID:     rec.RequestID,
		proxy.AttrStatus:        "200",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("request span %s = %q, want %q", k, a[k], v)
		}
	}
	if rec.Usage.PromptTokens() == 0 || rec.Charge == 0 {
		t.Errorf("the record has no usage or charge: %+v", rec)
	}
	for _, c := range []struct {
		name string
		kind tracepb.Span_SpanKind
	}{{"auth", tracepb.Span_SPAN_KIND_INTERNAL}, {"guard", tracepb.Span_SPAN_KIND_INTERNAL},
		{"chat " + nativeModels["openai"], tracepb.Span_SPAN_KIND_CLIENT}, {"settle", tracepb.Span_SPAN_KIND_INTERNAL}} {
		var s *tracepb.Span
		for _, x := range spans {
			if x.Name == c.name && string(x.ParentSpanId) == string(root.SpanId) {
				s = x
			}
		}
		if s == nil {
			t.Errorf("no %s span among %v", c.name, names(spans))
			continue
		}
		if string(s.ParentSpanId) != string(root.SpanId) || string(s.TraceId) != string(root.TraceId) || s.Kind != c.kind {
			t.Errorf("%s: parent %x (want %x), kind %v (want %v)", c.name, s.ParentSpanId, root.SpanId, s.Kind, c.kind)
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano < root.StartTimeUnixNano || s.EndTimeUnixNano > root.EndTimeUnixNano {
			t.Errorf("%s: not within the request's span", c.name)
		}
	}
	vendor := attrs(byName["chat "+nativeModels["openai"]])
	for _, k := range []string{proxy.AttrOperation, proxy.AttrProvider, proxy.AttrRequestModel, proxy.AttrResponseModel, proxy.AttrInputTokens, proxy.AttrOutputTokens} {
		if vendor[k] != a[k] {
			t.Errorf("vendor span %s = %q, want %q", k, vendor[k], a[k])
		}
	}
	if g := attrs(byName["guard"])[proxy.AttrGuard]; g != rec.Guard {
		t.Errorf("guard span verdict %q, want %q", g, rec.Guard)
	}
	var refused *tracepb.Span
	for _, s := range spans {
		if s.Name == "POST /v1/chat/completions" {
			refused = s
		}
	}
	if refused == nil || attrs(refused)[proxy.AttrErrorType] != string(gw.CodeAuthentication) || attrs(refused)[proxy.AttrGuard] != "not_run" ||
		refused.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the refused request's span: %v", refused)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.service != "gateway-test" || rc.headers.Get("X-Tenant") != "ops" {
		t.Errorf("service.name %q, headers %v", rc.service, rc.headers)
	}
}

// Without the variables nothing is traced, and the proxy builds no span.
func TestNoTracingWithoutEndpoint(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.OTelEnv = func(string) string { return "" } })
	if e.m.Tracer() != nil {
		t.Fatal("a tracer without an endpoint")
	}
	bad := newEnvErr(t, func(c *app.Config) {
		c.OTelEnv = func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
		}
	})
	if bad == nil || !strings.Contains(bad.Error(), "http/protobuf") {
		t.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: %v", bad)
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func hexID(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// newEnvErr opens a gateway with opts applied and returns Open's error
// (closing it when it opened).
func newEnvErr(t *testing.T, opts ...envOption) error {
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return err
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = t.TempDir() + "/g.db"
	for _, o := range opts {
		o(&cfg)
	}
	m := &app.Main{Config: cfg}
	if err := m.Open(context.Background()); err != nil {
		return err
	}
	return m.Close()
}

// With GATEWAY_LOG_FORMAT=json everything serve prints is JSON: the
// banner and the demo key on stdout, the logs on stderr, durations in
// seconds (a float), and each request's line carries its tokens and
// charge.
func TestJSONLogsAndBanner(t *testing.T) {
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DatabaseURL, cfg.FakeVendors, cfg.LogFormat = "127.0.0.1:0", t.TempDir()+"/g.db", true, "json"
	cfg.OTelEnv = func(string) string { return "" }
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.RunServer(ctx, cfg, &stdout, &stderr) }()
	lines := func(s string) []map[string]any {
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("not a JSON line: %q", l)
			}
			out = append(out, m)
		}
		return out
	}
	var url, key string
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range lines(stdout.String()) {
			switch m["msg"] {
			case "gateway listening":
				url, _ = m["url"].(string)
			case "demo key created (shown once)":
				key, _ = m["key"].(string)
			}
		}
	}
	if url == "" || !strings.HasPrefix(key, "gwk_") {
		cancel()
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(string(chatBody("openai/"+nativeModels["openai"], "Hello", false, ""))))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var request map[string]any
	for _, m := range lines(stderr.String()) {
		if m["msg"] == "request" {
			request = m
		}
	}
	if request == nil {
		t.Fatalf("no request line:\n%s", stderr.String())
	}
	d, ok := request["duration"].(float64)
	if !ok || d <= 0 || d > 60 {
		t.Errorf("duration %v: want seconds", request["duration"])
	}
	for _, k := range []string{"input_tokens", "output_tokens"} {
		if n, _ := request[k].(float64); n <= 0 {
			t.Errorf("%s = %v", k, request[k])
		}
	}
	for _, k := range []string{"cache_read_tokens", "cache_write_tokens"} {
		if _, ok := request[k].(float64); !ok {
			t.Errorf("%s missing: %v", k, request)
		}
	}
	if c, _ := request["charge_usd"].(string); c == "" || c == "0.00000000" || resp.Header.Get("X-Gateway-Customer-Charge-Cents") == "" {
		t.Errorf("charge_usd %q", request["charge_usd"])
	}
}
