package fakevendor

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Prefix caching, off unless EnablePrefixCache is called. The fake then
// remembers the prompt prefixes it saw, per cache key (vendor, model, API
// key and, where the vendor takes one, prompt_cache_key), for ttl, and
// reports reads and writes in each vendor's real usage fields when no
// [fake:cache] directive fixes them:
//
//   - The prompt is cut into segments in the vendor's prompt order: each
//     tool, each system block (Anthropic) or systemInstruction part
//     (Gemini), then each message (OpenAI-compatible, Gemini contents) or
//     each content block (Anthropic). A prefix is the first k segments;
//     its tokens are Tokens of their compact JSON (cache_control left
//     out, so moving a marker does not change a prefix).
//   - Anthropic caches only at breakpoints: blocks carrying cache_control
//     (a "1h" ttl bills as a 1-hour write), or the last block when the
//     request has a top-level cache_control. A read is the longest cached
//     prefix ending at a breakpoint or up to 20 blocks before one; the
//     write is the rest of the prompt up to the last breakpoint. Prefixes
//     under 1024 tokens are not cached.
//   - The other vendors cache automatically: every prefix of 1024 tokens
//     or more is remembered, and a read is the longest remembered one
//     (OpenAI counts it in 128-token steps). Only OpenAI's gpt-6 models and
//     OpenRouter report writes (cache_write_tokens).
//
// Reads and writes never exceed the reported prompt tokens.

// maxPrefixes bounds the remembered prefixes.
const maxPrefixes = 100_000

// minCachedPrefix is the smallest prefix the fake caches, in tokens.
const minCachedPrefix = 1024

// prefixCache is the memory of prompt prefixes.
type prefixCache struct {
	ttl time.Duration
	now func() time.Time

	// mu protects seen.
	mu   sync.Mutex
	seen map[[32]byte]time.Time // prefix key -> expiry
}

// EnablePrefixCache turns prefix caching on with entries living ttl after
// their last use (5 minutes when ttl is 0). See the package's prefix-cache
// notes for the model.
func (s *Server) EnablePrefixCache(ttl time.Duration) {
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prefix = &prefixCache{ttl: ttl, now: time.Now, seen: make(map[[32]byte]time.Time)}
}

func (s *Server) prefixCache() *prefixCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefix
}

// segment is one piece of the prompt; mark is its breakpoint TTL
// (Anthropic), "" when it has none.
type segment struct {
	tokens int // cumulative tokens of the prefix ending here
	mark   string
}

// apply sets the cache counts of a planned reply.
func (pc *prefixCache) apply(c *call, apiKey string, u *counts) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(c.body, &raw) != nil {
		return
	}
	var key string
	_ = json.Unmarshal(raw["prompt_cache_key"], &key)
	base := c.vendor + "\x00" + c.model + "\x00" + apiKey + "\x00" + key
	segs, hashes := segmentsOf(familyOf(c.vendor), raw)
	if len(segs) == 0 {
		return
	}
	now := pc.now()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.seen) > maxPrefixes {
		// Bounded memory: expired entries go first, then everything.
		for k, exp := range pc.seen {
			if !now.Before(exp) {
				delete(pc.seen, k)
			}
		}
		if len(pc.seen) > maxPrefixes {
			clear(pc.seen)
		}
	}
	hit := func(i int) bool {
		exp, ok := pc.seen[prefixKey(base, hashes[i])]
		return ok && now.Before(exp)
	}
	store := func(i int) {
		if segs[i].tokens >= minCachedPrefix {
			pc.seen[prefixKey(base, hashes[i])] = now.Add(pc.ttl)
		}
	}
	// Reads are looked up before this request stores anything.
	read, write, longTTL := -1, -1, false
	if familyOf(c.vendor) == famMessages {
		for i, s := range segs {
			if s.mark == "" {
				continue
			}
			for j := i; j >= 0 && j >= i-20; j-- {
				if j > read && hit(j) {
					read = j
				}
			}
			if s.tokens >= minCachedPrefix {
				write, longTTL = i, s.mark == "1h"
			}
		}
		for i, s := range segs {
			if s.mark != "" {
				store(i)
			}
		}
	} else {
		for i := range segs {
			if hit(i) {
				read = i
			}
		}
		for i := range segs {
			store(i)
		}
		if c.vendor == "openrouter" || strings.HasPrefix(c.model, "gpt-6") {
			write = len(segs) - 1
		}
	}
	if read >= 0 {
		pc.seen[prefixKey(base, hashes[read])] = now.Add(pc.ttl)
		u.cacheRead = segs[read].tokens
		if c.vendor == "openai" {
			u.cacheRead -= u.cacheRead % 128
		}
	}
	if write >= 0 && segs[write].tokens >= minCachedPrefix {
		w := segs[write].tokens - u.cacheRead
		if read >= write {
			w = 0
		}
		if longTTL {
			u.cache1h = w
		} else {
			u.cache5m = w
		}
	}
	u.cacheRead = min(u.cacheRead, u.prompt)
	u.cache5m = min(max(u.cache5m, 0), u.prompt-u.cacheRead)
	u.cache1h = min(max(u.cache1h, 0), u.prompt-u.cacheRead-u.cache5m)
	c.cached = u.cacheRead > 0 || u.cacheWrite() > 0
}

func prefixKey(base string, h [32]byte) [32]byte {
	return sha256.Sum256(append([]byte(base+"\x00"), h[:]...))
}

// segmentsOf cuts a request into prompt segments and returns them with
// the running hash of each prefix.
func segmentsOf(fam family, raw map[string]json.RawMessage) ([]segment, [][32]byte) {
	var segs []segment
	var hashes [][32]byte
	h := sha256.New()
	total := 0
	add := func(v any, mark string) {
		b, _ := json.Marshal(v)
		total += len(b)
		h.Write(b)
		h.Write([]byte{0})
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		segs = append(segs, segment{tokens: Tokens(total), mark: mark})
		hashes = append(hashes, sum)
	}
	list := func(name string) []any {
		var out []any
		_ = json.Unmarshal(raw[name], &out)
		return out
	}
	switch fam {
	case famMessages:
		for _, t := range list("tools") {
			add(stripMark(t))
		}
		var sys any
		_ = json.Unmarshal(raw["system"], &sys)
		// A string is shorthand for one text block: the same prompt.
		textBlock := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
		switch s := sys.(type) {
		case string:
			add(textBlock(s), "")
		case []any:
			for _, b := range s {
				add(stripMark(b))
			}
		}
		for _, m := range list("messages") {
			mm, _ := m.(map[string]any)
			switch ct := mm["content"].(type) {
			case string:
				add([]any{mm["role"], textBlock(ct)}, "")
			case []any:
				for _, b := range ct {
					v, mark := stripMark(b)
					add([]any{mm["role"], v}, mark)
				}
			}
		}
		if len(raw["cache_control"]) > 0 && string(raw["cache_control"]) != "null" && len(segs) > 0 {
			segs[len(segs)-1].mark = "5m"
		}
	case famGemini:
		for _, t := range list("tools") {
			add(t, "")
		}
		var si struct {
			Parts []any `json:"parts"`
		}
		_ = json.Unmarshal(raw["systemInstruction"], &si)
		for _, p := range si.Parts {
			add(p, "")
		}
		for _, m := range list("contents") {
			add(m, "")
		}
	default:
		for _, t := range list("tools") {
			add(t, "")
		}
		for _, m := range list("messages") {
			add(m, "")
		}
		// OpenAI Responses: instructions, then the input items (a string
		// input is one user message).
		var instr string
		if json.Unmarshal(raw["instructions"], &instr) == nil && instr != "" {
			add(instr, "")
		}
		var in string
		if json.Unmarshal(raw["input"], &in) == nil {
			add(map[string]any{"role": "user", "content": in}, "")
		}
		for _, it := range list("input") {
			add(it, "")
		}
	}
	return segs, hashes
}

// stripMark returns an Anthropic block without its cache_control, and the
// breakpoint's TTL ("5m" or "1h"; "" without one).
func stripMark(v any) (any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, ""
	}
	cc, ok := m["cache_control"]
	if !ok {
		return v, ""
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != "cache_control" {
			out[k] = x
		}
	}
	mark := "5m"
	if ccm, _ := cc.(map[string]any); ccm != nil && ccm["ttl"] == "1h" {
		mark = "1h"
	}
	return out, mark
}
