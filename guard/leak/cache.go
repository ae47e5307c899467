package leak

import (
	"hash/maphash"
	"sync"
)

// Cache keeps compiled Sets by the hash of their protected text, so a
// conversation that sends the same system prompt every turn compiles it
// once. It is bounded (whole generations are dropped when full) and
// invisible to behaviour: a Set is a pure function of its Protected.
// The zero Cache is not usable; use NewCache.
type Cache struct {
	seed maphash.Seed
	max  int
	mu   sync.Mutex
	// cur and old are the two generations, guarded by mu.
	cur, old map[uint64]*Set
}

// NewCache returns a cache of at most about 2*n Sets.
func NewCache(n int) *Cache {
	return &Cache{seed: maphash.MakeSeed(), max: max(n, 1), cur: map[uint64]*Set{}}
}

// Set returns the compiled p, nil when nothing in p can leak. A canary,
// new per request, is never cached.
func (c *Cache) Set(p Protected) *Set {
	if c == nil || p.Canary != "" {
		return New(p)
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, t := range p.Texts {
		h.WriteString(t)
		h.WriteByte(0)
	}
	key := h.Sum64()
	c.mu.Lock()
	s, ok := c.cur[key]
	if !ok {
		if s, ok = c.old[key]; ok {
			c.cur[key] = s
		}
	}
	c.mu.Unlock()
	if ok {
		return s
	}
	s = New(p)
	c.mu.Lock()
	if len(c.cur) >= c.max {
		c.old, c.cur = c.cur, map[uint64]*Set{}
	}
	c.cur[key] = s
	c.mu.Unlock()
	return s
}
