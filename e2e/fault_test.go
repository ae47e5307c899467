package e2e

// The fault and abuse suite: one test per finding of the hardening pass
// (bad input, guard bypasses, shutdown, amplification, memory, sign-in,
// Redis down, small overflows), each against a running gateway on
// loopback with the fake vendors, bounded in time and size.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// padded builds a chat body of n user/assistant turns of about 4 KB of
// ordinary prose, then a last user turn.
func paddedBody(model string, n int, last string, messages bool) []byte {
	para := strings.Repeat("The quarterly report shows revenue growth across all regions, and the team in Lisbon shipped early. ", 41)
	var b strings.Builder
	b.WriteString(`{"model":` + quote(model) + `,"max_tokens":64,"messages":[`)
	for i := 0; i < n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		b.WriteString(`{"role":"` + role + `","content":` + quote(para) + `},`)
	}
	b.WriteString(`{"role":"user","content":` + quote(last) + `}]}`)
	if !messages {
		return []byte(strings.Replace(b.String(), `"max_tokens":64,`, "", 1))
	}
	return []byte(b.String())
}

// TestFaultGuardBypass (item 1): padding, unreadable bodies and keys the
// gateway and the vendor read differently no longer get an attack past
// the guard.
func TestFaultGuardBypass(t *testing.T) {
	e := newEnv(t, func(c *app.Config) {
		c.TPM = 0 // 2 MB bodies
		// What is tested is the guard's verdict, not its speed: under the
		// race detector on a loaded machine a 2-8 MB body can take longer
		// than the default 2 s to score, and a time-out fails open (a 200
		// or a vendor's 504 instead of the 403).
		c.GuardTimeout = time.Minute
		c.HTTP.FirstByteTimeout = time.Minute
	})
	chatModel := "openai/" + nativeModels["openai"]
	msgModel := "anthropic/" + nativeModels["anthropic"]
	mapped := "google/" + nativeModels["google"]
	// A blocked (403) request's vendor call runs beside the guard and is
	// cancelled by the verdict; the vendor may still record it after the
	// 403 has been answered (the cancelled connection's bytes are read
	// late). So a refused (400) body is looked for by its own mark among
	// everything the vendor received, not by counting what arrived since
	// a Reset, which a late request from an earlier case can break.
	tests := []struct {
		name   string
		path   string
		body   func(a, hi string) []byte // a: the quoted attack, hi: quoted ordinary text, both carrying the case's mark
		status int
	}{
		{"512 padded turns, chat", "/v1/chat/completions", func(string, string) []byte { return paddedBody(chatModel, 512, attack, false) }, 403},
		{"512 padded turns, messages", "/v1/messages", func(string, string) []byte { return paddedBody(msgModel, 512, attack, true) }, 403},
		{"512 padded turns, mapped", "/v1/messages", func(string, string) []byte { return paddedBody(mapped, 512, attack, true) }, 403},
		{"content 1 beside the attack", "/v1/chat/completions", func(a, _ string) []byte {
			return []byte(`{"model":"` + chatModel + `","messages":[{"role":"user","content":` + a + `},{"role":"user","content":1}]}`)
		}, 400},
		{"system 1 beside the attack", "/v1/messages", func(a, _ string) []byte {
			return []byte(`{"model":"` + msgModel + `","max_tokens":64,"system":1,"messages":[{"role":"user","content":` + a + `}]}`)
		}, 400},
		{"Messages decoy", "/v1/chat/completions", func(a, hi string) []byte {
			return []byte(`{"model":"` + chatModel + `","messages":[{"role":"user","content":` + a + `}],"Messages":[{"role":"user","content":` + hi + `}]}`)
		}, 400},
		{"Content decoy", "/v1/messages", func(a, hi string) []byte {
			return []byte(`{"model":"` + msgModel + `","max_tokens":64,"messages":[{"role":"user","content":` + a + `,"Content":` + hi + `}]}`)
		}, 400},
		{"Content decoy, mapped", "/v1/chat/completions", func(a, hi string) []byte {
			return []byte(`{"model":"` + mapped + `","messages":[{"role":"user","Content":` + a + `,"content":` + hi + `}]}`)
		}, 400},
		{"duplicate messages", "/v1/chat/completions", func(a, hi string) []byte {
			return []byte(`{"model":"` + chatModel + `","messages":[{"role":"user","content":` + hi + `}],"messages":[{"role":"user","content":` + a + `}]}`)
		}, 400},
		{"Role system", "/v1/chat/completions", func(a, _ string) []byte {
			return []byte(`{"model":"` + mapped + `","messages":[{"Role":"system","content":` + a + `}]}`)
		}, 400},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := fmt.Sprintf("case-mark-%02d", i)
			body := tt.body(quote(attack+" "+mark), quote("hello "+mark))
			resp := e.post(tt.path, e.key, body, "Anthropic-Version", "2023-06-01")
			got := readAll(t, resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, got)
			}
			if tt.status != 400 {
				return
			}
			for _, r := range e.fake.Requests() {
				if bytes.Contains(r.Body, []byte(mark)) {
					t.Errorf("a refused body reached the vendor: %s %s %.200s", r.Vendor, r.Path, r.Body)
				}
			}
		})
	}
	// Six 2 MB padded attacks, and one 8 MB turn with the attack at its
	// end: all blocked (the guard's cost is bounded, so its time-out,
	// which fails open, is not reached). One at a time: concurrency would
	// make this a timing test under the race detector.
	for i := range 7 {
		body := paddedBody(chatModel, 512, attack, false)
		if i == 6 {
			huge := strings.Repeat("The quarterly report shows revenue growth across all regions. ", 8<<20/62)
			body = chatBody(chatModel, huge+" "+attack, false, "")
		}
		resp := e.post("/v1/chat/completions", e.key, body)
		readAll(t, resp.Body)
		if rec, err := e.m.Store().Record(context.Background(), resp.Header.Get("X-Gateway-Request-Id")); resp.StatusCode != 403 || err != nil || !strings.HasPrefix(rec.Guard, "flagged:") {
			t.Errorf("huge attack %d: status %d, record %+v, %v; want 403 flagged", i, resp.StatusCode, rec, err)
		}
	}
	// Per-turn system messages (Claude Code's role "system" inside
	// messages) are scored as the system prompt is: never. The same text
	// as a user turn is blocked.
	sysTurn := []byte(`{"model":"` + msgModel + `","max_tokens":64,"messages":[{"role":"user","content":"hi"},{"role":"system","content":` + quote(attack) + `},{"role":"user","content":"go on"}]}`)
	resp := e.post("/v1/messages", e.key, sysTurn, "Anthropic-Version", "2023-06-01")
	readAll(t, resp.Body)
	if rec, err := e.m.Store().Record(context.Background(), resp.Header.Get("X-Gateway-Request-Id")); resp.StatusCode == 403 || err != nil || rec.Guard != "pass" {
		t.Errorf("per-turn system message: status %d, record %+v, %v; want the guard's pass", resp.StatusCode, rec, err)
	}
	resp = e.post("/v1/messages", e.key, bytes.Replace(sysTurn, []byte(`"role":"system"`), []byte(`"role":"user"`), 1), "Anthropic-Version", "2023-06-01")
	readAll(t, resp.Body)
	if resp.StatusCode != 403 {
		t.Errorf("the same text as a user turn: status %d, want 403", resp.StatusCode)
	}
	// The same padding without the attack goes through.
	resp = e.post("/v1/chat/completions", e.key, paddedBody(chatModel, 512, "What grew fastest?", false))
	if got := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("padding alone: status %d: %.300s", resp.StatusCode, got)
	}
}

// TestFaultShutdownCut (item 4): when the shutdown grace runs out, the
// requests still running are cut, not the store under them: each stream
// ends with an error event and its terminator and is billed for what was
// delivered, an unanswered request's hold is released, and no hold is
// left when Shutdown returns.
func TestFaultShutdownCut(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	slowStream := "[fake:delay=100ms][fake:chunks=200]"
	type call struct {
		name, path string
		body       []byte
		end        string // the stream's last bytes
	}
	calls := []call{
		{"native chat stream", "/v1/chat/completions", chatBody("openai/"+nativeModels["openai"], slowStream, true, ""), "data: [DONE]\n\n"},
		{"native messages stream", "/v1/messages", messagesBody("anthropic/"+nativeModels["anthropic"], slowStream, true, ""), "event: error\n"},
		{"mapped chat stream", "/v1/chat/completions", chatBody("anthropic/"+nativeModels["anthropic"], slowStream, true, ""), "data: [DONE]\n\n"},
		{"mapped messages stream", "/v1/messages", messagesBody("google/"+nativeModels["google"], slowStream, true, ""), "event: error\n"},
		{"unanswered", "/v1/chat/completions", chatBody("openai/"+nativeModels["openai"], "[fake:slow=20s]", false, ""), ""},
	}
	type result struct {
		status int
		body   string
		charge string
	}
	results := make([]chan result, len(calls))
	for i, c := range calls {
		results[i] = make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, e.url+c.path, bytes.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+e.key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i] <- result{body: err.Error()}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results[i] <- result{resp.StatusCode, string(b), resp.Trailer.Get("X-Gateway-Customer-Charge-Cents")}
		}()
	}
	time.Sleep(700 * time.Millisecond) // every stream has relayed a few events
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := e.m.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the grace's deadline", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	for i, c := range calls {
		r := <-results[i]
		if c.end == "" {
			if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "shutting down") {
				t.Errorf("%s: status %d %q, want 503 shutting down", c.name, r.status, r.body)
			}
			continue
		}
		if r.status != 200 || !strings.HasSuffix(r.body, c.end) && !strings.Contains(r.body, c.end) || !strings.Contains(r.body, "shutting down") {
			t.Errorf("%s: status %d, stream does not end with the shutdown error and %q:\n...%s", c.name, r.status, c.end, tail(r.body, 400))
		}
		if r.charge == "" || r.charge == "0.000000" {
			t.Errorf("%s: charge trailer %q, want what was delivered", c.name, r.charge)
		}
	}
	b, err := e.m.Store().Balance(ctx, e.acct)
	if err != nil {
		t.Fatal(err)
	}
	if b.Held != 0 || b.Charged <= 0 || b.Balance != b.TopUps-b.Charged {
		t.Fatalf("after shutdown: %+v, want no hold, the delivered parts charged", b)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestFaultAmplification (item 5): a huge model name is refused before
// anything stores or logs it, and refused requests count against the
// key's requests per minute.
func TestFaultAmplification(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM = 3 })
	ctx := context.Background()
	logBefore := len(e.logs.String())
	huge := "openai/" + strings.Repeat("x", 4<<20)
	resp := e.post("/v1/chat/completions", e.key, chatBody(huge, "hi", false, ""))
	body := readAll(t, resp.Body)
	if resp.StatusCode != 400 || len(body) > 4<<10 || !strings.Contains(string(body), "at most 256 bytes") {
		t.Fatalf("status %d, %d-byte answer: %.200s", resp.StatusCode, len(body), body)
	}
	rid := resp.Header.Get("X-Gateway-Request-Id")
	rec, err := e.m.Store().Record(ctx, rid)
	if err != nil {
		t.Fatalf("the refused request has no record: %v", err)
	}
	if len(rec.Model)+len(rec.Vendor)+len(rec.Note) > 512 {
		t.Errorf("record holds %d bytes of caller strings", len(rec.Model)+len(rec.Vendor)+len(rec.Note))
	}
	if grew := len(e.logs.String()) - logBefore; grew > 4<<10 {
		t.Errorf("the logs grew by %d bytes for one refused request", grew)
	}
	// Two more refused requests, then a good one: over the RPM of 3.
	for _, b := range [][]byte{[]byte(`{"model":`), chatBody("nosuch/model", "hi", false, "")} {
		readAll(t, e.post("/v1/chat/completions", e.key, b).Body)
	}
	resp = e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 3 refused requests with an RPM of 3: status %d, want 429", resp.StatusCode)
	}
}

// TestFaultMemory (item 6): bodies take memory as they arrive and within
// a deadline, all bodies together are capped, and vendor answers are
// bounded.
func TestFaultMemory(t *testing.T) {
	// The idle sockets get a gateway with a short body deadline of its
	// own. The rest keep the default (60 s): a body past the in-flight
	// cap is refused only once its bytes arrive, and on a busy machine
	// 4 MiB did not always arrive within 700 ms (answered 400, the body
	// deadline, where 503 was due).
	idle := newEnv(t, func(c *app.Config) {
		c.BodyReadTimeout = 700 * time.Millisecond
		c.MaxInflightBytes = 4 << 20
	})
	e := newEnv(t, func(c *app.Config) {
		c.MaxInflightBytes = 4 << 20
		c.MaxResponseBytes = 200
		c.MaxEventBytes = 100
		c.TPM = 0
	})
	addr := strings.TrimPrefix(idle.url, "http://")

	// 20 idle sockets declaring 32 MiB bodies hold almost nothing, and
	// are answered once the body deadline passes.
	runtime.GC()
	var before, during runtime.MemStats
	runtime.ReadMemStats(&before)
	conns := make([]net.Conn, 20)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", idle.key, 32<<20-1)
		conns[i] = c
	}
	time.Sleep(300 * time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&during)
	grew := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap held by 20 idle sockets declaring 32 MiB: %d KiB", grew>>10)
	if grew > 16<<20 {
		t.Errorf("20 idle 32 MiB declarations hold %d MiB of heap", grew>>20)
	}
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.Contains(line, " 400 ") {
			t.Errorf("idle body: %q, %v; want 400 after the body deadline", line, err)
		}
	}

	// One 6 MiB body is past the 4 MiB in flight: 503 with Retry-After;
	// the count is given back, so a small one then passes the limit.
	big := chatBody("openai/"+nativeModels["openai"], strings.Repeat("word ", 6<<20/5), false, "")
	resp := e.post("/v1/chat/completions", e.key, big)
	bigAnswer := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("6 MiB over a 4 MiB in-flight cap: status %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), tail(string(bigAnswer), 300))
	}
	// The same body from a client that stalls for 900 ms after 2 MiB,
	// as a starved process does: still 503, whatever the pace.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write(big[:2<<20])
		time.Sleep(900 * time.Millisecond)
		_, _ = pw.Write(big[2<<20:])
		_ = pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", pr)
	req.ContentLength = int64(len(big))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.key)
	stalled, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stalledAnswer := readAll(t, stalled.Body)
	_ = pr.Close()
	if stalled.StatusCode != http.StatusServiceUnavailable || stalled.Header.Get("Retry-After") == "" {
		t.Errorf("6 MiB, stalled after 2 MiB, over a 4 MiB in-flight cap: status %d, Retry-After %q: %s", stalled.StatusCode, stalled.Header.Get("Retry-After"), tail(string(stalledAnswer), 300))
	}

	// Vendor answers past the bounds fail cleanly. Issue 29 item 4: the
	// non-streaming one was generated (and billed by the vendor), so it
	// is billed, never refused and free: the prompt at one token per 4
	// bytes of the body (P) and the 200 bytes read as 200 output tokens,
	// on gpt-6-sol at 200 and 1,000 uc: (P x 200 + 200 x 1,000) x 1.09
	// (before: 0).
	small := chatBody("openai/"+nativeModels["openai"], "hi", false, "")
	resp = e.post("/v1/chat/completions", e.key, small)
	if b := readAll(t, resp.Body); resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "200-byte limit") {
		t.Errorf("answer over 200 bytes: %d %s", resp.StatusCode, b)
	}
	p := (int64(len(small)) + 3) / 4
	wantCharge := gw.Money(((p*200+200*1000)*109 + 50) / 100)
	if rec := waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id")); rec.Charge != wantCharge || !strings.Contains(rec.Note, "answer_too_large") {
		t.Errorf("over-size answer charged %d note %q, want %d, answer_too_large", rec.Charge, rec.Note, wantCharge)
	}
	for _, c := range []struct{ path, model string }{{"/v1/chat/completions", "openai/" + nativeModels["openai"]}, {"/v1/messages", "openai/" + nativeModels["openai"]}} {
		body := messagesBody(c.model, "hi", true, "")
		if c.path == "/v1/chat/completions" {
			body = chatBody(c.model, "hi", true, "")
		}
		resp := e.post(c.path, e.key, body)
		// The stream fails with its shape's error, as a vendor break.
		if b := readAll(t, resp.Body); !strings.Contains(string(b), `"error":{"type":`) || strings.Count(string(b), "data:") > 2 {
			t.Errorf("%s stream with events over 100 bytes: %d %s", c.path, resp.StatusCode, tail(string(b), 300))
		}
	}
	b, _ := e.m.Store().Balance(context.Background(), e.acct)
	if b.Charged != wantCharge || b.Held != 0 {
		t.Errorf("failed answers moved money beyond the over-size answer's %d: %+v", wantCharge, b)
	}
}

// TestFaultSignIn (item 7): sign-in is throttled per client address, the
// admin token must be long, signing out ends the session on the server,
// and the cookie is Secure behind a trusted TLS proxy.
func TestFaultSignIn(t *testing.T) {
	if _, err := app.ConfigFromEnv(func(k string) string {
		if k == "GATEWAY_ADMIN_TOKEN" {
			return "short-token"
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a short admin token: %v, want a clear configuration error", err)
	}
	admin := strings.Repeat("a1", 20)
	e := newEnv(t, func(c *app.Config) {
		c.AdminToken = admin
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func(token string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/dashboard/signin", strings.NewReader(url.Values{"key": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Behind the trusted proxy, over TLS: a Secure cookie.
	resp := signIn(admin, "X-Forwarded-For", "203.0.113.9", "X-Forwarded-Proto", "https")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.Secure {
		t.Fatalf("sign-in over a TLS proxy: status %d, cookie %+v", resp.StatusCode, cookie)
	}
	get := func(c *http.Cookie) int {
		req, _ := http.NewRequest(http.MethodGet, e.url+"/dashboard/logs", nil)
		req.AddCookie(c)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get(cookie); s != http.StatusOK {
		t.Fatalf("signed in: logs status %d", s)
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/dashboard/signout", nil)
	req.AddCookie(cookie)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
	}
	if s := get(cookie); s != http.StatusSeeOther {
		t.Errorf("the signed-out cookie still works: logs status %d", s)
	}
	// Brute force from one address: after 10 failed attempts a minute,
	// 429 for the wrong tokens; the right one still gets in (the failures
	// are throttled, never the holder); another address is not affected.
	var codes []int
	for i := 0; i < 12; i++ {
		codes = append(codes, signIn("wrong-"+admin, "X-Forwarded-For", "198.51.100.7").StatusCode)
	}
	if r := signIn("wrong-again-"+admin, "X-Forwarded-For", "198.51.100.7"); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("after 12 wrong tokens another wrong one: status %d (attempts: %v)", r.StatusCode, codes)
	}
	if r := signIn(admin, "X-Forwarded-For", "198.51.100.7"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("after 12 wrong tokens the right one: status %d (attempts: %v)", r.StatusCode, codes)
	}
	if r := signIn(admin, "X-Forwarded-For", "198.51.100.8"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("another address: status %d", r.StatusCode)
	}
	// A peer that is not a trusted proxy cannot pick its address or TLS.
	e2 := newEnv(t, func(c *app.Config) { c.AdminToken = admin })
	e.url = e2.url
	resp = signIn(admin, "X-Forwarded-Proto", "https")
	for _, c := range resp.Cookies() {
		if c.Secure {
			t.Errorf("an untrusted peer's X-Forwarded-Proto made the cookie Secure")
		}
	}
}

// TestFaultRedisDown (item 8): with Redis unreachable the gateway limits
// in memory, each limit divided by the instance count, and /readyz says
// it is degraded; in the fail-closed mode /readyz says not ready.
func TestFaultRedisDown(t *testing.T) {
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "redis://" + dead.Addr().String() + "/0"
	dead.Close()
	e := newEnv(t, func(c *app.Config) { c.RedisURL, c.RPM, c.Instances = deadURL, 4, 2 })
	readyz := func(e *env) (int, string) {
		resp, err := http.Get(e.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(readAll(t, resp.Body))
	}
	var codes []int
	start := time.Now()
	for i := 0; i < 4; i++ {
		resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
		readAll(t, resp.Body)
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	t.Logf("4 requests with Redis down took %v", time.Since(start))
	if want := []int{200, 200, 429, 429}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("RPM 4 over 2 instances with Redis down: %v, want %v", codes, want)
	}
	if code, body := readyz(e); code != 200 || !strings.Contains(body, "degraded") {
		t.Errorf("/readyz with Redis down: %d %s", code, body)
	}
	closed := newEnv(t, func(c *app.Config) { c.RedisURL, c.RedisFailLocal, c.RedisFailOpen = deadURL, false, false })
	resp := closed.post("/v1/chat/completions", closed.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
	readAll(t, resp.Body)
	if code, body := readyz(closed); resp.StatusCode != 503 || code != 503 {
		t.Errorf("fail closed with Redis down: request %d, /readyz %d %s; want 503 and not ready", resp.StatusCode, code, body)
	}
}

// TestFaultSmall (item 9): huge output caps get 400, not an overflowed
// or never-admitted estimate; the caller's OpenAI organization headers
// are dropped; an admin's unknown account is a 404 page, not a 500.
func TestFaultSmall(t *testing.T) {
	admin := strings.Repeat("b2", 20)
	e := newEnv(t, func(c *app.Config) { c.AdminToken = admin })
	for _, n := range []string{"9223372036854775807", "2500000"} {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
			body := []byte(`{"model":"openai/` + nativeModels["openai"] + `","max_tokens":` + n + `,"messages":[{"role":"user","content":"hi"}]}`)
			resp := e.post(path, e.key, body)
			got := readAll(t, resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(got), "maximum") {
				t.Errorf("%s max_tokens %s: %d %s", path, n, resp.StatusCode, got)
			}
		}
	}
	resp := e.post("/v1/chat/completions", e.key, chatBody("openai/"+nativeModels["openai"], "hi", false, ""),
		"OpenAI-Organization", "org-someone-else", "OpenAI-Project", "proj_x")
	readAll(t, resp.Body)
	if h := e.lastRequest().Header; resp.StatusCode != 200 || h.Get("OpenAI-Organization") != "" || h.Get("OpenAI-Project") != "" {
		t.Errorf("status %d; the caller's organization headers reached OpenAI: %v", resp.StatusCode, h)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/dashboard/signin", strings.NewReader(url.Values{"key": {admin}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest(http.MethodGet, e.url+"/dashboard/activity?account=nonexistent", nil)
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/dashboard/activity?account=nonexistent: %d, want 404", resp.StatusCode)
	}
}
