package upstream

import (
	"slices"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// breaker is a circuit breaker: closed, it lets every call through and
// counts the run of failures; after threshold failures in a row it opens
// for interval, during which calls fail at once; then it lets exactly one
// call through (half-open), whose success closes it and whose failure
// opens it for another interval. A threshold of 0 or less turns it off.
//
// A breaker shared by accounts (the vendor's, a key's) opens on a run of
// failures only when they came from at least accounts distinct accounts
// (calls without an account count as one more): one account's requests
// cannot open it for the others. A run that reaches threshold
// from fewer accounts asks for confirmation (done's confirm, at most once
// per interval): the gateway's own probe opens it when the vendor fails
// the probe too (trip); otherwise the run goes on, and opens it once
// enough accounts are in it. The same rule holds after it opened: a
// caller's call that fails as the half-open trial does not reopen a
// shared breaker alone (the breaker lets calls through again, the
// failure starting a new run), so one account timing its failures to
// land as the trial cannot keep it open. Where the gateway has a probe,
// the trial is that probe, not a caller's call (Client.Do, trialDone).
type breaker struct {
	threshold int
	interval  time.Duration
	accounts  int // distinct accounts a run needs (1: any)

	mu       sync.Mutex
	state    string // gw.BreakerClosed, gw.BreakerOpen, gw.BreakerHalfOpen
	failures int
	from     []string  // the run's distinct accounts, at most accounts of them
	retryAt  time.Time // open: when the next probe may go
	probing  bool      // half-open: the probe is in flight
	opened   int64
	askedAt  time.Time // when the last confirmation was asked for
}

func newBreaker(threshold int, interval time.Duration) *breaker {
	return &breaker{threshold: threshold, interval: interval, accounts: 1, state: gw.BreakerClosed}
}

// newSharedBreaker is a breaker that needs failures from accounts
// distinct accounts (or the gateway's own probe) to open.
func newSharedBreaker(threshold int, interval time.Duration, accounts int) *breaker {
	b := newBreaker(threshold, interval)
	b.accounts = max(accounts, 1)
	return b
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
	outcomeNone    outcome = iota // says nothing of the vendor's health (cancelled, a rate limit)
	outcomeOK                     // the vendor answered (any status it does not fail with)
	outcomeFailure                // a connection error, a time-out, 500/502/503/504/529
)

// done reports a call's outcome for account ("": a call without one);
// probe says whether allow made it the probe. confirm is true when the
// run reached the threshold from too few accounts to open the breaker
// and no confirmation was asked for within the interval: the caller
// should probe the vendor itself and report with trip or clear.
func (b *breaker) done(now time.Time, probe bool, o outcome, account string) (confirm bool) {
	if b == nil || b.threshold <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case outcomeOK:
		if probe || b.state == gw.BreakerClosed {
			b.state, b.failures, b.from = gw.BreakerClosed, 0, b.from[:0]
		}
	case outcomeFailure:
		b.failures++
		if len(b.from) < b.accounts && !slices.Contains(b.from, account) {
			b.from = append(b.from, account)
		}
		if probe {
			if b.accounts > 1 {
				// A caller's failed trial is one account's failure: a
				// new run, which the distinct-accounts rule (or the
				// gateway's own probe) must confirm to reopen.
				b.state, b.failures, b.from = gw.BreakerClosed, 1, append(b.from[:0], account)
				return false
			}
			b.openLocked(now)
			return false
		}
		if b.state == gw.BreakerClosed && b.failures >= b.threshold {
			if len(b.from) >= b.accounts {
				b.openLocked(now)
				return false
			}
			if b.askedAt.IsZero() || now.Sub(b.askedAt) >= b.interval {
				b.askedAt = now
				return true
			}
		}
	}
	// outcomeNone: a probe that said nothing (the caller left) leaves the
	// breaker half-open, and the next call probes instead.
	return false
}

func (b *breaker) openLocked(now time.Time) {
	if b.state != gw.BreakerOpen {
		b.opened++
	}
	b.state, b.retryAt = gw.BreakerOpen, now.Add(b.interval)
	b.from = b.from[:0]
}

// trialDone reports the outcome of the gateway's own probe sent as the
// half-open trial (allow's probe): ok closes the breaker, a failure
// reopens it for another interval.
func (b *breaker) trialDone(now time.Time, ok bool) {
	if b == nil || b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if ok {
		b.state, b.failures, b.from = gw.BreakerClosed, 0, b.from[:0]
		return
	}
	b.openLocked(now)
}

// shared reports whether the breaker is shared by accounts (needs
// failures from more than one to open).
func (b *breaker) shared() bool { return b != nil && b.threshold > 0 && b.accounts > 1 }

// trip opens the breaker: the gateway's own probe found the vendor (or
// key) failing.
func (b *breaker) trip(now time.Time) {
	if b == nil || b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == gw.BreakerClosed {
		b.openLocked(now)
	}
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

// idle reports whether the breaker holds nothing worth keeping (closed,
// no run of failures), for bounding a table of breakers.
func (b *breaker) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == gw.BreakerClosed && b.failures == 0
}
