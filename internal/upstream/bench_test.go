package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The resilience layer's cost per vendor call (go test -run '^$' -bench
// . -benchmem ./internal/upstream/): the breaker's admission and report,
// and a key pool's pick and release, both under their locks as every
// call takes them; and a whole call through Client.Do on a transport
// that answers at once (no network): the first-byte and idle timers,
// the breaker, a pool of keys, and a retry after a 503.

func BenchmarkBreaker(b *testing.B) {
	br := newBreaker(5, 30*time.Second)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		ok, probe, _ := br.allow(now)
		if !ok {
			b.Fatal("breaker open")
		}
		br.done(now, probe, outcomeOK, "")
	}
}

func BenchmarkPoolPick(b *testing.B) {
	for _, spread := range []string{SpreadWeighted, SpreadLeastInFlight} {
		b.Run(spread, func(b *testing.B) {
			p := newPool([]Key{{Name: "1", Secret: "a", Weight: 1}, {Name: "2", Secret: "b", Weight: 2}, {Name: "3", Secret: "c", Weight: 1}, {Name: "4", Secret: "d", Weight: 1}},
				spread, 5, 30*time.Second, 1)
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				l, err := p.pick(now, "openai", nil)
				if err != nil {
					b.Fatal(err)
				}
				p.release(now, l, outcomeOK, "")
			}
		})
	}
}

// answering is a transport that answers each call with the next status
// of its script (the last one repeating), a small JSON body.
type answering struct {
	statuses []int
	n        int
}

func (a *answering) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	status := a.statuses[min(a.n, len(a.statuses)-1)]
	a.n++
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"id":"x","usage":{"prompt_tokens":1,"completion_tokens":1}}`)), Request: r}, nil
}

func BenchmarkDo(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	for _, tc := range []struct {
		name     string
		statuses []int
		keys     []Key
	}{
		{"ok", []int{200}, nil},
		{"ok_pool", []int{200}, []Key{{Name: "1", Secret: "a", Weight: 1}, {Name: "2", Secret: "b", Weight: 1}}},
		{"retry_503", []int{503, 200}, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tr := &answering{statuses: tc.statuses}
			c := New("bench", Config{Transport: tr, Keys: tc.keys})
			c.sleep = noSleep
			req := &Request{Method: http.MethodPost, URL: "http://vendor.invalid/v1/chat/completions", Header: http.Header{"Content-Type": {"application/json"}}, Body: body,
				Auth: func(h http.Header, secret string) { h.Set("Authorization", "Bearer "+secret) }}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				tr.n = 0
				resp, err := c.Do(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
