package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// MinAdminTokenLen is the shortest admin token accepted: a token is the
// only thing between the internet and every account's records.
const MinAdminTokenLen = 32

// Sign-in throttling: attempts per client address per minute.
const defaultSignInPerMinute = 10

// cookieName names the session cookie.
const cookieName = "gw_dashboard"

// sessionVersion starts every session value, so that a change of format
// invalidates old cookies instead of misreading them.
const sessionVersion = "v1"

// session is what the signed cookie carries: who signed in and until
// when. It never holds the API key or the admin token.
type session struct {
	// Admin marks a sign-in with the admin token: every account.
	Admin bool `json:"adm,omitempty"`
	// AccountID and KeyID name the account and the key used to sign in.
	AccountID string `json:"acc,omitempty"`
	KeyID     string `json:"key,omitempty"`
	// Expires is the session's end, in Unix seconds.
	Expires int64 `json:"exp"`
	// ID names the session, so that signing out ends it on the server
	// (the cookie alone would stay valid until it expires).
	ID string `json:"sid,omitempty"`
}

// newSessionID draws a session id.
func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// revocations remembers the sessions signed out, until they expire
// anyway. Sessions live in this process only (the signing secret is drawn
// at start), so this process's memory is where they end.
type revocations struct {
	mu sync.Mutex
	m  map[string]int64 // session id -> expiry (Unix seconds)
}

func (r *revocations) revoke(id string, exp int64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]int64{}
	}
	for k, e := range r.m {
		if e <= now.Unix() {
			delete(r.m, k)
		}
	}
	r.m[id] = exp
}

func (r *revocations) revoked(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[id]
	return ok
}

// proxies says which peers are trusted reverse proxies, whose
// X-Forwarded-For and X-Forwarded-Proto are believed.
type proxies []netip.Prefix

func (p proxies) trusted(a netip.Addr) bool {
	for _, pr := range p {
		if pr.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

func peer(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// client is the address a request came from: the peer, or behind trusted
// proxies the nearest untrusted address of X-Forwarded-For.
func (p proxies) client(r *http.Request) string {
	a := peer(r)
	if !p.trusted(a) {
		return a.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		a = h.Unmap()
		if !p.trusted(a) {
			break
		}
	}
	return a.String()
}

// overTLS reports whether the browser reached the gateway over TLS:
// directly, or at a trusted proxy that says so in X-Forwarded-Proto.
func (p proxies) overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !p.trusted(peer(r)) {
		return false
	}
	v := r.Header.Values("X-Forwarded-Proto")
	if len(v) == 0 {
		return false
	}
	last := strings.Split(v[len(v)-1], ",")
	return strings.EqualFold(strings.TrimSpace(last[len(last)-1]), "https")
}

// throttle counts a failed sign-in from addr; false when the address is
// over its attempts per minute (retry after the duration).
func (d *Dashboard) throttle(ctx context.Context, addr string) (bool, time.Duration) {
	dec, err := d.signInLimiter.Allow(ctx, "dashboard-signin:"+addr, gw.Limit{RPM: d.signInPerMinute}, 0)
	if err != nil {
		d.log.WarnContext(ctx, "dashboard sign-in limiter", "err", err)
	}
	return dec.Allowed, dec.RetryAfter
}

// errBadSession is returned for any session value that does not verify;
// the reason is deliberately not told apart.
var errBadSession = errors.New("invalid session")

// sealer signs and verifies session values with HMAC-SHA256.
type sealer struct {
	secret []byte
}

// mac returns the HMAC of msg.
func (s sealer) mac(msg string) []byte {
	h := hmac.New(sha256.New, s.secret)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// seal returns the cookie value for ss: "v1.<payload>.<mac>", both parts
// base64url without padding, the MAC covering "v1.<payload>".
func (s sealer) seal(ss session) (string, error) {
	b, err := json.Marshal(ss)
	if err != nil {
		return "", fmt.Errorf("encode session: %w", err)
	}
	msg := sessionVersion + "." + base64.RawURLEncoding.EncodeToString(b)
	return msg + "." + base64.RawURLEncoding.EncodeToString(s.mac(msg)), nil
}

// open verifies value and returns its session if it is authentic and
// not expired at now.
func (s sealer) open(value string, now time.Time) (session, error) {
	var ss session
	i := strings.LastIndexByte(value, '.')
	if i < 0 || !strings.HasPrefix(value, sessionVersion+".") {
		return ss, errBadSession
	}
	msg, sig := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(msg)) {
		return ss, errBadSession
	}
	payload, err := base64.RawURLEncoding.DecodeString(msg[len(sessionVersion)+1:])
	if err != nil {
		return ss, errBadSession
	}
	if err := json.Unmarshal(payload, &ss); err != nil {
		return ss, errBadSession
	}
	if ss.Expires <= now.Unix() || !ss.Admin && ss.AccountID == "" || ss.ID == "" {
		return session{}, errBadSession
	}
	return ss, nil
}
