package upstream

import (
	"sync"
	"time"
)

// Breakers are the circuit breakers of one upstream that is not a vendor
// (an operator's MCP server), isolated by account the way a vendor's
// are (see Client): a shared breaker that opens only on a run of
// failures from at least accounts distinct accounts, and each account's
// own breaker, which one account's failures open for that account
// alone. A threshold of 0 or less turns them off. It is safe for
// concurrent use.
type Breakers struct {
	threshold int
	interval  time.Duration
	shared    *breaker

	mu    sync.Mutex
	accts map[string]*breaker
}

// NewBreakers returns the breakers of one upstream.
func NewBreakers(threshold int, interval time.Duration, accounts int) *Breakers {
	return &Breakers{threshold: threshold, interval: interval, shared: newSharedBreaker(threshold, interval, accounts), accts: map[string]*breaker{}}
}

// Ticket is one call admitted by Allow; its outcome goes to Done.
type Ticket struct {
	b                   *Breakers
	acct                *breaker
	account             string
	probe, accountProbe bool
}

// Allow admits a call of account now, or says how long until the next
// may go and whose breaker is open (shared false: the account's own).
func (b *Breakers) Allow(account string, now time.Time) (t Ticket, ok bool, wait time.Duration, shared bool) {
	t = Ticket{b: b, account: account, acct: b.account(account)}
	aok, aprobe, await := t.acct.allow(now)
	if !aok {
		return t, false, await, false
	}
	sok, sprobe, swait := b.shared.allow(now)
	if !sok {
		t.acct.done(now, aprobe, outcomeNone, "")
		return t, false, swait, true
	}
	t.probe, t.accountProbe = sprobe, aprobe
	return t, true, 0, false
}

// Done reports the call's outcome: failed (a connection error, a
// time-out, the upstream's own failure), or ok false and failed false
// when the call said nothing of the upstream's health (the caller left).
// confirm is true when a run reached the threshold from too few accounts:
// the caller may probe the upstream itself and Trip the shared breaker
// when the probe fails too.
func (t Ticket) Done(now time.Time, ok, failed bool) (confirm bool) {
	o := outcomeNone
	switch {
	case failed:
		o = outcomeFailure
	case ok:
		o = outcomeOK
	}
	t.acct.done(now, t.accountProbe, o, "")
	return t.b.shared.done(now, t.probe, o, t.account)
}

// Trip opens the shared breaker: the gateway's own probe found the
// upstream failing.
func (b *Breakers) Trip(now time.Time) { b.shared.trip(now) }

// State is the shared breaker's state (gw.BreakerClosed, gw.BreakerOpen,
// gw.BreakerHalfOpen), for health reports.
func (b *Breakers) State(now time.Time) string {
	s, _, _, _ := b.shared.snapshot(now)
	return s
}

// account returns the account's own breaker (nil without an account or
// with breakers off), bounding the table as Client does.
func (b *Breakers) account(acct string) *breaker {
	if acct == "" || b.threshold <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.accts[acct]
	if br == nil {
		if len(b.accts) >= maxAccountBreakers {
			for k, v := range b.accts {
				if v.idle() {
					delete(b.accts, k)
				}
			}
			if len(b.accts) >= maxAccountBreakers {
				clear(b.accts)
			}
		}
		br = newBreaker(b.threshold, b.interval)
		b.accts[acct] = br
	}
	return br
}
