package fakevendor

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRecorderCapturesRequests(t *testing.T) {
	s := startServer(t)
	_, _, body := send(t, s, "openai", "gpt-x", "first", reqOpts{})
	_, _, gbody := send(t, s, "google", "gemini-x", "second", reqOpts{stream: true})
	send(t, s, "anthropic", "claude-x", "third", reqOpts{key: "wrong"})
	rs := s.Requests()
	if len(rs) != 3 {
		t.Fatalf("%d requests recorded", len(rs))
	}
	want := []struct {
		vendor, path, query string
		body                []byte
		status              int
	}{
		{"openai", "/v1/chat/completions", "", body, 200},
		{"google", "/v1beta/models/gemini-x:streamGenerateContent", "alt=sse", gbody, 200},
		{"anthropic", "/v1/messages", "", nil, 401},
	}
	for i, w := range want {
		r := rs[i]
		if r.Vendor != w.vendor || r.Path != w.path || r.RawQuery != w.query || r.Method != "POST" || r.Status != w.status || !r.Done || r.Cancelled {
			t.Errorf("request %d = %+v", i, r)
		}
		if w.body != nil && !bytes.Equal(r.Body, w.body) {
			t.Errorf("request %d body = %s", i, r.Body)
		}
		if r.Time.IsZero() || (i > 0 && r.Time.Before(rs[i-1].Time)) {
			t.Errorf("request %d time %v", i, r.Time)
		}
	}
	if got := rs[0].Header.Get("Authorization"); got != "Bearer fake-openai-key" {
		t.Errorf("header not captured: %q", got)
	}
	if got := rs[2].Header.Get("X-Api-Key"); got != "wrong" {
		t.Errorf("anthropic key header = %q", got)
	}
	// Requests returns copies.
	rs[0].Body[0] = 'X'
	rs[0].Header.Set("Authorization", "changed")
	if again := s.Requests(); again[0].Body[0] == 'X' || again[0].Header.Get("Authorization") == "changed" {
		t.Error("Requests shares memory with the recorder")
	}
	s.Reset()
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests after Reset", n)
	}
}

func TestClientLeavingMidStreamIsCancelled(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := nativeBody("openai", "gpt-x", "[fake:delay=30ms]", reqOpts{stream: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, nativeURL(s, "openai", "gpt-x", true), bytes.NewReader(body))
	authorize(req, "openai", "", false)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q: %v", line, err)
	}
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := s.WaitCancelled(wctx, 1); err != nil {
		t.Fatal(err)
	}
	if r := s.Requests()[0]; r.Status != 200 || !r.Cancelled {
		t.Errorf("record %+v", r)
	}
}

func TestWaitCancelledHonoursContext(t *testing.T) {
	s := NewHandler()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.WaitCancelled(ctx, 1); err == nil {
		t.Error("WaitCancelled returned nil with nothing cancelled")
	}
}

func TestHandlerWorksUnderHTTPTest(t *testing.T) {
	h := NewHandler()
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	if h.URL() != "" || h.BaseURL("openai") != "/openai/v1" {
		t.Errorf("unstarted handler URL %q base %q", h.URL(), h.BaseURL("openai"))
	}
	body := nativeBody("mistral", "mistral-x", "hi", reqOpts{})
	req, _ := http.NewRequest(http.MethodPost, BaseURLAt(ts.URL, "mistral")+"/chat/completions", bytes.NewReader(body))
	authorize(req, "mistral", "", false)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(h.Requests()) != 1 {
		t.Errorf("status %d, %d recorded", resp.StatusCode, len(h.Requests()))
	}
}

func TestEnvPointsEveryVendorHere(t *testing.T) {
	s := startServer(t)
	env := s.Env()
	if len(env) != 18 {
		t.Fatalf("%d entries", len(env))
	}
	if env["GATEWAY_DEEPSEEK_BASE_URL"] != s.URL()+"/deepseek" || env["GATEWAY_OPENROUTER_API_KEY"] != "fake-openrouter-key" {
		t.Errorf("env %v", env)
	}
}

func TestAnthropicCountTokens(t *testing.T) {
	s := startServer(t)
	body := []byte(`{"model":"claude-x","messages":[{"role":"user","content":"count me"}]}`)
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL("anthropic")+"/v1/messages/count_tokens", bytes.NewReader(body))
	authorize(req, "anthropic", "", true)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := jsonDecode(resp, &out); err != nil || out.InputTokens != PromptTokens(body) {
		t.Errorf("count_tokens = %+v, %v", out, err)
	}
}

func TestConcurrentCallsAreAllRecordedAndFailFirstIsExact(t *testing.T) {
	s := startServer(t)
	const n = 40
	statuses := make(chan int, n)
	for i := range n {
		go func() {
			body := nativeBody("groq", "m", "[fake:fail-first=5]", reqOpts{stream: i%2 == 0})
			req, _ := http.NewRequest(http.MethodPost, nativeURL(s, "groq", "m", i%2 == 0), bytes.NewReader(body))
			authorize(req, "groq", "", false)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	failed := 0
	for range n {
		switch st := <-statuses; st {
		case 503:
			failed++
		case 200:
		default:
			t.Errorf("status %d", st)
		}
	}
	if failed != 5 {
		t.Errorf("%d calls failed, want exactly 5", failed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitDone(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Requests()); got != n {
		t.Errorf("%d recorded, want %d", got, n)
	}
}
