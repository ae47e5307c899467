package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

func newProvider(t *testing.T, vendor, url string) *Provider {
	t.Helper()
	cfg, ok := Defaults(vendor)
	if !ok {
		t.Fatalf("no defaults for %s", vendor)
	}
	if url != "" {
		cfg.BaseURL = url
	}
	cfg.APIKey = "sk-secret-vendor-key"
	cfg.HTTP = upstream.Config{MaxRetries: -1}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPassThrough(t *testing.T) {
	tests := []struct {
		vendor, in, model, want string
		stream, hide            bool
	}{
		{"openai", `{"model":"openai/gpt-x","messages":[]}`, "gpt-x", `{"model":"gpt-x","messages":[]}`, false, false},
		{"openai", `{"model":"openai/gpt-x","stream":true}`, "gpt-x", `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true}}`, true, true},
		{"openai", `{"model":"openai/x","stream":true,"stream_options":{"include_usage":true}}`, "x", `{"model":"x","stream":true,"stream_options":{"include_usage":true}}`, true, false},
		{"groq", `{"model":"groq/x","stream":true,"stream_options":{"include_obfuscation":false}}`, "x", `{"model":"x","stream":true,"stream_options":{"include_obfuscation":false,"include_usage":true}}`, true, true},
		{"mistral", `{"model":"mistral/x","stream":true}`, "x", `{"model":"x","stream":true}`, true, false},
		{"openrouter", `{"model":"openrouter/a/b","stream":true}`, "a/b", `{"model":"a/b","stream":true}`, true, false},
	}
	for _, tt := range tests {
		p := newProvider(t, tt.vendor, "")
		got, hide, err := p.PassThrough([]byte(tt.in), tt.model, tt.stream)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want || hide != tt.hide {
			t.Errorf("%s %s: got %s hide=%v, want %s hide=%v", tt.vendor, tt.in, got, hide, tt.want, tt.hide)
		}
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		vendor string
		status int
		body   string
		code   gw.Code
		msg    string
	}{
		{"openai", 400, `{"error":{"message":"bad temperature","type":"invalid_request_error","code":null}}`, gw.CodeInvalidRequest, "openai: bad temperature"},
		{"openai", 429, `{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":"insufficient_quota"}}`, gw.CodeUpstream, "quota"},
		{"openai", 429, `{"error":{"message":"Rate limit","code":"rate_limit_exceeded"}}`, gw.CodeRateLimited, "Rate limit"},
		{"mistral", 400, `{"object":"error","message":"Tool call id was call_1 but must be ...","type":"invalid_request_error","code":"3280"}`, gw.CodeInvalidRequest, "mistral: Tool call id"},
		{"mistral", 422, `{"detail":[{"loc":["body","x"],"msg":"extra fields not permitted"}]}`, gw.CodeInvalidRequest, "extra fields"},
		{"openrouter", 402, `{"error":{"code":402,"message":"Insufficient credits","metadata":{}}}`, gw.CodeUpstream, "Insufficient credits"},
		{"deepseek", 503, `{"error":{"message":"Server overloaded"}}`, gw.CodeOverloaded, "overloaded"},
		{"groq", 401, `{"error":{"message":"Invalid API Key sk-secret-vendor-key"}}`, gw.CodeUpstream, "credentials"},
		{"together", 502, `<html>Bad gateway</html>`, gw.CodeUpstream, "together: Bad Gateway"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The call, or on 401 the gateway's own probe of the key.
			probe := r.Method == http.MethodGet && r.URL.Path == "/v1/models"
			if r.Header.Get("Authorization") != "Bearer sk-secret-vendor-key" || r.URL.Path != "/v1/chat/completions" && !probe {
				t.Errorf("auth %q path %q", r.Header.Get("Authorization"), r.URL.Path)
			}
			w.WriteHeader(tt.status)
			w.Write([]byte(tt.body))
		}))
		p := newProvider(t, tt.vendor, srv.URL+"/v1")
		_, err := p.Send(context.Background(), &gw.Call{Body: []byte(`{}`), Header: http.Header{}})
		srv.Close()
		e := gw.AsError(err)
		if e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s %d: %s %q, want %s containing %q", tt.vendor, tt.status, e.Code, e.Message, tt.code, tt.msg)
		}
		if strings.Contains(e.Message, "sk-secret") || strings.Contains(e.Message, srv.URL) || strings.Contains(e.Message, "<html>") {
			t.Errorf("%s: message leaks: %q", tt.vendor, e.Message)
		}
	}
}

func TestUnconfigured(t *testing.T) {
	cfg, _ := Defaults("fireworks")
	p, _ := New(cfg)
	_, err := p.Send(context.Background(), &gw.Call{})
	e := gw.AsError(err)
	if e.Code != gw.CodeVendorUnavailable || !strings.Contains(e.Message, "GATEWAY_FIREWORKS_API_KEY") || p.Unavailable() == nil {
		t.Fatalf("%v", err)
	}
}
