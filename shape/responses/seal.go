package responses

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// SealPrefix starts every encrypted_content blob the gateway makes; a
// blob without it is another party's (OpenAI's own) and is not opened.
const SealPrefix = "gwr1."

// Sealer seals a vendor's reasoning state (canonical thinking parts with
// their signatures, redacted thinking, Gemini thought signatures,
// DeepSeek reasoning text) into an opaque encrypted_content blob and
// opens it again when the caller sends the item back: AES-256-GCM under
// the gateway's key, with the account id as additional data, so that a
// blob is unreadable, tamper-evident and good only for the account it
// was given to.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer with a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("responses: the seal key must be 32 bytes, not %d", len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: a}, nil
}

// sealedPart is a part's reasoning state (what a vendor needs back).
type sealedPart struct {
	T string `json:"t"`
	X string `json:"x,omitempty"`
	S string `json:"s,omitempty"`
	R string `json:"r,omitempty"`
}

// Seal returns the blob of parts for account.
func (s *Sealer) Seal(account string, parts []gw.Part) (string, error) {
	sp := make([]sealedPart, 0, len(parts))
	for _, p := range parts {
		sp = append(sp, sealedPart{T: string(p.Type), X: p.Text, S: p.Signature, R: p.RedactedData})
	}
	plain, err := json.Marshal(sp)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, plain, []byte(account))
	return SealPrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// errSeal is what a blob of the gateway's that does not open says.
var errSeal = errors.New("not a valid reasoning blob of this gateway for this account (altered, expired key, or another account's)")

// Open returns the parts sealed in blob for account; ours false when the
// blob is not the gateway's.
func (s *Sealer) Open(account, blob string) ([]gw.Part, bool, error) {
	rest, ours := strings.CutPrefix(blob, SealPrefix)
	if !ours {
		return nil, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, true, errSeal
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(account))
	if err != nil {
		return nil, true, errSeal
	}
	var sp []sealedPart
	if err := json.Unmarshal(plain, &sp); err != nil {
		return nil, true, errSeal
	}
	parts := make([]gw.Part, 0, len(sp))
	for _, p := range sp {
		switch gw.PartType(p.T) {
		case gw.PartThinking:
			parts = append(parts, gw.Part{Type: gw.PartThinking, Text: p.X, Signature: p.S})
		case gw.PartRedactedThinking:
			parts = append(parts, gw.Part{Type: gw.PartRedactedThinking, RedactedData: p.R})
		}
	}
	return parts, true, nil
}

// For returns Meta.Seal and an Opener bound to account.
func (s *Sealer) For(account string) (seal func([]gw.Part) (string, error), open Opener) {
	return func(p []gw.Part) (string, error) { return s.Seal(account, p) },
		func(blob string) ([]gw.Part, bool, error) { return s.Open(account, blob) }
}
