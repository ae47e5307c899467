package upstream

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Key is one of a vendor's API keys. Name labels it in health reports,
// logs and metrics (never the secret); Weight is its share of the traffic
// under SpreadWeighted (0: 1).
type Key struct {
	Name   string
	Secret string
	Weight int
}

// Ways of spreading requests over a pool's keys.
const (
	SpreadWeighted      = "weighted"       // at random, in proportion to Weight
	SpreadLeastInFlight = "least-inflight" // the key with the fewest requests in flight (ties: the first)
)

// ParseKeys reads a key list as configured: comma-separated keys, each
// optionally followed by "@WEIGHT" (a positive integer), named "1", "2",
// ... in order. Blank entries are ignored.
func ParseKeys(s string) ([]Key, error) {
	var keys []Key
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k := Key{Secret: f, Weight: 1}
		if i := strings.LastIndexByte(f, '@'); i > 0 {
			w, err := strconv.Atoi(f[i+1:])
			if err != nil || w <= 0 {
				return nil, fmt.Errorf("key %d: the weight after @ must be a positive integer", len(keys)+1)
			}
			k.Secret, k.Weight = f[:i], w
		}
		k.Name = strconv.Itoa(len(keys) + 1)
		keys = append(keys, k)
	}
	return keys, nil
}

// pool spreads calls over a vendor's keys: a key whose 429 the vendor
// says is about the key rests for the wait the vendor asked for (at most
// the client's KeyRestMax), a key the gateway's own probe finds refused
// (401, 403) is taken out, and each key has a breaker of its own.
type pool struct {
	spread string
	keys   []*poolKey
	rand   func(n int) int

	mu sync.Mutex // guards the poolKey fields below the line
}

type poolKey struct {
	Key
	br *breaker
	// guarded by pool.mu
	inflight  int
	restUntil time.Time
	out       bool
	reason    string
	// checkedAt is when the gateway's own probe last found the key
	// accepted; checking says one is in flight.
	checkedAt time.Time
	checking  bool
}

func newPool(keys []Key, spread string, threshold int, interval time.Duration, accounts int) *pool {
	p := &pool{spread: spread, rand: rand.IntN}
	for i, k := range keys {
		if k.Weight <= 0 {
			k.Weight = 1
		}
		if k.Name == "" {
			k.Name = strconv.Itoa(i + 1)
		}
		pk := &poolKey{Key: k}
		if len(keys) > 1 {
			// A lone key's breaker would be the vendor's.
			pk.br = newSharedBreaker(threshold, interval, accounts)
		}
		p.keys = append(p.keys, pk)
	}
	return p
}

// lease is a key in use by one call.
type lease struct {
	k     *poolKey
	probe bool
}

// pick chooses a key for a call, skipping the keys that rest, are out,
// or whose breaker is open, and those in skip. When none is usable it
// returns the error to answer, with the shortest wait as RetryAfter.
func (p *pool) pick(now time.Time, vendor string, skip map[*poolKey]bool) (lease, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var cands []*poolKey
	var wait time.Duration
	allOut, resting := true, 0
	for _, k := range p.keys {
		if k.out {
			continue
		}
		allOut = false
		if skip[k] {
			continue
		}
		if now.Before(k.restUntil) {
			if d := k.restUntil.Sub(now); wait == 0 || d < wait {
				wait = d
			}
			resting++
			continue
		}
		cands = append(cands, k)
	}
	if allOut {
		return lease{}, &gw.Error{Code: gw.CodeVendorUnavailable, Message: vendor + ": the vendor refused every key the gateway has; the operator must replace them", Err: fmt.Errorf("%s: every key is out", vendor)}
	}
	if len(cands) == 0 && resting > 0 {
		return lease{}, &gw.Error{Code: gw.CodeRateLimited, Message: vendor + ": every key of the gateway is rate limited by the vendor; retry after Retry-After", RetryAfter: max(wait, time.Second)}
	}
	for len(cands) > 0 {
		i := p.choose(cands)
		k := cands[i]
		ok, probe, d := k.br.allow(now)
		if ok {
			k.inflight++
			return lease{k: k, probe: probe}, nil
		}
		if wait == 0 || d < wait {
			wait = d
		}
		cands = append(cands[:i], cands[i+1:]...)
	}
	return lease{}, &gw.Error{Code: gw.CodeOverloaded, Message: vendor + ": every key of the gateway is resting or failing; retry after Retry-After", RetryAfter: max(wait, time.Second)}
}

// choose returns the index of the key to use among cands (not empty).
func (p *pool) choose(cands []*poolKey) int {
	if p.spread == SpreadLeastInFlight {
		best := 0
		for i, k := range cands {
			if k.inflight < cands[best].inflight {
				best = i
			}
		}
		return best
	}
	total := 0
	for _, k := range cands {
		total += k.Weight
	}
	n := p.rand(total)
	for i, k := range cands {
		if n < k.Weight {
			return i
		}
		n -= k.Weight
	}
	return len(cands) - 1
}

// release ends a lease: o is the call's outcome for the key's breaker,
// account whose call it was. confirm asks for the gateway's own probe of
// the key (breaker.done).
func (p *pool) release(now time.Time, l lease, o outcome, account string) (confirm bool) {
	p.mu.Lock()
	l.k.inflight--
	p.mu.Unlock()
	return l.k.br.done(now, l.probe, o, account)
}

// beginCheck reports whether the gateway should probe key k to confirm
// a refusal: not when a probe is in flight or found the key accepted
// within every; endCheck reports the probe's result.
func (p *pool) beginCheck(k *poolKey, now time.Time, every time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k.out || k.checking || !k.checkedAt.IsZero() && now.Sub(k.checkedAt) < every {
		return false
	}
	k.checking = true
	return true
}

func (p *pool) endCheck(k *poolKey, now time.Time, accepted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k.checking = false
	if accepted {
		k.checkedAt = now
	}
}

// rest makes a key that got 429 rest until until, when the pool has
// other keys to take its calls (a lone key keeps asking the vendor, whose
// limits may be per model).
func (p *pool) rest(k *poolKey, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.keys) > 1 && until.After(k.restUntil) {
		k.restUntil = until
	}
}

// takeOut takes a key the vendor refused out of the pool; it reports
// whether the key was in.
func (p *pool) takeOut(k *poolKey, reason string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k.out {
		return false
	}
	k.out, k.reason = true, reason
	return true
}

// health reports every key.
func (p *pool) health(now time.Time) []gw.KeyHealth {
	out := make([]gw.KeyHealth, 0, len(p.keys))
	for _, k := range p.keys {
		state, failures, retryAt, _ := k.br.snapshot(now)
		p.mu.Lock()
		h := gw.KeyHealth{Name: k.Name, Weight: k.Weight, Breaker: state, Failures: failures, RetryAt: retryAt, Out: k.out, Reason: k.reason, InFlight: k.inflight}
		if now.Before(k.restUntil) {
			h.RestUntil = k.restUntil
		}
		p.mu.Unlock()
		out = append(out, h)
	}
	return out
}

// usable reports whether some key may take a call now.
func (p *pool) usable(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.keys {
		if !k.out && !now.Before(k.restUntil) {
			if st, _, retryAt, _ := k.br.snapshot(now); st != gw.BreakerOpen || !now.Before(retryAt) {
				return true
			}
		}
	}
	return false
}
