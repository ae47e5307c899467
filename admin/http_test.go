package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTokenTooShort(t *testing.T) {
	if _, err := NewHandler(&Local{}, strings.Repeat("x", MinTokenLen-1), nil); err == nil {
		t.Fatal("a short token was accepted")
	}
}

// Ten failures from one address lock it out, even with the right token,
// until a minute after the first; another address is not affected.
func TestThrottle(t *testing.T) {
	token := strings.Repeat("k", MinTokenLen)
	h, err := NewHandler(&Local{}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	call := func(addr, tok string) int {
		r := httptest.NewRequest(http.MethodGet, "/admin/v1/nothing", nil)
		r.RemoteAddr = addr + ":5555"
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i := range maxFailures {
		if c := call("198.51.100.7", "wrong"); c != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, c)
		}
		now = now.Add(time.Second)
	}
	if c := call("198.51.100.7", token); c != http.StatusTooManyRequests {
		t.Fatalf("right token while locked out: %d, want 429", c)
	}
	if c := call("198.51.100.8", token); c != http.StatusNotFound { // authorised; the path is unknown
		t.Fatalf("another address: %d, want 404", c)
	}
	now = now.Add(failureWindow)
	if c := call("198.51.100.7", token); c != http.StatusNotFound {
		t.Fatalf("after the window: %d, want 404", c)
	}
}
