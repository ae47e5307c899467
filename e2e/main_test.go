package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/sse"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The SQLite driver and net/http keep these background workers
		// for the life of the process.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	)
}

// nativeModels names a priced model per vendor for the tests.
var nativeModels = map[string]string{
	"openai":     "gpt-6-sol",
	"anthropic":  "claude-sonnet-5-5",
	"google":     "gemini-3-flash",
	"together":   "meta-llama/Llama-3.3-70B-Instruct-Turbo",
	"fireworks":  "accounts/fireworks/models/kimi-k2p6",
	"groq":       "llama-3.3-70b-versatile",
	"mistral":    "mistral-large-latest",
	"deepseek":   "deepseek-flash",
	"openrouter": "meta-llama/llama-3.3-70b-instruct",
}

// env is a running gateway wired to fake vendors, with a funded key.
type env struct {
	t    *testing.T
	logs *syncBuffer
	m    *app.Main
	fake *fakevendor.Server
	url  string
	key  string
	acct string
}

type envOption func(*app.Config)

// newEnv starts fake vendors and a gateway on 127.0.0.1:0 with a fresh
// SQLite file. Vendors are configured explicitly, so a test can leave one
// unconfigured or point it at a dead port.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	fake, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = filepath.Join(t.TempDir(), "gateway.db")
	cfg.HTTP.RetryBase = 5 * time.Millisecond
	cfg.HTTP.FirstByteTimeout = 2 * time.Second
	// Breakers off: tests send failing requests in a row on purpose
	// (the breaker tests turn them on).
	cfg.HTTP.BreakerFailures = -1
	for _, v := range route.Vendors() {
		cfg.Vendors[v] = app.VendorConfig{BaseURL: fake.BaseURL(v), APIKey: fake.APIKey(v)}
	}
	// The optimization layer (on by default in the product) is off here
	// so that tests of other behaviours see the caller's bodies; its own
	// tests turn it on with withOptimizer.
	cfg.Optimize = false
	// So is the guard's cool-down, which tests sending many attacks from
	// one key would reach; its own tests turn it on.
	cfg.GuardCooldown.Incidents = 0
	// And the bound on a key's blocked requests a minute (its own test
	// turns it on).
	cfg.BlocksPerMinute = -1
	for _, o := range opts {
		o(&cfg)
	}
	logs := &syncBuffer{}
	m := &app.Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve() }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
		<-done
		_ = m.Close()
	})
	secret, k, err := createKey(ctx, m.Store(), "acme", 100*gw.USD)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, logs: logs, m: m, fake: fake, url: "http://" + m.Addr(), key: secret, acct: k.AccountID}
}

// post sends a raw request to the gateway.
func (e *env) post(path, key string, body []byte, hdr ...string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, r io.ReadCloser) []byte {
	t.Helper()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func chatBody(model, text string, stream bool, extra string) []byte {
	s := `{"model":` + quote(model) + `,"messages":[{"role":"user","content":` + quote(text) + `}]`
	if stream {
		s += `,"stream":true`
	}
	return []byte(s + extra + `}`)
}

func messagesBody(model, text string, stream bool, extra string) []byte {
	s := `{"model":` + quote(model) + `,"max_tokens":256,"messages":[{"role":"user","content":` + quote(text) + `}]`
	if stream {
		s += `,"stream":true`
	}
	return []byte(s + extra + `}`)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// nativeRoute is one endpoint+vendor pair whose shapes match.
type nativeRoute struct {
	path   string
	vendor string
	body   func(model, text string, stream bool, extra string) []byte
}

func nativeRoutes() []nativeRoute {
	out := []nativeRoute{{"/v1/messages", "anthropic", messagesBody}}
	for _, v := range []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"} {
		out = append(out, nativeRoute{"/v1/chat/completions", v, chatBody})
	}
	return out
}

// direct calls the fake vendor itself with the body it received from the
// gateway, to get the bytes the vendor sends for it.
func (e *env) direct(vendor string, rec fakevendor.Received) []byte {
	e.t.Helper()
	req, _ := http.NewRequest(rec.Method, e.fake.URL()+"/"+vendor+rec.Path+queryOf(rec.RawQuery), bytes.NewReader(rec.Body))
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Anthropic-Version", "Content-Type"} {
		if v := rec.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return readAll(e.t, resp.Body)
}

func queryOf(q string) string {
	if q == "" {
		return ""
	}
	return "?" + q
}

// lastRequest returns the newest request the fake recorded.
func (e *env) lastRequest() fakevendor.Received {
	e.t.Helper()
	rs := e.fake.Requests()
	if len(rs) == 0 {
		e.t.Fatal("the fake vendor received nothing")
	}
	return rs[len(rs)-1]
}

// TestNativePassThroughBytes checks, for every native route, stream and
// not: the vendor received the caller's bytes with only model rewritten
// (and, on a stream that did not ask for usage, the usage option added);
// the caller received the vendor's bytes unchanged (less the usage chunk
// the gateway asked for); the ids and headers are the gateway's.
func TestNativePassThroughBytes(t *testing.T) {
	e := newEnv(t)
	for _, r := range nativeRoutes() {
		for _, stream := range []bool{false, true} {
			name := r.vendor
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				model := nativeModels[r.vendor]
				body := r.body(r.vendor+"/"+model, "Say hello.", stream, `,"temperature":0.5,"x_custom_field":{"keep":[1,2,3]}`)
				resp := e.post(r.path, e.key, body, "Anthropic-Version", "2023-06-01")
				got := readAll(t, resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, got)
				}
				rid := resp.Header.Get("X-Gateway-Request-Id")
				if !strings.HasPrefix(rid, "req_") || len(rid) != 30 {
					t.Errorf("x-gateway-request-id = %q", rid)
				}
				sdkHeader := "X-Request-Id"
				if r.path == "/v1/messages" {
					sdkHeader = "Request-Id"
				}
				if resp.Header.Get(sdkHeader) != rid {
					t.Errorf("%s = %q, want %q", sdkHeader, resp.Header.Get(sdkHeader), rid)
				}
				if v := resp.Header.Get("X-Gateway-Vendor"); v != r.vendor {
					t.Errorf("x-gateway-vendor = %q", v)
				}
				rec := e.lastRequest()
				if rec.Vendor != r.vendor {
					t.Fatalf("request went to %s", rec.Vendor)
				}
				want, _ := rawjson.Set(body, "model", []byte(quote(model)))
				sent := rec.Body
				// The vendors that route cache hits by key get the
				// account's prompt_cache_key, appended last.
				withKey := r.vendor == "openai" || r.vendor == "mistral" || r.vendor == "fireworks"
				if got := cacheKeyRE.Match(sent); got != withKey {
					t.Errorf("prompt_cache_key added: %v, want %v", got, withKey)
				}
				sent = cacheKeyRE.ReplaceAll(sent, nil)
				added := false
				if stream && bytes.Contains(sent, []byte(`"stream_options":{"include_usage":true}`)) {
					added = true
					sent = bytes.Replace(sent, []byte(`,"stream_options":{"include_usage":true}`), nil, 1)
				}
				if !bytes.Equal(sent, want) {
					t.Errorf("vendor received\n%s\nwant\n%s", rec.Body, want)
				}
				vendorBytes := e.direct(r.vendor, rec)
				if added {
					vendorBytes = dropUsageChunk(t, vendorBytes)
				}
				if r.vendor == "together" {
					// The one listed, SDK-breaking deviation on this
					// answer: Together's finish_reason "eos" is "stop".
					vendorBytes = bytes.ReplaceAll(vendorBytes, []byte(`"finish_reason":"eos"`), []byte(`"finish_reason":"stop"`))
				}
				// The replay may fall in the next second: the vendor's
				// "created" clock is the one field allowed to differ.
				if !bytes.Equal(createdRE.ReplaceAll(got, []byte(`"created":0`)), createdRE.ReplaceAll(vendorBytes, []byte(`"created":0`))) {
					t.Errorf("caller received\n%s\nvendor sent\n%s", got, vendorBytes)
				}
				if !stream {
					if c := resp.Header.Get("X-Gateway-Customer-Charge-Cents"); c == "" || c == "0.000000" {
						t.Errorf("charge header = %q", c)
					}
				} else if c := resp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); c == "" || c == "0.000000" {
					t.Errorf("charge trailer = %q", c)
				}
			})
		}
	}
}

var createdRE = regexp.MustCompile(`"created":\d+`)

var cacheKeyRE = regexp.MustCompile(`,"prompt_cache_key":"gw-[0-9a-f]{32}"`)

// dropUsageChunk removes what the gateway holds back from a C stream it
// asked usage for: the usage-only chunk and the "usage":null members.
func dropUsageChunk(t *testing.T, b []byte) []byte {
	t.Helper()
	rd := sse.NewReader(bytes.NewReader(b))
	var out []byte
	for rd.Next() {
		ev := rd.Event()
		if ev.Data != nil && bytes.Contains(ev.Data, []byte(`"choices":[]`)) && bytes.Contains(ev.Data, []byte(`"usage":{`)) {
			continue
		}
		out = append(out, bytes.Replace(ev.Raw, []byte(`,"usage":null`), nil, 1)...)
	}
	return out
}

// TestForwardedHeaders: anthropic-* headers reach Anthropic only; the
// gateway's own key replaces the caller's.
func TestForwardedHeaders(t *testing.T) {
	e := newEnv(t)
	resp := e.post("/v1/messages?beta=true", e.key, messagesBody("anthropic/"+nativeModels["anthropic"], "hi", false, ""),
		"Anthropic-Version", "2023-06-01", "Anthropic-Beta", "tools-2024-04-04")
	readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rec := e.lastRequest()
	if rec.Header.Get("Anthropic-Beta") != "tools-2024-04-04" || rec.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("anthropic headers not forwarded: %v", rec.Header)
	}
	if rec.Header.Get("X-Api-Key") != e.fake.APIKey("anthropic") || rec.Header.Get("Authorization") != "" {
		t.Errorf("vendor auth wrong: %v", rec.Header)
	}
	resp = e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""), "Anthropic-Beta", "x")
	readAll(t, resp.Body)
	rec = e.lastRequest()
	if rec.Header.Get("Anthropic-Beta") != "" {
		t.Error("anthropic-beta leaked to openai")
	}
	if rec.Header.Get("Authorization") != "Bearer "+e.fake.APIKey("openai") {
		t.Errorf("caller key reached the vendor: %q", rec.Header.Get("Authorization"))
	}
}

type errCase struct {
	name       string
	method     string
	path       string
	key        string // "" none, "good", or a literal
	body       []byte
	ctype      string
	wantStatus int
	wantType   string
	wantIn     string
}

func TestErrorRows(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	e := newEnv(t, func(c *app.Config) {
		c.MaxBodyBytes = 64 << 10
		c.Vendors["mistral"] = app.VendorConfig{}
		c.Vendors["together"] = app.VendorConfig{BaseURL: deadURL, APIKey: "k"}
	})
	revoked, rk, err := createKey(context.Background(), e.m.Store(), "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.m.Store().RevokeKey(context.Background(), rk.ID); err != nil {
		t.Fatal(err)
	}
	poor, _, _ := createKey(context.Background(), e.m.Store(), "poor", 0)
	oa := "openai/" + nativeModels["openai"]
	an := "anthropic/" + nativeModels["anthropic"]
	big := chatBody(oa, strings.Repeat("x", 70<<10), false, "")
	cases := []errCase{
		{"bad json", "POST", "/v1/chat/completions", "good", []byte(`{"model":`), "", 400, "invalid_request", "not valid JSON"},
		{"not an object", "POST", "/v1/chat/completions", "good", []byte(`[1,2]`), "", 400, "invalid_request", "JSON object"},
		{"empty body", "POST", "/v1/messages", "good", nil, "", 400, "invalid_request", "empty"},
		{"wrong content type", "POST", "/v1/chat/completions", "good", chatBody(oa, "hi", false, ""), "text/plain", 400, "invalid_request", "Content-Type"},
		{"missing model", "POST", "/v1/chat/completions", "good", []byte(`{"messages":[]}`), "", 400, "invalid_request", "model is required"},
		{"missing messages", "POST", "/v1/chat/completions", "good", []byte(`{"model":"openai/x"}`), "", 400, "invalid_request", "messages is required"},
		{"missing max_tokens", "POST", "/v1/messages", "good", []byte(`{"model":"anthropic/x","messages":[]}`), "", 400, "invalid_request", "max_tokens is required"},
		{"no prefix", "POST", "/v1/chat/completions", "good", chatBody("gpt-4.1", "hi", false, ""), "", 400, "invalid_request", `openai/gpt-4.1`},
		{"unknown prefix", "POST", "/v1/messages", "good", messagesBody("azure/claude-x", "hi", false, ""), "", 400, "invalid_request", "no vendor prefix"},
		{"unpriced model", "POST", "/v1/chat/completions", "good", chatBody("openai/gpt-unknown-9", "hi", false, ""), "", 400, "invalid_request", "rate card"},
		{"unknown path", "POST", "/v1/completions", "good", nil, "", 404, "not_found", "no such endpoint"},
		{"wrong method", "GET", "/v1/chat/completions", "good", nil, "", 405, "method_not_allowed", "use POST"},
		{"too large", "POST", "/v1/chat/completions", "good", big, "", 413, "request_too_large", "limit"},
		{"no key", "POST", "/v1/chat/completions", "", chatBody(oa, "hi", false, ""), "", 401, "authentication_error", "Authorization"},
		{"bad key", "POST", "/v1/messages", "gwk_nope", messagesBody(an, "hi", false, ""), "", 401, "authentication_error", "malformed"},
		{"revoked key", "POST", "/v1/chat/completions", revoked, chatBody(oa, "hi", false, ""), "", 401, "authentication_error", "revoked"},
		{"insufficient balance", "POST", "/v1/chat/completions", poor, chatBody(oa, "hi", false, ""), "", 402, "insufficient_balance", ""},
		{"vendor not configured", "POST", "/v1/chat/completions", "good", chatBody("mistral/"+nativeModels["mistral"], "hi", false, ""), "", 503, "vendor_unavailable", "GATEWAY_MISTRAL_API_KEY"},
		{"vendor 400", "POST", "/v1/chat/completions", "good", chatBody(oa, "[fake:status=400]", false, ""), "", 400, "invalid_request", "openai:"},
		{"unpriced model on messages", "POST", "/v1/messages", "good", messagesBody("anthropic/claude-missing", "hi", false, ""), "", 400, "invalid_request", "rate card"},
		{"vendor 404", "POST", "/v1/chat/completions", "good", chatBody(oa, "[fake:status=404]", false, ""), "", 404, "not_found", ""},
		{"openrouter model off its price list", "POST", "/v1/chat/completions", "good", chatBody("openrouter/meta-llama/missing-model", "hi", false, ""), "", 400, "invalid_request", "not on OpenRouter's price list"},
		{"vendor 429", "POST", "/v1/chat/completions", "good", chatBody(oa, "[fake:status=429][fake:retry=7]", false, ""), "", 429, "rate_limited", ""},
		{"vendor 529", "POST", "/v1/messages", "good", messagesBody(an, "[fake:status=529]", false, ""), "", 503, "overloaded", "anthropic"},
		{"vendor 500", "POST", "/v1/chat/completions", "good", chatBody("groq/"+nativeModels["groq"], "[fake:status=500]", false, ""), "", 502, "upstream_error", "groq"},
		{"vendor 401 hides key", "POST", "/v1/chat/completions", "good", chatBody("deepseek/"+nativeModels["deepseek"], "[fake:status=401]", false, ""), "", 502, "upstream_error", "credentials"},
		{"first byte timeout", "POST", "/v1/chat/completions", "good", chatBody(oa, "[fake:slow=5s]", false, ""), "", 504, "upstream_timeout", ""},
		{"connection refused", "POST", "/v1/chat/completions", "good", chatBody("together/"+nativeModels["together"], "hi", false, ""), "", 502, "upstream_error", "could not reach"},
		{"malformed vendor body", "POST", "/v1/chat/completions", "good", chatBody(oa, "[fake:malformed]", false, ""), "", 502, "upstream_error", "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.url+c.path, bytes.NewReader(c.body))
			ct := c.ctype
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Anthropic-Version", "2023-06-01")
			switch c.key {
			case "":
			case "good":
				req.Header.Set("Authorization", "Bearer "+e.key)
			default:
				req.Header.Set("Authorization", "Bearer "+c.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			if resp.StatusCode != c.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.wantStatus, body)
			}
			var env struct {
				Type  string `json:"type"`
				Error struct {
					Type      string `json:"type"`
					Message   string `json:"message"`
					RequestID string `json:"request_id"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("not JSON: %s", body)
			}
			if env.Error.Type != c.wantType {
				t.Errorf("error.type = %q, want %q", env.Error.Type, c.wantType)
			}
			rid := resp.Header.Get("X-Gateway-Request-Id")
			if !strings.HasPrefix(env.Error.RequestID, "req_") || env.Error.RequestID != rid {
				t.Errorf("request_id %q, header %q", env.Error.RequestID, rid)
			}
			if c.path == "/v1/messages" && env.Type != "error" {
				t.Errorf("messages envelope lacks type:error: %s", body)
			}
			if !strings.Contains(env.Error.Message, c.wantIn) {
				t.Errorf("message %q does not contain %q", env.Error.Message, c.wantIn)
			}
			for _, secret := range []string{"fake-", e.fake.URL(), "127.0.0.1"} {
				if strings.Contains(string(body), secret) {
					t.Errorf("error body leaks %q: %s", secret, body)
				}
			}
			if c.wantStatus == 429 {
				if ra := resp.Header.Get("Retry-After"); ra != "7" {
					t.Errorf("Retry-After = %q, want 7 (the vendor's)", ra)
				}
			}
		})
	}
}

// TestMidStreamFailures: a vendor failure after the stream began reaches
// the caller as the shape's own in-stream error.
func TestMidStreamFailures(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name, path string
		body       []byte
		want       string
	}{
		{"messages vendor error event", "/v1/messages", messagesBody("anthropic/"+nativeModels["anthropic"], "[fake:error-after=2]", true, ""), "event: error"},
		{"messages connection cut", "/v1/messages", messagesBody("anthropic/"+nativeModels["anthropic"], "[fake:break=2]", true, ""), "event: error"},
		{"chat vendor error chunk", "/v1/chat/completions", chatBody("openai/"+nativeModels["openai"], "[fake:error-after=2]", true, ""), `data: {"error"`},
		{"chat connection cut", "/v1/chat/completions", chatBody("openai/"+nativeModels["openai"], "[fake:break=2]", true, ""), `"error":{`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.post(tt.path, e.key, tt.body, "Anthropic-Version", "2023-06-01")
			got := string(readAll(t, resp.Body))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("stream lacks %q:\n%s", tt.want, got)
			}
			if tt.path == "/v1/chat/completions" && !strings.HasSuffix(got, "data: [DONE]\n\n") {
				t.Errorf("chat stream does not end with [DONE]:\n%s", got)
			}
			if c := resp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); c != "0.000000" {
				t.Errorf("a broken stream was charged %q", c)
			}
		})
	}
}

// TestCallerDisconnectCancelsUpstream: when the caller goes away mid
// stream, the vendor sees its call cancelled.
func TestCallerDisconnectCancelsUpstream(t *testing.T) {
	e := newEnv(t)
	for _, r := range []nativeRoute{{"/v1/messages", "anthropic", messagesBody}, {"/v1/chat/completions", "openai", chatBody}} {
		t.Run(r.vendor, func(t *testing.T) {
			e.fake.Reset()
			ctx, cancel := context.WithCancel(context.Background())
			body := r.body(r.vendor+"/"+nativeModels[r.vendor], "[fake:delay=200ms][fake:chunks=50]", true, "")
			req, _ := http.NewRequestWithContext(ctx, "POST", e.url+r.path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Anthropic-Version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
			// The vendor read outlives the caller by proxy.StreamLinger (so
			// the usage the vendor reports at the end bills), then is
			// cancelled: well before the 10 s the fake would take to finish.
			wctx, wcancel := context.WithTimeout(context.Background(), proxy.StreamLinger+4*time.Second)
			defer wcancel()
			if err := e.fake.WaitCancelled(wctx, 1); err != nil {
				t.Fatalf("vendor never saw the cancellation: %v", err)
			}
		})
	}
}

// TestRetryBeforeFirstByte: a vendor 503 is retried before anything
// reached the caller.
func TestRetryBeforeFirstByte(t *testing.T) {
	e := newEnv(t)
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "[fake:fail-first=2]", false, ""))
	body := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if n := len(e.fake.Requests()); n != 3 {
		t.Fatalf("vendor saw %d calls, want 3 (two failures, one success)", n)
	}
}

// TestHealth covers /healthz and /readyz, which need no key.
func TestHealth(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(e.url + p)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d", p, resp.StatusCode)
		}
	}
	e.m.SetDraining(true)
	resp, _ := http.Get(e.url + "/readyz")
	readAll(t, resp.Body)
	if resp.StatusCode != 503 {
		t.Errorf("/readyz while draining = %d", resp.StatusCode)
	}
	e.m.SetDraining(false)
}

// TestConcurrentRequests runs parallel requests on several routes to let
// the race detector see the hot path.
func TestConcurrentRequests(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := range 24 {
		r := nativeRoutes()[i%len(nativeRoutes())]
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.post(r.path, e.key, r.body(r.vendor+"/"+nativeModels[r.vendor], "hi", i%2 == 0, ""), "Anthropic-Version", "2023-06-01")
			b := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Errorf("%s: %d %s", r.vendor, resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
}

// TestGracefulShutdown: on shutdown the gateway stops accepting new
// requests but lets a running stream finish, and bills it.
func TestGracefulShutdown(t *testing.T) {
	e := newEnv(t)
	body := chatBody("openai/"+nativeModels["openai"], "[fake:delay=100ms][fake:chunks=8]", true, "")
	resp := e.post("/v1/chat/completions", e.key, body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- e.m.Shutdown(ctx)
	}()
	time.Sleep(100 * time.Millisecond)
	// New connections are refused while the stream drains.
	if r, err := http.Get(e.url + "/healthz"); err == nil {
		r.Body.Close()
		t.Error("a new request was accepted during shutdown")
	}
	got := string(readAll(t, resp.Body))
	if !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Fatalf("the running stream was cut:\n%s", got)
	}
	if c := resp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); c == "" || c == "0.000000" {
		t.Errorf("drained stream charge trailer = %q", c)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsKeepSecrets: the access log has a line per request, and neither
// it nor any other log line holds a vendor key, an upstream address or the
// caller's key, whatever failed.
func TestLogsKeepSecrets(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String() + "/v1"
	dead.Close()
	e := newEnv(t, func(c *app.Config) {
		c.Vendors["together"] = app.VendorConfig{BaseURL: deadURL, APIKey: "sk-together-secret"}
	})
	for _, b := range [][]byte{
		chatBody("together/"+nativeModels["together"], "hi", false, ""),                // connection refused
		chatBody("deepseek/"+nativeModels["deepseek"], "[fake:status=401]", false, ""), // vendor refuses our key
		chatBody("openai/"+nativeModels["openai"], "[fake:status=500]", false, ""),
		chatBody("openai/"+nativeModels["openai"], "hello", true, ""),
	} {
		resp := e.post("/v1/chat/completions", e.key, b)
		readAll(t, resp.Body)
	}
	logs := e.logs.String()
	if n := strings.Count(logs, "msg=request "); n != 4 {
		t.Errorf("%d access log lines, want 4:\n%s", n, logs)
	}
	if !strings.Contains(logs, "cause=") {
		t.Errorf("server-side failures logged without their cause:\n%s", logs)
	}
	for _, secret := range []string{"sk-together-secret", "fake-deepseek-key", "fake-openai-key", dead.Addr().String(), e.fake.URL(), e.key} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs hold %q:\n%s", secret, logs)
		}
	}
}

// createKey makes an account (if new), tops it up and issues a key with
// the default rate limits.
func createKey(ctx context.Context, st gw.Store, account string, topUp gw.Money) (secret string, k *gw.Key, err error) {
	return app.CreateKey(ctx, st, account, topUp, gw.Limit{}, false)
}

// createKeyWithLimits is createKey with the key's own limits (zero
// fields: the configured defaults).
func createKeyWithLimits(ctx context.Context, st gw.Store, account string, topUp gw.Money, lim gw.Limit) (secret string, k *gw.Key, err error) {
	return app.CreateKey(ctx, st, account, topUp, lim, false)
}

// createKeyWith is createKeyWithLimits with the key's optimization switch.
func createKeyWith(ctx context.Context, st gw.Store, account string, topUp gw.Money, lim gw.Limit, optimizeOff bool) (secret string, k *gw.Key, err error) {
	return app.CreateKey(ctx, st, account, topUp, lim, optimizeOff)
}
