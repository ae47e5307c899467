// Package auth issues API keys and authenticates callers.
//
// A key is "gwk_" followed by 43 base62 characters: 256 bits from
// crypto/rand. Only its SHA-256 is stored; the store compares hashes in
// constant time. The secret is shown once, when created.
//
// A Cache in front of the store remembers live keys for a few seconds
// (DefaultCacheTTL), so a request does not read the store for its key;
// a key's end is checked against the clock on every hit; a revocation
// through the Cache is immediate on its instance, and one made elsewhere
// (another instance, the CLI on the store) shows within the Watch
// interval (DefaultWatchInterval), which polls the store's one-row
// change counter.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// Prefix starts every API key.
const Prefix = "gwk_"

// secretLen is the number of base62 characters after the prefix:
// 43 x log2(62) = 256.03 bits.
const secretLen = 43

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n uniformly random base62 characters.
func randomBase62(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("read random: %w", err)
		}
		for _, b := range buf {
			// Rejection sampling keeps the distribution uniform:
			// 248 = 4 x 62.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out), nil
}

// NewKey returns a fresh secret key, its id and its hash.
func NewKey() (secret, id string, hash [32]byte, err error) {
	s, err := randomBase62(secretLen)
	if err != nil {
		return "", "", hash, err
	}
	rid, err := randomBase62(16)
	if err != nil {
		return "", "", hash, err
	}
	secret = Prefix + s
	return secret, "key_" + rid, Hash(secret), nil
}

// Hint returns the displayable start of a secret ("gwk_AbCd…").
func Hint(secret string) string {
	if len(secret) < len(Prefix)+4 {
		return Prefix + "…"
	}
	return secret[:len(Prefix)+4] + "…"
}

// Hash returns the stored form of a secret key. A key's length fits the
// stack buffer, so a request's hash allocates nothing (the conversion of
// a string longer than 32 bytes to []byte would).
func Hash(secret string) [32]byte {
	var buf [64]byte
	if len(secret) <= len(buf) {
		return sha256.Sum256(buf[:copy(buf[:], secret)])
	}
	return sha256.Sum256([]byte(secret))
}

// WellFormed reports whether s has the shape of a key.
func WellFormed(s string) bool {
	if len(s) != len(Prefix)+secretLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for i := len(Prefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// KeyLookup finds the principal of a live key by its hash.
type KeyLookup interface {
	KeyByHash(ctx context.Context, hash [32]byte) (*gw.Principal, error)
}

// Authenticator checks the Authorization header of a request.
type Authenticator struct {
	Keys KeyLookup
}

// Authenticate returns the caller for an "Authorization: Bearer <key>"
// header value. Missing, malformed, unknown and revoked keys are
// authentication_error; a store failure is internal_error.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (*gw.Principal, error) {
	if header == "" {
		return nil, &gw.Error{Code: gw.CodeAuthentication, Message: "missing Authorization header: send \"Authorization: Bearer <API key>\"", NoRetry: true}
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, &gw.Error{Code: gw.CodeAuthentication, Message: "malformed Authorization header: expected \"Bearer <API key>\"", NoRetry: true}
	}
	token = strings.TrimSpace(token)
	if !WellFormed(token) {
		return nil, &gw.Error{Code: gw.CodeAuthentication, Message: "malformed API key: keys start with " + Prefix, NoRetry: true}
	}
	p, err := a.Keys.KeyByHash(ctx, Hash(token))
	if errors.Is(err, gw.ErrNotFound) {
		return nil, &gw.Error{Code: gw.CodeAuthentication, Message: "invalid or revoked API key", NoRetry: true}
	}
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInternal, Message: "could not check the API key", Err: err}
	}
	return p, nil
}
