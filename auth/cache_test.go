package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// fakeKeys is a store of keys that counts its lookups.
type fakeKeys struct {
	mu      sync.Mutex
	keys    map[[32]byte]gw.Principal
	revoked map[string]bool
	lookups int
	fail    error
}

func (f *fakeKeys) KeyByHash(_ context.Context, h [32]byte) (*gw.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.fail != nil {
		return nil, f.fail
	}
	p, ok := f.keys[h]
	if !ok || f.revoked[p.KeyID] {
		return nil, gw.ErrNotFound
	}
	return &p, nil
}

func (f *fakeKeys) RevokeKey(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[id] = true
	return nil
}

func (f *fakeKeys) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

func newFake() (*fakeKeys, [32]byte) {
	h := Hash("gwk_one")
	return &fakeKeys{
		keys:    map[[32]byte]gw.Principal{h: {KeyID: "key_1", AccountID: "acct_1", RPM: 10}},
		revoked: map[string]bool{},
	}, h
}

func TestCacheServesRepeatLookups(t *testing.T) {
	store, h := newFake()
	c := NewCache(store, time.Minute)
	for i := range 5 {
		p, err := c.KeyByHash(t.Context(), h)
		if err != nil || p.KeyID != "key_1" || p.RPM != 10 {
			t.Fatalf("lookup %d = %+v, %v", i, p, err)
		}
		p.RPM = 999 // the caller's copy: must not reach the cache
	}
	if n := store.count(); n != 1 {
		t.Errorf("store lookups = %d, want 1", n)
	}
	if p, _ := c.KeyByHash(t.Context(), h); p.RPM != 10 {
		t.Errorf("cached principal changed by a caller: RPM %d", p.RPM)
	}
}

func TestCacheRevokeIsImmediateHere(t *testing.T) {
	store, h := newFake()
	c := NewCache(store, time.Hour)
	if _, err := c.KeyByHash(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if err := c.RevokeKey(t.Context(), "key_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeyByHash(t.Context(), h); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("lookup right after RevokeKey: err = %v, want ErrNotFound", err)
	}
}

func TestCacheRevokeElsewhereWithinTTL(t *testing.T) {
	store, h := newFake()
	c := NewCache(store, 5*time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	if _, err := c.KeyByHash(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	// Another instance revokes the key in the shared store.
	if err := store.RevokeKey(t.Context(), "key_1"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(4 * time.Second)
	if _, err := c.KeyByHash(t.Context(), h); err != nil {
		t.Errorf("within the TTL the cached key still works (documented), got %v", err)
	}
	now = now.Add(time.Second)
	if _, err := c.KeyByHash(t.Context(), h); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("at the TTL: err = %v, want ErrNotFound", err)
	}
	if _, err := c.KeyByHash(t.Context(), h); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("after the TTL: err = %v, want ErrNotFound", err)
	}
}

func TestCacheRemembersOnlyLiveKeys(t *testing.T) {
	store, h := newFake()
	c := NewCache(store, time.Hour)
	if _, err := c.KeyByHash(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	unknown := Hash("gwk_two")
	for range 3 {
		if _, err := c.KeyByHash(t.Context(), unknown); !errors.Is(err, gw.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := store.count(); n != 4 {
		t.Errorf("store lookups = %d, want 4 (the live key once, the unknown one each time)", n)
	}
	// A key created after a miss works at once.
	store.mu.Lock()
	store.keys[unknown] = gw.Principal{KeyID: "key_2"}
	store.mu.Unlock()
	if p, err := c.KeyByHash(t.Context(), unknown); err != nil || p.KeyID != "key_2" {
		t.Errorf("new key = %+v, %v", p, err)
	}
	// A store error is not cached either.
	store.mu.Lock()
	store.fail = errors.New("down")
	store.mu.Unlock()
	if _, err := c.KeyByHash(t.Context(), Hash("gwk_three")); err == nil {
		t.Error("store error swallowed")
	}
	if _, err := c.KeyByHash(t.Context(), h); err != nil {
		t.Errorf("cached key while the store is down: %v", err)
	}
}

func TestCacheIsBounded(t *testing.T) {
	store := &fakeKeys{keys: map[[32]byte]gw.Principal{}, revoked: map[string]bool{}}
	c := NewCache(store, time.Hour)
	c.size = 50
	for i := range 500 {
		h := Hash(string(rune('a'+i%26)) + time.Duration(i).String())
		store.keys[h] = gw.Principal{KeyID: "k"}
		if _, err := c.KeyByHash(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		if len(c.entries) > c.size {
			t.Fatalf("cache holds %d entries, cap %d", len(c.entries), c.size)
		}
	}
}

func TestCacheConcurrentRevoke(t *testing.T) {
	store, h := newFake()
	c := NewCache(store, time.Hour)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				c.KeyByHash(context.Background(), h)
			}
		})
	}
	if err := c.RevokeKey(t.Context(), "key_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeyByHash(t.Context(), h); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("lookup after RevokeKey returned, with lookups racing: %v", err)
	}
	wg.Wait()
	if _, err := c.KeyByHash(t.Context(), h); !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("after the racing lookups: %v", err)
	}
}
