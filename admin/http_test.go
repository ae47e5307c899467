package admin

import (
	"encoding/json"
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
	if c := call("198.51.100.7", "wrong again"); c != http.StatusTooManyRequests {
		t.Fatalf("wrong token while locked out: %d, want 429", c)
	}
	// The failures are throttled, never the holder: the right token from
	// the same address gets in.
	if c := call("198.51.100.7", token); c != http.StatusNotFound {
		t.Fatalf("right token while the address is throttled: %d, want 404", c)
	}
	if c := call("198.51.100.8", token); c != http.StatusNotFound { // authorised; the path is unknown
		t.Fatalf("another address: %d, want 404", c)
	}
	now = now.Add(failureWindow)
	if c := call("198.51.100.7", token); c != http.StatusNotFound {
		t.Fatalf("after the window: %d, want 404", c)
	}
}

// Errors carry the call's request_id (also its header), and a body of
// the wrong JSON type names the JSON field and types, never Go's.
func TestErrorsNameFieldsAndCarryRequestID(t *testing.T) {
	token := strings.Repeat("k", MinTokenLen)
	h, err := NewHandler(&Local{}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path, body, want string
	}{
		{"POST", "/admin/v1/keys", `{"account":"a","rpm":"lots"}`, "rpm must be an integer, not a string"},
		{"POST", "/admin/v1/keys", `{"account":"a","guard":{"mode":1}}`, "guard.mode must be a string, not a number"},
		{"POST", "/admin/v1/keys", `{"account":"a","expires_at":5}`, "expires_at must be an RFC 3339 time string"},
		{"PATCH", "/admin/v1/keys/key_1", `{"models":"openai/*"}`, "models must be an array, not a string"},
		{"POST", "/admin/v1/keys", `{"acount":"a"}`, `unknown field "acount"`},
		{"POST", "/admin/v1/keys", `[1]`, "want a JSON object, not an array"},
		{"POST", "/admin/v1/keys", `{"account":`, "the JSON ends early"},
		{"POST", "/admin/v1/incidents/inc_1/review", `{"verdict":"maybe"}`, "verdict must be false-positive or confirmed"},
	} {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var env struct {
			Error struct {
				Message   string `json:"message"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s %s: %v", c.method, c.body, err)
		}
		if w.Code != http.StatusBadRequest || !strings.Contains(env.Error.Message, c.want) {
			t.Errorf("%s %s: %d %q, want %q", c.method, c.body, w.Code, env.Error.Message, c.want)
		}
		if strings.Contains(env.Error.Message, "Go ") || strings.Contains(env.Error.Message, "KeyRequest") || strings.Contains(env.Error.Message, "int64") {
			t.Errorf("%s: a Go name in %q", c.body, env.Error.Message)
		}
		if rid := w.Header().Get(HeaderRequestID); !strings.HasPrefix(rid, "req_") || env.Error.RequestID != rid {
			t.Errorf("%s: request_id %q, header %q", c.body, env.Error.RequestID, rid)
		}
	}
}
