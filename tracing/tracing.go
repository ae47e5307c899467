// Package tracing is the gateway's OpenTelemetry: a proxy.Tracer over the
// official SDK that exports each request's spans over OTLP/HTTP
// (protobuf) when the standard variables ask for it, and nothing at all
// otherwise.
//
// Export is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT is set, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. The exporter reads the rest itself:
// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, _TIMEOUT, _COMPRESSION,
// _CERTIFICATE; the SDK reads OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_* and
// OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. The protocol
// (OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL) must be http/protobuf, the
// default; grpc and http/json are refused at start rather than ignored.
// An incoming W3C traceparent makes the request's span a child of the
// caller's trace; nothing is propagated to vendors.
//
// Spans follow the GenAI semantic conventions: the request's span (kind
// server) and the vendor call's (kind client) are named "chat <model>"
// and carry gen_ai.operation.name, gen_ai.provider.name (and the older
// gen_ai.system), gen_ai.request.model, gen_ai.response.model and
// gen_ai.usage.input_tokens / output_tokens; the request's span adds the
// gateway's cost, charge, guard verdict and attempts (package proxy names
// them). Children: auth, guard, the vendor call, settle.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// Tracer is a proxy.Tracer exporting over OTLP/HTTP.
type Tracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TextMapPropagator
}

var _ proxy.Tracer = (*Tracer)(nil)

// Enabled reports whether the variables ask for trace export.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// FromEnv returns a Tracer when the variables ask for trace export, and
// nil (no tracing, no cost) otherwise. version is the service.version.
// The exporter does not connect until the first batch.
func FromEnv(ctx context.Context, getenv func(string) string, version string) (*Tracer, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_PROTOCOL %q: the gateway exports http/protobuf only", proto)
	}
	// The endpoint and headers are read through getenv (the exporter
	// reads the process environment for the rest).
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = strings.TrimRight(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint)}
	headers := getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
	if headers == "" {
		headers = getenv("OTEL_EXPORTER_OTLP_HEADERS")
	}
	if headers != "" {
		h, err := parseHeaders(headers)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithHeaders(h))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// The default name and version, then OTEL_RESOURCE_ATTRIBUTES, then
	// OTEL_SERVICE_NAME.
	res, err := resource.Merge(
		resource.NewSchemaless(attribute.String("service.name", "gateway"), attribute.String("service.version", version)),
		resource.Environment(),
	)
	if service := getenv("OTEL_SERVICE_NAME"); service != "" && err == nil {
		res, err = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", service)))
	}
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return New(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: comma-separated
// key=value pairs, values URL-encoded.
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", kv)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_HEADERS: %q: %w", kv, err)
		}
		out[k] = dv
	}
	return out, nil
}

// New returns a Tracer over a tracer provider built with opts (tests
// pass their own exporter or processor).
func New(opts ...sdktrace.TracerProviderOption) *Tracer {
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracer{
		tp:   tp,
		tr:   tp.Tracer("github.com/gwlabs/gateway"),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// StartRequest begins a request's span (kind server) under the caller's
// trace, if its headers carry one.
func (t *Tracer) StartRequest(ctx context.Context, name string, h http.Header) (context.Context, proxy.Span) {
	ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(h))
	ctx, s := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, span{s}
}

// Start begins a child of ctx's span.
func (t *Tracer) Start(ctx context.Context, name string, client bool) (context.Context, proxy.Span) {
	kind := trace.SpanKindInternal
	if client {
		kind = trace.SpanKindClient
	}
	ctx, s := t.tr.Start(ctx, name, trace.WithSpanKind(kind))
	return ctx, span{s}
}

// ForceFlush exports the spans ended so far.
func (t *Tracer) ForceFlush(ctx context.Context) error { return t.tp.ForceFlush(ctx) }

// Shutdown exports what is left and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// span is a proxy.Span over an OpenTelemetry span.
type span struct{ s trace.Span }

func (s span) SetName(name string) { s.s.SetName(name) }

func (s span) SetAttributes(attrs ...proxy.Attr) {
	if !s.s.IsRecording() {
		return
	}
	kv := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case string:
			kv = append(kv, attribute.String(a.Key, v))
		case int64:
			kv = append(kv, attribute.Int64(a.Key, v))
		case int:
			kv = append(kv, attribute.Int(a.Key, v))
		case float64:
			kv = append(kv, attribute.Float64(a.Key, v))
		case bool:
			kv = append(kv, attribute.Bool(a.Key, v))
		default:
			kv = append(kv, attribute.String(a.Key, fmt.Sprint(v)))
		}
	}
	s.s.SetAttributes(kv...)
}

func (s span) Fail(err error) {
	e := gw.AsError(err)
	s.s.SetAttributes(attribute.String(proxy.AttrErrorType, string(e.Code)))
	s.s.SetStatus(codes.Error, e.Message)
}

func (s span) End() { s.s.End() }
