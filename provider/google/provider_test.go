package google

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

const testKey = "AIzaSy-test-secret-key-0123456789"

func rpcBody(code int, status, msg, details string) string {
	if details == "" {
		details = "[]"
	}
	return `{"error":{"code":` + itoa(code) + `,"message":"` + msg + `","status":"` + status + `","details":` + details + `}}`
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestStatusErrorMapsEachRPCStatus(t *testing.T) {
	retry := `[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]`
	keyInvalid := `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]`
	tests := []struct {
		name       string
		status     int
		body       string
		wantCode   gw.Code
		wantMsg    string // substring of Message
		wantRetry  time.Duration
		notInMsg   string
		wantStatus int
	}{
		{"resource exhausted is rate limited with the RetryInfo delay", 429, rpcBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded", retry), gw.CodeRateLimited, "google: Quota exceeded", 30 * time.Second, "", 429},
		{"resource exhausted without RetryInfo waits at least a second", 429, rpcBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded", ""), gw.CodeRateLimited, "Quota exceeded", time.Second, "", 429},
		{"fractional retry delay", 429, rpcBody(429, "RESOURCE_EXHAUSTED", "slow down", `[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]`), gw.CodeRateLimited, "slow down", 1500 * time.Millisecond, "", 429},
		{"unavailable is overloaded", 503, rpcBody(503, "UNAVAILABLE", "The model is overloaded.", ""), gw.CodeOverloaded, "google: The model is overloaded.", 0, "", 503},
		{"invalid argument keeps the vendor message", 400, rpcBody(400, "INVALID_ARGUMENT", "Function call is missing a thought_signature", ""), gw.CodeInvalidRequest, "google: Function call is missing a thought_signature", 0, "", 400},
		{"failed precondition is invalid request", 400, rpcBody(400, "FAILED_PRECONDITION", "User location is not supported", ""), gw.CodeInvalidRequest, "google: User location is not supported", 0, "", 400},
		{"not found", 404, rpcBody(404, "NOT_FOUND", "models/gemini-x is not found", ""), gw.CodeNotFound, "model_not_found: google: models/gemini-x is not found", 0, "", 404},
		{"deadline exceeded is upstream timeout", 504, rpcBody(504, "DEADLINE_EXCEEDED", "Deadline expired", ""), gw.CodeUpstreamTimeout, "Deadline expired", 0, "", 504},
		{"internal is upstream error", 500, rpcBody(500, "INTERNAL", "An internal error has occurred.", ""), gw.CodeUpstream, "internal error", 0, "", 502},
		{"wrong key (400 API_KEY_INVALID) is the gateway's problem", 400, rpcBody(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", keyInvalid), gw.CodeUpstream, "refused the gateway's credentials", 0, "API key not valid", 502},
		{"permission denied is the gateway's problem", 403, rpcBody(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers", ""), gw.CodeUpstream, "credentials", 0, "unregistered", 502},
		{"unauthenticated", 401, rpcBody(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", ""), gw.CodeUpstream, "credentials", 0, "", 502},
		{"status name beats a proxy's HTTP status", 500, rpcBody(429, "RESOURCE_EXHAUSTED", "Quota", ""), gw.CodeRateLimited, "Quota", time.Second, "", 429},
		{"array-wrapped error body", 503, `[` + rpcBody(503, "UNAVAILABLE", "busy", "") + `]`, gw.CodeOverloaded, "google: busy", 0, "", 503},
		{"non-JSON body falls back to the HTTP status", 502, `<html>bad gateway</html>`, gw.CodeUpstream, "google: Bad Gateway", 0, "<html>", 502},
		{"413 is request too large", 413, ``, gw.CodeRequestTooLarge, "google", 0, "", 413},
		{"the key is scrubbed from messages", 400, rpcBody(400, "INVALID_ARGUMENT", "bad key "+testKey, ""), gw.CodeInvalidRequest, "[redacted]", 0, testKey, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := statusError(tt.status, http.Header{}, []byte(tt.body), testKey)
			if e.Code != tt.wantCode {
				t.Errorf("code = %s, want %s (%v)", e.Code, tt.wantCode, e)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.wantMsg)
			}
			if tt.notInMsg != "" && strings.Contains(e.Message, tt.notInMsg) {
				t.Errorf("message %q contains %q", e.Message, tt.notInMsg)
			}
			if strings.Contains(e.Error(), testKey) {
				t.Errorf("error text contains the key: %v", e)
			}
			if e.RetryAfter != tt.wantRetry {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetry)
			}
			if got := e.Code.Status(); got != tt.wantStatus {
				t.Errorf("HTTP status = %d, want %d", got, tt.wantStatus)
			}
		})
	}
}

func TestStreamErrorCodes(t *testing.T) {
	tests := []struct {
		st   rpcStatus
		want gw.Code
	}{
		{rpcStatus{Code: 503, Status: "UNAVAILABLE", Message: "busy"}, gw.CodeOverloaded},
		{rpcStatus{Code: 503, Message: "busy"}, gw.CodeOverloaded},
		{rpcStatus{Code: 500, Status: "INTERNAL", Message: "oops"}, gw.CodeUpstream},
		{rpcStatus{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "quota"}, gw.CodeUpstream},
	}
	for _, tt := range tests {
		if got := streamError(&tt.st); got.Code != tt.want || !strings.HasPrefix(got.Message, "google: ") {
			t.Errorf("%+v: got %v, want code %s", tt.st, got, tt.want)
		}
	}
}

// fakeGemini records what it received and answers with the handler's
// status and body.
type fakeGemini struct {
	mu     sync.Mutex
	paths  []string
	query  []string
	keys   []string
	bodies []string

	status int
	body   string
	header http.Header
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.query = append(f.query, r.URL.RawQuery)
	f.keys = append(f.keys, r.Header.Get("X-Goog-Api-Key"))
	f.bodies = append(f.bodies, string(b))
	f.mu.Unlock()
	for k, v := range f.header {
		w.Header()[k] = v
	}
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func newTestProvider(t *testing.T, f *fakeGemini) *Provider {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := New(Config{BaseURL: srv.URL + "/", APIKey: testKey, HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSendPostsWithHeaderAuth(t *testing.T) {
	tests := []struct {
		name      string
		stream    bool
		model     string
		wantPath  string
		wantQuery string
	}{
		{"generateContent", false, "gemini-3-flash", "/v1beta/models/gemini-3-flash:generateContent", ""},
		{"streamGenerateContent with alt=sse", true, "gemini-3-flash", "/v1beta/models/gemini-3-flash:streamGenerateContent", "alt=sse"},
		{"models/ prefix is not doubled", false, "models/gemini-2.5-pro", "/v1beta/models/gemini-2.5-pro:generateContent", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeGemini{status: 200, body: `{"candidates":[]}`}
			p := newTestProvider(t, f)
			up, err := p.Send(context.Background(), &gw.Call{Model: tt.model, Stream: tt.stream, Body: []byte(`{"contents":[]}`)})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(up.Body)
			up.Body.Close()
			if string(b) != f.body || up.Status != 200 {
				t.Errorf("answer = %d %q", up.Status, b)
			}
			if len(f.paths) != 1 || f.paths[0] != tt.wantPath || f.query[0] != tt.wantQuery {
				t.Fatalf("request = %v ? %v", f.paths, f.query)
			}
			if f.keys[0] != testKey {
				t.Errorf("x-goog-api-key = %q", f.keys[0])
			}
			if strings.Contains(f.query[0], "key=") {
				t.Errorf("key in the query string: %q", f.query[0])
			}
			if f.bodies[0] != `{"contents":[]}` {
				t.Errorf("body = %q", f.bodies[0])
			}
		})
	}
}

func TestSendMapsFailuresWithoutLeakingKeyOrURL(t *testing.T) {
	f := &fakeGemini{status: 429, body: rpcBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded for key "+testKey,
		`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]`)}
	p := newTestProvider(t, f)
	_, err := p.Send(context.Background(), &gw.Call{Model: "gemini-3-flash", Body: []byte(`{}`)})
	var ge *gw.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want *gw.Error", err)
	}
	if ge.Code != gw.CodeRateLimited || ge.RetryAfter != 12*time.Second {
		t.Errorf("got %s retry %v", ge.Code, ge.RetryAfter)
	}
	if strings.Contains(ge.Error(), testKey) || strings.Contains(ge.Error(), "127.0.0.1") {
		t.Errorf("error leaks the key or URL: %v", ge)
	}
}

func TestSendTransportErrorHidesURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	p, err := New(Config{BaseURL: url, APIKey: testKey, HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Send(context.Background(), &gw.Call{Model: "gemini-3-flash", Body: []byte(`{}`)})
	if gw.ErrorCode(err) != gw.CodeUpstream {
		t.Fatalf("err = %v, want upstream_error", err)
	}
	if strings.Contains(err.Error(), url) || strings.Contains(err.Error(), "/v1beta/") || strings.Contains(err.Error(), testKey) {
		t.Errorf("error leaks the URL or key: %v", err)
	}
}

func TestSendWithoutKeyIsVendorUnavailable(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Unavailable() == nil {
		t.Error("Unavailable() = nil with no key")
	}
	_, err = p.Send(context.Background(), &gw.Call{Model: "gemini-3-flash"})
	if gw.ErrorCode(err) != gw.CodeVendorUnavailable || !strings.Contains(err.Error(), "GATEWAY_GOOGLE_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

func TestNewRejectsMalformedBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "not a url", "http://"} {
		if _, err := New(Config{BaseURL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

func TestProviderIdentity(t *testing.T) {
	p, _ := New(Config{APIKey: "k"})
	if p.Name() != "google" || p.Shape() != gw.ShapeG {
		t.Errorf("Name/Shape = %s/%s", p.Name(), p.Shape())
	}
	// A Gemini-shaped caller's body goes as it is (the model and the
	// stream flag are in the URL).
	in := []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if out, hide, err := p.PassThrough(in, "gemini-3-flash", true); err != nil || hide || string(out) != string(in) {
		t.Errorf("PassThrough = %s, %v, %v", out, hide, err)
	}
	if got := p.URL("gemini-3-flash", true); got != DefaultBaseURL+"/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse" {
		t.Errorf("URL = %s", got)
	}
}

// TestSendThenDecodeStream runs the whole path against a loopback fake:
// encode, send, decode the stream, with the body closed by the decoder.
func TestSendThenDecodeStream(t *testing.T) {
	f := &fakeGemini{status: 200, header: http.Header{"Content-Type": {"text/event-stream"}},
		body: "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1}}\r\n\r\n"}
	p := newTestProvider(t, f)
	body, err := p.EncodeRequest(&gw.Request{Model: "gemini-3-flash", Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "hello"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := p.Send(context.Background(), &gw.Call{Model: "gemini-3-flash", Stream: true, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	s := p.DecodeStream(up.Body)
	defer s.Close()
	var got []gw.EventType
	var fin gw.Event
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
		fin = ev
	}
	want := []gw.EventType{gw.EventStart, gw.EventBlockStart, gw.EventDelta, gw.EventBlockStop, gw.EventFinish}
	if len(got) != len(want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if fin.StopReason != gw.StopEndTurn || fin.Usage.InputTokens != 3 || fin.Usage.OutputTokens != 1 {
		t.Errorf("finish = %+v usage %+v", fin, fin.Usage)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Errorf("Recv after Close = %v, want io.EOF", err)
	}
}
