package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []int
		retryAfter string
		wantCalls  int32
		wantStatus int
	}{
		{"ok at once", []int{200}, "", 1, 200},
		{"503 then ok", []int{503, 200}, "", 2, 200},
		{"529 twice then ok", []int{529, 529, 200}, "", 3, 200},
		{"gives up after max retries", []int{500, 500, 500, 200}, "", 3, 500},
		{"400 not retried", []int{400, 200}, "", 1, 400},
		{"429 with short retry-after retried", []int{429, 200}, "1", 2, 200},
		{"429 asking too long answered", []int{429, 200}, "60", 1, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				b, _ := io.ReadAll(r.Body)
				if string(b) != "payload" {
					t.Errorf("attempt %d body %q", n, b)
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.statuses[min(int(n)-1, len(tt.statuses)-1)])
			}))
			defer srv.Close()
			c := New("test", Config{MaxRetries: 2})
			c.sleep = noSleep
			resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL, Body: []byte("payload")})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || calls.Load() != tt.wantCalls {
				t.Fatalf("status %d after %d calls, want %d after %d", resp.StatusCode, calls.Load(), tt.wantStatus, tt.wantCalls)
			}
		})
	}
}

func TestConnectRefusedIsRetriedThenUpstreamError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := New("acme", Config{MaxRetries: 1})
	var slept int
	c.sleep = func(ctx context.Context, d time.Duration) error { slept++; return nil }
	_, err := c.Do(context.Background(), &Request{Method: "POST", URL: "http://" + addr})
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeUpstream || slept != 1 {
		t.Fatalf("err %v after %d sleeps", err, slept)
	}
	if e.Message != "acme: could not reach the vendor" {
		t.Fatalf("message %q leaks detail", e.Message)
	}
}

func TestTimeouts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		w.Write([]byte("a"))
		w.(http.Flusher).Flush()
		select { // then silence
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	c := New("v", Config{FirstByteTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond, MaxRetries: -1})
	_, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + "/slow"})
	if gw.ErrorCode(err) != gw.CodeUpstreamTimeout {
		t.Fatalf("first byte: %v", err)
	}
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + "/silent"})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	if gw.ErrorCode(err) != gw.CodeUpstreamTimeout {
		t.Fatalf("idle: %v", err)
	}
}

func TestStatusError(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "3")
	tests := []struct {
		status int
		code   gw.Code
	}{
		{400, gw.CodeInvalidRequest}, {422, gw.CodeInvalidRequest}, {401, gw.CodeUpstream}, {403, gw.CodeUpstream},
		{402, gw.CodeUpstream}, {404, gw.CodeNotFound}, {408, gw.CodeUpstreamTimeout}, {413, gw.CodeRequestTooLarge},
		{429, gw.CodeRateLimited}, {500, gw.CodeUpstream}, {502, gw.CodeUpstream}, {503, gw.CodeOverloaded},
		{504, gw.CodeUpstreamTimeout}, {529, gw.CodeOverloaded},
	}
	for _, tt := range tests {
		e := StatusError("v", tt.status, h, "Incorrect API key provided: sk-abc")
		if e.Code != tt.code {
			t.Errorf("%d -> %s, want %s", tt.status, e.Code, tt.code)
		}
		if (tt.status == 401 || tt.status == 403) && e.Message != "v: the vendor refused the gateway's credentials" {
			t.Errorf("%d leaks the vendor message: %q", tt.status, e.Message)
		}
		if tt.status == 429 && e.RetryAfter != 3*time.Second {
			t.Errorf("429 RetryAfter = %v", e.RetryAfter)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		hdr  map[string]string
		want time.Duration
		ok   bool
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"ms wins", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "7"}, 1500 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(9 * time.Second).Format(http.TimeFormat)}, 9 * time.Second, true},
		{"openai reset", map[string]string{"X-Ratelimit-Reset-Requests": "1m30s", "X-Ratelimit-Reset-Tokens": "6s"}, 90 * time.Second, true},
		{"anthropic reset", map[string]string{"Anthropic-Ratelimit-Requests-Reset": now.Add(12 * time.Second).Format(time.RFC3339)}, 12 * time.Second, true},
		{"none", map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.hdr {
			h.Set(k, v)
		}
		got, ok := RetryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// Issue 21.3: the idle timer measures the vendor only. A consumer that
// takes longer than the idle timeout between reads (a slow caller) does
// not trip it while the vendor keeps sending.
func TestIdleTimerIgnoresSlowConsumer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for range 8 { // never silent for more than 20ms
			w.Write([]byte("data: x\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c := New("v", Config{FirstByteTimeout: time.Second, IdleTimeout: 60 * time.Millisecond, MaxRetries: -1})
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 9)
	for {
		time.Sleep(120 * time.Millisecond) // longer than the idle timeout
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
	}
	if len(got) != 72 {
		t.Fatalf("read %d bytes, want 72", len(got))
	}
}

// A vendor's redirect is followed as http.Client follows it (the
// transport is called directly otherwise): a 307 resends the body.
func TestRedirectFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || string(b) != "payload" || r.Header.Get("X-Test") != "kept" {
			t.Errorf("redirected call: %s %q, header %q", r.Method, b, r.Header.Get("X-Test"))
		}
		_, _ = io.WriteString(w, "moved here")
	}))
	defer srv.Close()
	c := New("test", Config{})
	resp, err := c.Do(context.Background(), &Request{Method: "POST", URL: srv.URL + "/old", Header: http.Header{"X-Test": {"kept"}}, Body: []byte("payload")})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "moved here" {
		t.Fatalf("status %d body %q", resp.StatusCode, b)
	}
}

// A transport failure names the call as http.Client does (a *url.Error),
// which the vendors' error redaction relies on.
func TestTransportErrorIsURLError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := New("test", Config{MaxRetries: -1})
	hr, _ := http.NewRequest("POST", "http://"+addr+"/x", nil)
	_, err = c.roundTrip(hr, &Request{})
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Op != "Post" || ue.URL != "http://"+addr+"/x" {
		t.Fatalf("err = %#v, want a *url.Error for Post", err)
	}
}
