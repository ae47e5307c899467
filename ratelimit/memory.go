// Package ratelimit enforces per-key request and token rates in the
// memory of one gateway instance. It implements gw.Limiter for a single
// instance; the redis package implements the same contract, with the same
// window, for any number of instances sharing one Redis. Both pass the
// conformance suite in ratelimit/limitertest.
//
// # Window
//
// Limits are per Window (one minute), counted in a sliding window of
// one-second buckets (Resolution). A request is admitted only when the
// counts of the current bucket and of the 60 whole buckets before it,
// plus this request, stay within the limit; a count therefore stays in
// the window for between 60 and 61 seconds. The bound is exact, not an
// approximation: in any 60-second interval a key is never admitted more
// than RPM requests, nor more than TPM reserved tokens (with the two
// exceptions below). The price of exactness is that freed capacity comes
// back up to one second late.
//
// # Tokens
//
// Allow reserves the caller's token estimate; Adjust reconciles it with
// the real count after the response (delta = real - estimate). A positive
// delta is counted in the current bucket, so a response larger than its
// estimate can push the window over TPM and later requests wait until it
// drains; a negative delta is taken back from the newest buckets first and
// never below zero. A request whose estimate alone exceeds TPM is
// admitted only when the key has no tokens in its window, and is then
// counted in full; otherwise it could never be admitted.
//
// # Decisions
//
// A zero (or negative) RPM or TPM is unlimited; with both zero, Allow
// admits without recording anything. A denied request counts nothing.
// RetryAfter on a denial is the time until this request would be admitted
// if nothing else arrived, always positive: callers round it up to whole
// seconds for Retry-After. RequestsLimit and RequestsRemaining are zero
// when RPM is unlimited; callers then omit the rate-limit headers.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// MemoryOptions configures a Memory limiter. The zero value is ready to
// use.
type MemoryOptions struct {
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// IdleTimeout is how long a key's counts are kept after its last
	// use. Zero means 2 minutes; values below Window+Resolution (after
	// which an idle key's counts are all zero anyway) are raised to it.
	IdleTimeout time.Duration
	// SweepInterval is how often idle keys are dropped in the
	// background. Zero means one minute; negative starts no sweeper
	// (call Sweep yourself).
	SweepInterval time.Duration
	// Shards is the number of independently locked parts of the key
	// map. Zero means 64; other values are rounded up to a power of two.
	Shards int
}

// Memory is an in-memory gw.Limiter for one gateway instance. Its methods
// are safe for concurrent use. Close stops its background sweeper.
type Memory struct {
	now    func() time.Time
	epoch  time.Time // bucket 0 starts here
	idle   int64     // buckets after which an unused key is dropped
	seed   maphash.Seed
	mask   uint64
	shards []shard

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

type shard struct {
	mu   sync.Mutex
	keys map[string]*counts // guarded by mu
	_    [48]byte           // keep neighbouring locks off one cache line
}

// NewMemory returns a Memory limiter and, unless opts.SweepInterval is
// negative, starts the goroutine that drops idle keys; Close stops it.
func NewMemory(opts MemoryOptions) *Memory {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = 2 * time.Minute
	}
	idle = max(idle, Window+Resolution)
	n := 64
	if opts.Shards > 0 {
		n = 1
		for n < opts.Shards {
			n <<= 1
		}
	}
	m := &Memory{
		now:    now,
		epoch:  now(),
		idle:   int64((idle + Resolution - 1) / Resolution),
		seed:   maphash.MakeSeed(),
		mask:   uint64(n - 1),
		shards: make([]shard, n),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for i := range m.shards {
		m.shards[i].keys = make(map[string]*counts)
	}
	if opts.SweepInterval < 0 {
		close(m.done)
		return m
	}
	every := opts.SweepInterval
	if every == 0 {
		every = time.Minute
	}
	go m.sweeper(every)
	return m
}

func (m *Memory) sweeper(every time.Duration) {
	defer close(m.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.Sweep()
		}
	}
}

// Close stops the background sweeper and waits for it to return. The
// limiter keeps working afterwards, without sweeping. Close is safe to
// call more than once.
func (m *Memory) Close() error {
	m.stopOnce.Do(func() { close(m.stop) })
	<-m.done
	return nil
}

// Allow counts one request and reserves tokens for key when both fit in
// lim; see the package doc. It never returns an error.
func (m *Memory) Allow(_ context.Context, key string, lim gw.Limit, tokens int64) (gw.LimitDecision, error) {
	return m.allow(key, lim, tokens, m.now()), nil
}

// Adjust adds delta tokens to key's window (delta = real - estimate; a
// negative delta is refunded, never below zero). It does nothing when
// lim.TPM is unlimited. It never returns an error.
func (m *Memory) Adjust(_ context.Context, key string, lim gw.Limit, delta int64) error {
	m.adjust(key, lim, delta, m.now())
	return nil
}

// offset places t on the bucket time line.
func (m *Memory) offset(t time.Time) (time.Duration, int64) {
	d := t.Sub(m.epoch)
	b := int64(d / Resolution)
	if d < 0 && d%Resolution != 0 {
		b-- // floor, not truncation
	}
	return d, b
}

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)&m.mask]
}

func (m *Memory) allow(key string, lim gw.Limit, tokens int64, now time.Time) gw.LimitDecision {
	if lim.RPM <= 0 && lim.TPM <= 0 {
		return gw.LimitDecision{Allowed: true}
	}
	tokens = max(tokens, 0)
	d, cur := m.offset(now)
	s := m.shard(key)
	s.mu.Lock()
	c := s.keys[key]
	if c == nil {
		c = &counts{head: cur}
		s.keys[key] = c
	}
	c.advance(cur)
	dec := c.take(lim, tokens, d)
	s.mu.Unlock()
	return dec
}

func (m *Memory) adjust(key string, lim gw.Limit, delta int64, now time.Time) {
	if lim.TPM <= 0 || delta == 0 {
		return
	}
	_, cur := m.offset(now)
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.keys[key]
	if c == nil {
		if delta < 0 {
			return
		}
		c = &counts{head: cur}
		s.keys[key] = c
	}
	c.advance(cur)
	c.adjust(delta)
}

// Sweep drops the keys unused for longer than the idle timeout and
// returns how many it dropped. The background sweeper calls it.
func (m *Memory) Sweep() int {
	return m.sweep(m.now())
}

func (m *Memory) sweep(now time.Time) int {
	_, cur := m.offset(now)
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for k, c := range s.keys {
			if cur-c.head >= m.idle {
				delete(s.keys, k)
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// Len returns the number of keys the limiter currently holds.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.keys)
		s.mu.Unlock()
	}
	return n
}

var _ gw.Limiter = (*Memory)(nil)
