package guard

import (
	"hash/maphash"
	"sync"
)

// The score cache. An agent's turn repeats what its previous turn sent
// (the system prompt, the tools, every message so far), so the scores of
// texts the guard has read are kept by content: a segment's score (all
// its windows, its views) and a pack's (the joined edges of consecutive
// turns, whose boundaries do not move when turns are added at the end).
// A turn then costs its new bytes, the last pack, and one hash over the
// rest. A score is a function of the text alone, so a cached one is the
// one Check would compute: verdicts are the same with a cold or a warm
// cache.
//
// Keys are a keyed 64-bit hash (maphash, a random seed per process, so
// collisions cannot be aimed) of the policy's Tenant and the text, and
// the entry keeps the text's length as a second check. Entries are
// shared only within a tenant: whether a text is cached shows in the
// time a check takes, and another tenant must not learn that some text
// was sent before. No text is kept, only scores.
//
// Memory is bounded: the cache holds at most cacheShards*2*shardCap
// entries (two generations per shard: when the current one fills, it
// becomes the old one and the older is dropped; a hit in the old one is
// moved to the current), about 100 bytes each with the maps' own
// (names interned, see cached): some 7 MB at DefaultCacheEntries.

const (
	cacheShards = 16
	// DefaultCacheEntries bounds the score cache when Config.CacheEntries
	// is 0: about 7 MB.
	DefaultCacheEntries = 1 << 16
	// minCached is the shortest text worth caching: shorter ones cost
	// less to score than to look up.
	minCached = 64
)

type cacheKey struct {
	h uint64
	n int
}

type cacheShard struct {
	mu       sync.Mutex
	cur, old map[cacheKey]cached
}

// cached is a result as the cache keeps it: its names (kind, rule, cue:
// a small fixed set of strings) as indices into names.
type cached struct {
	score           float64
	from, to        int32
	kind, rule, cue uint16
}

// names interns the strings of results (kinds, rule names, cue names),
// all of them constants of the package: index 0 is "".
var names = struct {
	sync.RWMutex
	idx  map[string]uint16
	list []string
}{idx: map[string]uint16{"": 0}, list: []string{""}}

func nameIndex(s string) (uint16, bool) {
	names.RLock()
	i, ok := names.idx[s]
	names.RUnlock()
	if ok {
		return i, true
	}
	names.Lock()
	defer names.Unlock()
	if i, ok := names.idx[s]; ok {
		return i, true
	}
	if len(names.list) >= 1<<16 {
		return 0, false
	}
	i = uint16(len(names.list))
	names.idx[s] = i
	names.list = append(names.list, s)
	return i, true
}

func nameAt(i uint16) string {
	names.RLock()
	defer names.RUnlock()
	return names.list[i]
}

// pack and unpack convert a result to and from its cached form; pack
// reports false for a result it cannot keep exactly.
func pack(r result) (cached, bool) {
	k, ok1 := nameIndex(string(r.kind))
	rl, ok2 := nameIndex(r.rule)
	c, ok3 := nameIndex(r.cue)
	if !ok1 || !ok2 || !ok3 || r.from != int(int32(r.from)) || r.to != int(int32(r.to)) {
		return cached{}, false
	}
	return cached{score: r.score, from: int32(r.from), to: int32(r.to), kind: k, rule: rl, cue: c}, true
}

func (c cached) unpack() result {
	return result{score: c.score, kind: Kind(nameAt(c.kind)), rule: nameAt(c.rule), cue: nameAt(c.cue), from: int(c.from), to: int(c.to)}
}

type scoreCache struct {
	seed     maphash.Seed
	shardCap int
	shards   [cacheShards]cacheShard
}

func newScoreCache(entries int) *scoreCache {
	c := &scoreCache{seed: maphash.MakeSeed(), shardCap: max(1, entries/(2*cacheShards))}
	for i := range c.shards {
		c.shards[i].cur = make(map[cacheKey]cached, c.shardCap)
	}
	return c
}

// key hashes a tenant, a kind of entry (segment or pack) and a text.
func (c *scoreCache) key(tenant string, kind byte, text string) cacheKey {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(tenant)
	h.WriteByte(0)
	h.WriteByte(kind)
	h.WriteString(text)
	return cacheKey{h.Sum64(), len(text)}
}

func (c *scoreCache) shard(k cacheKey) *cacheShard { return &c.shards[k.h>>60] }

func (c *scoreCache) get(k cacheKey) (result, bool) {
	s := c.shard(k)
	s.mu.Lock()
	e, ok := s.cur[k]
	if !ok {
		if e, ok = s.old[k]; ok {
			delete(s.old, k)
			s.putLocked(k, e, c.shardCap)
		}
	}
	s.mu.Unlock()
	if !ok {
		return result{}, false
	}
	return e.unpack(), true
}

func (c *scoreCache) put(k cacheKey, r result) {
	e, ok := pack(r)
	if !ok {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	s.putLocked(k, e, c.shardCap)
	s.mu.Unlock()
}

func (s *cacheShard) putLocked(k cacheKey, e cached, capacity int) {
	if len(s.cur) >= capacity {
		s.old, s.cur = s.cur, make(map[cacheKey]cached, capacity)
	}
	s.cur[k] = e
}

// len is the number of entries held.
func (c *scoreCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.cur) + len(s.old)
		s.mu.Unlock()
	}
	return n
}

// Entry kinds.
const (
	cacheSegment = 's'
	cachePack    = 'p'
)

// cachedScore returns the score of text (of the given kind: a segment,
// through score; a pack's joined text) from the cache, or computes and
// keeps it.
func (g *Guard) cachedScore(p *Policy, kind byte, text string, score func() result) result {
	if g.cache == nil || len(text) < minCached {
		return score()
	}
	k := g.cache.key(p.Tenant, kind, text)
	if r, ok := g.cache.get(k); ok {
		return r
	}
	r := score()
	g.cache.put(k, r)
	return r
}
