package tracing

import (
	"context"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "gw"}, false},
	} {
		if got := Enabled(env(c.vars)); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.vars, got, c.want)
		}
	}
}

func TestFromEnvOffAndRefusals(t *testing.T) {
	ctx := context.Background()
	if tr, err := FromEnv(ctx, env(nil), "v"); tr != nil || err != nil {
		t.Fatalf("no variables: %v, %v", tr, err)
	}
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
	} {
		if _, err := FromEnv(ctx, env(vars), "v"); err == nil {
			t.Errorf("%v: accepted", vars)
		}
	}
	tr, err := FromEnv(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}), "v")
	if err != nil || tr == nil {
		t.Fatalf("http/protobuf: %v, %v", tr, err)
	}
	_ = tr.Shutdown(ctx)
}

func TestParseHeaders(t *testing.T) {
	h, err := parseHeaders("api-key=abc%20def, x-tenant = ops ,")
	if err != nil || h["api-key"] != "abc def" || h["x-tenant"] != "ops" || len(h) != 2 {
		t.Fatalf("%v, %v", h, err)
	}
	if _, err := parseHeaders("=v"); err == nil || !strings.Contains(err.Error(), "key=value") {
		t.Errorf("empty key: %v", err)
	}
}
