package auth

import (
	"context"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// DefaultCacheTTL is how long a Cache trusts a live key before asking the
// store again: the longest a key revoked on another instance (or by the
// admin command) keeps working on this one.
const DefaultCacheTTL = 5 * time.Second

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
// on the next request, so a new key works at once. A key revoked through
// the Cache's RevokeKey stops working on this instance at once; revoked
// elsewhere (another instance, the admin command), it stops within the
// TTL. Changes of a key's limits or account name also show within the
// TTL. The zero value is not usable; call NewCache.
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
	if ok && now.Before(e.expires) {
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
