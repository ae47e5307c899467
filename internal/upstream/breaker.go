package upstream

import (
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// breaker is a circuit breaker: closed, it lets every call through and
// counts the run of failures; after threshold failures in a row it opens
// for interval, during which calls fail at once; then it lets exactly one
// call through (half-open), whose success closes it and whose failure
// opens it for another interval. A threshold of 0 or less turns it off.
type breaker struct {
	threshold int
	interval  time.Duration

	mu       sync.Mutex
	state    string // gw.BreakerClosed, gw.BreakerOpen, gw.BreakerHalfOpen
	failures int
	retryAt  time.Time // open: when the next probe may go
	probing  bool      // half-open: the probe is in flight
	opened   int64
}

func newBreaker(threshold int, interval time.Duration) *breaker {
	return &breaker{threshold: threshold, interval: interval, state: gw.BreakerClosed}
}

// allow reports whether a call may go now, and whether it is the probe
// (whose outcome must be reported with done). When it may not, wait says
// how long until the next probe may go.
func (b *breaker) allow(now time.Time) (ok, probe bool, wait time.Duration) {
	if b == nil || b.threshold <= 0 {
		return true, false, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case gw.BreakerClosed:
		return true, false, 0
	case gw.BreakerOpen:
		if now.Before(b.retryAt) {
			return false, false, b.retryAt.Sub(now)
		}
		b.state, b.probing = gw.BreakerHalfOpen, true
		return true, true, 0
	default: // half-open
		if b.probing {
			return false, false, b.interval
		}
		b.probing = true
		return true, true, 0
	}
}

// outcome of a call, for done.
type outcome int

const (
	outcomeNone    outcome = iota // says nothing of the vendor's health (cancelled)
	outcomeOK                     // the vendor answered (any status it does not fail with)
	outcomeFailure                // a connection error, a time-out, 500/502/503/504/529, 408
)

// done reports a call's outcome; probe says whether allow made it the
// probe.
func (b *breaker) done(now time.Time, probe bool, o outcome) {
	if b == nil || b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case outcomeOK:
		if probe || b.state == gw.BreakerClosed {
			b.state, b.failures = gw.BreakerClosed, 0
		}
	case outcomeFailure:
		b.failures++
		if probe || b.state == gw.BreakerClosed && b.failures >= b.threshold {
			if b.state != gw.BreakerOpen {
				b.opened++
			}
			b.state, b.retryAt = gw.BreakerOpen, now.Add(b.interval)
		}
	}
	// outcomeNone: a probe that said nothing (the caller left) leaves the
	// breaker half-open, and the next call probes instead.
}

// snapshot returns the state for a health report.
func (b *breaker) snapshot(now time.Time) (state string, failures int, retryAt time.Time, opened int64) {
	if b == nil {
		return gw.BreakerClosed, 0, time.Time{}, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	state = b.state
	if state == gw.BreakerOpen && !now.Before(b.retryAt) {
		state = gw.BreakerHalfOpen // the next call probes
	}
	return state, b.failures, b.retryAt, b.opened
}
