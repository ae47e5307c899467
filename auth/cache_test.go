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

// genKeys is fakeKeys with a change counter, like the stores'.
type genKeys struct {
	*fakeKeys
	gen int64
}

func (g *genKeys) KeyGeneration(context.Context) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gen, nil
}

// A key revoked on the store behind the cache's back (another instance,
// the CLI) is refused after the next poll of the generation, long before
// the TTL.
func TestCacheWatchForgetsOnStoreChange(t *testing.T) {
	f, h := newFake()
	store := &genKeys{fakeKeys: f}
	c := NewCache(store, time.Hour)
	ctx := t.Context()
	w := &watch{store: store}
	w.poll(ctx, nil)
	for range 2 {
		if _, err := c.KeyByHash(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d store lookups, want 1 (cached)", n)
	}
	if w.poll(ctx, c) {
		t.Fatal("an unchanged generation emptied the cache")
	}
	_ = f.RevokeKey(ctx, "key_1")
	store.mu.Lock()
	store.gen++
	store.mu.Unlock()
	if _, err := c.KeyByHash(ctx, h); err != nil {
		t.Fatal("before the poll the cached key still works (the poll is the bound)")
	}
	if !w.poll(ctx, c) {
		t.Fatal("a new generation did not empty the cache")
	}
	if _, err := c.KeyByHash(ctx, h); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("revoked on the store, after the poll: %v", err)
	}
}

// A cached key whose end (expiry, rotation grace) has passed is not
// served from the cache: the store is asked, at once.
func TestCacheChecksEndOnEveryHit(t *testing.T) {
	f, h := newFake()
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	p := f.keys[h]
	p.EndsAt = now.Add(time.Second)
	f.keys[h] = p
	c := NewCache(f, time.Hour)
	c.now = func() time.Time { return now }
	ctx := t.Context()
	if _, err := c.KeyByHash(ctx, h); err != nil {
		t.Fatal(err)
	}
	now = now.Add(999 * time.Millisecond)
	if _, err := c.KeyByHash(ctx, h); err != nil || f.count() != 1 {
		t.Fatalf("before its end: %v, %d lookups", err, f.count())
	}
	now = now.Add(time.Millisecond)
	_ = f.RevokeKey(ctx, "key_1") // the store's view at its end
	if _, err := c.KeyByHash(ctx, h); !errors.Is(err, gw.ErrNotFound) || f.count() != 2 {
		t.Fatalf("at its end: %v, %d lookups (want the store asked)", err, f.count())
	}
}
