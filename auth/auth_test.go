package auth

import (
	"context"
	"errors"
	"testing"

	gw "github.com/gwlabs/gateway"
)

type lookup func(ctx context.Context, hash [32]byte) (*gw.Principal, error)

func (f lookup) KeyByHash(ctx context.Context, hash [32]byte) (*gw.Principal, error) {
	return f(ctx, hash)
}

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		secret, id, hash, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if !WellFormed(secret) {
			t.Fatalf("key %q not well formed", secret)
		}
		if len(secret) != 47 {
			t.Fatalf("len = %d, want 47", len(secret))
		}
		if hash != Hash(secret) {
			t.Fatal("hash mismatch")
		}
		if seen[secret] || seen[id] {
			t.Fatal("repeated key or id")
		}
		seen[secret], seen[id] = true, true
	}
}

func TestAuthenticate(t *testing.T) {
	secret, _, hash, _ := NewKey()
	other, _, _, _ := NewKey()
	storeErr := errors.New("disk on fire")
	a := &Authenticator{Keys: lookup(func(_ context.Context, h [32]byte) (*gw.Principal, error) {
		if h == hash {
			return &gw.Principal{KeyID: "k1", AccountID: "a1"}, nil
		}
		if h == Hash(Prefix+"0000000000000000000000000000000000000000000") {
			return nil, storeErr
		}
		return nil, gw.ErrNotFound
	})}
	tests := []struct {
		name   string
		header string
		want   gw.Code
	}{
		{"valid", "Bearer " + secret, ""},
		{"lowercase scheme", "bearer " + secret, ""},
		{"missing", "", gw.CodeAuthentication},
		{"no scheme", secret, gw.CodeAuthentication},
		{"basic scheme", "Basic " + secret, gw.CodeAuthentication},
		{"wrong prefix", "Bearer sk-" + secret[4:], gw.CodeAuthentication},
		{"short", "Bearer " + secret[:20], gw.CodeAuthentication},
		{"bad char", "Bearer " + secret[:46] + "!", gw.CodeAuthentication},
		{"unknown", "Bearer " + other, gw.CodeAuthentication},
		{"store down", "Bearer " + Prefix + "0000000000000000000000000000000000000000000", gw.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tt.header)
			if got := gw.ErrorCode(err); got != tt.want {
				t.Fatalf("code = %q, want %q (err %v)", got, tt.want, err)
			}
			if tt.want == "" && p.KeyID != "k1" {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
}
