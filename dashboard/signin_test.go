package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestSignInThrottled: an address gets defaultSignInPerMinute failed
// attempts a minute; then a wrong key gets 429 with Retry-After, while a
// valid key from the same address still signs in (the failures are
// throttled, never the holder), and another address is unaffected.
func TestSignInThrottled(t *testing.T) {
	fx := newFixture(t)
	for i := 0; i < defaultSignInPerMinute; i++ {
		if w := fx.signIn("gwk_wrong"); w.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: status %d", i, w.Code)
		}
	}
	w := fx.signIn("gwk_wrong_again")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("attempt past the limit: status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := fx.signIn(alphaKey); w.Code != http.StatusSeeOther {
		t.Fatalf("a valid key from the throttled address: status %d", w.Code)
	}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/signin", strings.NewReader("key="+alphaKey))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "198.51.100.1:5555"
	if w := fx.serve(req); w.Code != http.StatusSeeOther {
		t.Fatalf("another address: status %d", w.Code)
	}
}

// TestSignOutEndsSession: after sign-out the same cookie is refused.
func TestSignOutEndsSession(t *testing.T) {
	fx := newFixture(t)
	c := fx.session(alphaKey)
	get := func() int {
		req := httptest.NewRequest(http.MethodGet, "/dashboard/logs", nil)
		req.AddCookie(c)
		return fx.serve(req).Code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("signed in: %d", code)
	}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/signout", nil)
	req.AddCookie(c)
	fx.serve(req)
	if code := get(); code != http.StatusSeeOther {
		t.Fatalf("the signed-out cookie: %d, want a redirect to sign-in", code)
	}
}

func TestAdminTokenLength(t *testing.T) {
	if _, err := New(Config{Store: newFakeStore(), AdminToken: strings.Repeat("x", MinAdminTokenLen-1)}); err == nil {
		t.Fatal("a short admin token was accepted")
	}
	if _, err := New(Config{Store: newFakeStore(), AdminToken: strings.Repeat("x", MinAdminTokenLen)}); err != nil {
		t.Fatal(err)
	}
}

func TestProxies(t *testing.T) {
	p := proxies{netip.MustParsePrefix("10.0.0.0/8")}
	req := func(remote, xff, proto string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		if proto != "" {
			r.Header.Set("X-Forwarded-Proto", proto)
		}
		return r
	}
	tests := []struct {
		remote, xff, proto string
		client             string
		tls                bool
	}{
		{"203.0.113.5:1", "", "", "203.0.113.5", false},
		{"203.0.113.5:1", "1.2.3.4", "https", "203.0.113.5", false}, // untrusted peer: headers ignored
		{"10.1.2.3:1", "1.2.3.4", "https", "1.2.3.4", true},
		{"10.1.2.3:1", "6.6.6.6, 1.2.3.4, 10.9.9.9", "http", "1.2.3.4", false}, // nearest untrusted hop
		{"10.1.2.3:1", "", "", "10.1.2.3", false},
	}
	for _, tt := range tests {
		r := req(tt.remote, tt.xff, tt.proto)
		if got := p.client(r); got != tt.client {
			t.Errorf("%+v: client %q", tt, got)
		}
		if got := p.overTLS(r); got != tt.tls {
			t.Errorf("%+v: overTLS %v", tt, got)
		}
	}
}
