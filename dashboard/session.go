package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

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
	if ss.Expires <= now.Unix() || !ss.Admin && ss.AccountID == "" {
		return session{}, errBadSession
	}
	return ss, nil
}
