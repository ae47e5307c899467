package auth

import (
	"context"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// DefaultCacheTTL is how long a Cache trusts a live key before asking the
// store again: without Watch, the longest a key revoked on another
// instance (or by the admin command) keeps working on this one.
const DefaultCacheTTL = 5 * time.Second

// DefaultWatchInterval is how often Watch reads the store's key
// generation: with it, a change made anywhere reaches this instance's
// cache within this interval (plus one read of one row).
const DefaultWatchInterval = 200 * time.Millisecond

// GenerationStore is a store that counts changes to keys (and guard
// policies): KeyGeneration returns a number that every change bumps.
type GenerationStore interface {
	KeyGeneration(ctx context.Context) (int64, error)
}

// DefaultCacheSize caps the keys a Cache remembers.
const DefaultCacheSize = 100_000

// KeyStore is what a Cache needs of the store: the lookup, and the
// revocation it forwards.
type KeyStore interface {
	KeyLookup
	RevokeKey(ctx context.Context, id string) error
}

// Cache is a KeyLookup that remembers live keys, so that a request does
// not read the store for its key each time. Only live keys are
// remembered: an unknown or revoked key, or a store error, is asked again
// on the next request, so a new key works at once. A key's end (an
// expiry, a rotated key's grace) is checked against the clock on every
// hit, so it stops working at that instant. A key revoked through the
// Cache's RevokeKey or Forget stops working on this instance at once;
// revoked elsewhere (another instance, the admin command on the store),
// it stops within the watch interval when Watch runs on a store that
// counts changes (GenerationStore), else within the TTL. The zero value
// is not usable; call NewCache.
type Cache struct {
	store KeyStore
	ttl   time.Duration
	size  int
	now   func() time.Time

	mu      sync.RWMutex
	entries map[[32]byte]cacheEntry
	gen     uint64 // bumped by every revocation
}

type cacheEntry struct {
	p       gw.Principal
	expires time.Time
}

// NewCache returns a cache in front of store keeping live keys for ttl
// (DefaultCacheTTL when <= 0).
func NewCache(store KeyStore, ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{store: store, ttl: ttl, size: DefaultCacheSize, now: time.Now, entries: map[[32]byte]cacheEntry{}}
}

// KeyByHash returns the principal of the live key with this hash, from
// the cache when it was looked up less than the TTL ago. The caller gets
// its own copy.
func (c *Cache) KeyByHash(ctx context.Context, hash [32]byte) (*gw.Principal, error) {
	now := c.now()
	c.mu.RLock()
	e, ok := c.entries[hash]
	gen := c.gen
	c.mu.RUnlock()
	if ok && now.Before(e.expires) && (e.p.EndsAt.IsZero() || now.Before(e.p.EndsAt)) {
		p := e.p
		return &p, nil
	}
	p, err := c.store.KeyByHash(ctx, hash)
	if err != nil {
		if ok {
			c.mu.Lock()
			delete(c.entries, hash)
			c.mu.Unlock()
		}
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		// A revocation ran during the lookup: the answer may predate
		// it, so it is not remembered.
		return p, nil
	}
	if len(c.entries) >= c.size {
		// Full: drop expired entries, and if none were, any tenth.
		for h, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, h)
			}
		}
		for h := range c.entries {
			if len(c.entries) < c.size-c.size/10 {
				break
			}
			delete(c.entries, h)
		}
	}
	c.entries[hash] = cacheEntry{p: *p, expires: now.Add(c.ttl)}
	return p, nil
}

// RevokeKey revokes the key in the store and forgets it here, so that it
// is refused on this instance from the moment RevokeKey returns.
func (c *Cache) RevokeKey(ctx context.Context, id string) error {
	err := c.store.RevokeKey(ctx, id)
	c.Forget(id)
	return err
}

// Watch polls the store's key generation every interval
// (DefaultWatchInterval when <= 0) until ctx ends; when it moves, the
// cache is emptied and onChange (if not nil) is called, so that a change
// made on another instance or on the store shows here within the
// interval. A store that counts no changes makes Watch return at once.
func (c *Cache) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	gs, ok := c.store.(GenerationStore)
	if !ok {
		return
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	w := &watch{store: gs}
	w.poll(ctx, nil) // the starting generation
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if w.poll(ctx, c) && onChange != nil {
			onChange()
		}
	}
}

// watch is Watch's state: the last generation read.
type watch struct {
	store GenerationStore
	last  int64
	known bool
}

// poll reads the generation and, when it moved since the last read,
// empties c (when not nil) and reports true. A failed read changes
// nothing: the TTL still bounds staleness.
func (w *watch) poll(ctx context.Context, c *Cache) bool {
	gen, err := w.store.KeyGeneration(ctx)
	if err != nil || w.known && gen == w.last {
		return false
	}
	w.last, w.known = gen, true
	if c == nil {
		return false
	}
	c.ForgetAll()
	return true
}

// ForgetAll empties the cache; a lookup in flight meanwhile does not
// cache its answer.
func (c *Cache) ForgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// Forget drops the key with this id from the cache; a lookup in flight
// meanwhile does not cache its answer.
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, e := range c.entries {
		if e.p.KeyID == id {
			delete(c.entries, h)
		}
	}
}
