package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/proxy"
)

// Issue 29 item 6 (before -> after), the parts TestCountTokensGoverned
// does not show: a count's body had only the chat endpoints' 32 MiB
// limit (a 30 MB count was read, guarded and tokenized); now counts have
// their own (GATEWAY_MAX_COUNT_BODY_BYTES, 64 KiB here: 413 past it,
// while the same body on /v1/messages is served). POST
// /v1/responses/input_tokens, the other count endpoint, was not rate
// limited nor guarded at all; now it has the counts' bucket (3 of 5 pass
// on an rpm=3 key), the allow list and the guard. A blocked count left an
// incident whose request id named no record; now the block is recorded
// (403 request_blocked, never billed, noted count_tokens) under the
// incident's request id, and the vendor sees nothing.
func TestCountEndpointsGoverned(t *testing.T) {
	e := newEnv(t, func(c *app.Config) {
		c.RPM = 0
		c.MaxCountBodyBytes = 64 << 10
	})
	ctx := context.Background()
	st := e.m.Store()
	anth := "anthropic/" + nativeModels["anthropic"]
	inputTokens := func(model, text string) []byte {
		return []byte(`{"model":` + quote(model) + `,"input":` + quote(text) + `}`)
	}

	t.Run("a body limit of its own", func(t *testing.T) {
		big := strings.Repeat("count me ", 100<<10/9)
		for path, body := range map[string][]byte{
			"/v1/messages/count_tokens":  messagesBody(anth, big, false, ""),
			"/v1/responses/input_tokens": inputTokens(anth, big),
		} {
			resp := e.post(path, e.key, body)
			b := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "65536") {
				t.Errorf("%s, %d bytes: %d %s; want 413 naming the 65,536-byte limit", path, len(body), resp.StatusCode, b)
			}
		}
		resp := e.post("/v1/messages", e.key, messagesBody(anth, big, false, ""))
		if b := readAll(t, resp.Body); resp.StatusCode != http.StatusOK {
			t.Errorf("the same body on /v1/messages: %d %s; want it served", resp.StatusCode, b)
		}
	})

	t.Run("input_tokens: the counts' bucket and the allow list", func(t *testing.T) {
		secret, _, err := createKeyWithLimits(ctx, st, uniqueAccount("input-tokens"), gw.USD, gw.Limit{RPM: 3})
		if err != nil {
			t.Fatal(err)
		}
		var codes []int
		for range 5 {
			resp := e.post("/v1/responses/input_tokens", secret, inputTokens("groq/llama-3.3-70b-versatile", "count me"))
			readAll(t, resp.Body)
			codes = append(codes, resp.StatusCode)
		}
		if fmt.Sprint(codes) != "[200 200 200 429 429]" {
			t.Errorf("rpm=3 key, five counts: %v; want [200 200 200 429 429]", codes)
		}
		acct, _ := st.EnsureAccount(ctx, uniqueAccount("input-tokens-allow"))
		secret2, _, err := createKeyModels(ctx, st, acct.ID, []string{"openai/gpt-6-sol"})
		if err != nil {
			t.Fatal(err)
		}
		resp := e.post("/v1/responses/input_tokens", secret2, inputTokens(anth, "count me"))
		if b := readAll(t, resp.Body); resp.StatusCode != 400 || !strings.Contains(string(b), "not allowed for this API key") {
			t.Errorf("allow list: %d %s; want 400", resp.StatusCode, b)
		}
	})

	t.Run("a blocked count is recorded under its incident's request id", func(t *testing.T) {
		secret, k, err := createKey(ctx, st, uniqueAccount("count-blocked"), gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		e.fake.Reset()
		for path, body := range map[string][]byte{
			"/v1/messages/count_tokens":  messagesBody(anth, attack, false, ""),
			"/v1/responses/input_tokens": inputTokens(anth, attack),
		} {
			resp := e.post(path, secret, body)
			b := readAll(t, resp.Body)
			rid := resp.Header.Get("X-Gateway-Request-Id")
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "incident_id") {
				t.Fatalf("%s: %d %s; want 403 with an incident id", path, resp.StatusCode, b)
			}
			rec := waitRecord(t, st, rid)
			if rec.Status != 403 || rec.ErrorCode != gw.CodeRequestBlocked || rec.Charge != 0 || rec.KeyID != k.ID || !strings.Contains(rec.Note, proxy.NoteCountTokens) || !strings.HasPrefix(rec.Guard, "flagged:") {
				t.Errorf("%s: record %+v; want 403 request_blocked, no charge, noted count_tokens", path, rec)
			}
			incs, err := st.Incidents(ctx, 20)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, in := range incs {
				found = found || in.RequestID == rid && in.KeyID == k.ID
			}
			if !found {
				t.Errorf("%s: no incident under request id %s", path, rid)
			}
		}
		if n := len(e.fake.Requests()); n != 0 {
			t.Errorf("the vendor was sent %d requests for blocked counts", n)
		}
	})
}

// createKeyModels makes a key of account allowed only models.
func createKeyModels(ctx context.Context, st gw.Store, account string, models []string) (string, *gw.Key, error) {
	secret, id, hash, err := auth.NewKey()
	if err != nil {
		return "", nil, err
	}
	k := &gw.Key{ID: id, AccountID: account, Hint: "x", Models: models}
	return secret, k, st.CreateKey(ctx, k, hash)
}

// dialNoRead opens a connection to the gateway whose receive buffer is
// as small as the kernel allows: a caller that never reads fills it at
// once and the gateway's writes block.
func dialNoRead(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rawRequest is an HTTP/1.1 POST of body with the key.
func rawRequest(path, key string, body []byte) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, key, len(body), body)
}

// Issue 29 item 6, write time-outs (GATEWAY_WRITE_TIMEOUT, 300 ms
// here): a caller that never reads its answers cannot hold a
// connection, its goroutine and the answer's memory. On count_tokens,
// whose answers are small, such a caller pipelines counts without
// reading until the gateway's writes block: the gateway gives the
// connection up (the caller's next write fails: reset). On a chat
// endpoint an 8 MB non-streaming answer that is never read: the
// handler returns (its access-log line is written) and the connection
// is closed with most of the answer undelivered. Without the time-out
// both would wait for the caller for ever.
func TestWriteTimeoutFreesConnection(t *testing.T) {
	s := newScripted(t)
	e := newEnv(t, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		c.CountTokensRPM = 1 << 40
		c.WriteTimeout = 300 * time.Millisecond
		c.Vendors["groq"] = app.VendorConfig{BaseURL: s.srv.URL, APIKey: "k"}
	})
	addr := strings.TrimPrefix(e.url, "http://")
	// How long the test waits for the gateway to let go: far past the
	// time-out, so that a loaded machine cannot fail it, and a hang
	// (no time-out) fails it instead of blocking the suite.
	const patience = 2 * time.Minute

	t.Run("count_tokens", func(t *testing.T) {
		conn := dialNoRead(t, addr)
		req := rawRequest("/v1/messages/count_tokens", e.key, messagesBody("groq/llama-3.3-70b-versatile", "count me", false, ""))
		done := make(chan error, 1)
		var sent atomic.Int64
		go func() {
			w := bufio.NewWriterSize(conn, 64<<10)
			for sent.Load() < 1_000_000 {
				if _, err := w.Write(req); err != nil {
					done <- err
					return
				}
				sent.Add(1)
			}
			done <- w.Flush()
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("a million counts were taken without reading an answer")
			}
			t.Logf("the gateway gave the connection up after %d pipelined counts: %v", sent.Load(), err)
		case <-time.After(patience):
			t.Fatalf("after %v the gateway still held the connection of a caller that never reads (%d counts sent)", patience, sent.Load())
		}
	})

	t.Run("non-streaming chat answer", func(t *testing.T) {
		const size = 8 << 20
		s.script("big", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":100}}`, strings.Repeat("x", size))
		})
		ctx := context.Background()
		secret, k, err := createKey(ctx, e.m.Store(), uniqueAccount("noread"), 10*gw.USD)
		if err != nil {
			t.Fatal(err)
		}
		conn := dialNoRead(t, addr)
		if _, err := conn.Write(rawRequest("/v1/chat/completions", secret, chatBody("groq/llama-3.3-70b-versatile", "hi [case:big]", false, `,"max_tokens":100`))); err != nil {
			t.Fatal(err)
		}
		// The handler's access-log line is written when it returns.
		line := "key_id=" + k.ID
		deadline := time.Now().Add(patience)
		for !strings.Contains(e.logs.String(), line) {
			if time.Now().After(deadline) {
				t.Fatalf("after %v the handler still waited on a caller that never reads", patience)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// The connection is closed: what the kernel still holds, then
		// the end; most of the answer never left.
		_ = conn.SetReadDeadline(time.Now().Add(patience))
		n, err := io.Copy(io.Discard, conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the connection stayed open (%d bytes read)", n)
		}
		if n >= size {
			t.Errorf("the whole answer was delivered (%d bytes): the write never blocked", n)
		}
		t.Logf("the caller got %d of the answer's %d bytes before the connection closed (%v)", n, size, err)
	})
}
