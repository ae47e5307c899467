package gw

import (
	"context"
	"sync"
	"time"
)

// Breaker states of a vendor or of one of its keys.
const (
	BreakerClosed   = "closed"    // calls go through
	BreakerOpen     = "open"      // calls fail at once, until the probe interval passes
	BreakerHalfOpen = "half-open" // one probe is let through; its outcome closes or reopens
)

// VendorHealth is a snapshot of one vendor's circuit breaker and key pool,
// for /readyz, metrics and the dashboard. It never holds a key's secret.
type VendorHealth struct {
	Vendor string
	// Breaker is the vendor's state (BreakerClosed, BreakerOpen,
	// BreakerHalfOpen); Failures the run of failures counted toward
	// opening it; RetryAt, while open, when the next probe may go.
	Breaker  string
	Failures int
	RetryAt  time.Time
	// Opened counts the times the breaker opened since start.
	Opened int64
	Keys   []KeyHealth
}

// KeyHealth is one vendor key of a pool: its name (never its secret), its
// breaker, whether it rests after a 429 (until RestUntil) or was taken
// out after the vendor refused it (Out, with Reason), and its requests in
// flight.
type KeyHealth struct {
	Name      string
	Weight    int
	Breaker   string
	Failures  int
	RetryAt   time.Time
	RestUntil time.Time
	Out       bool
	Reason    string
	InFlight  int
}

// HealthReporter is implemented by providers that keep a circuit breaker
// and a key pool (found by type assertion).
type HealthReporter interface {
	Health(now time.Time) VendorHealth
}

// Attempt is one try of a request at a model: the serving one (Error
// empty, not Skipped), a failed one (Error: its code), or a candidate
// passed over before any call (Skipped: the reason).
type Attempt struct {
	Vendor, Model string
	Error         Code
	Skipped       string
	Duration      time.Duration
}

// String is the attempt as the record's note shows it:
// "anthropic/claude-x overloaded 12ms", "openai/gpt-y ok 340ms",
// "google/gemini-z skipped (context window too small)".
func (a Attempt) String() string {
	id := a.Vendor + "/" + a.Model
	switch {
	case a.Skipped != "":
		return id + " skipped (" + a.Skipped + ")"
	case a.Error != "":
		return id + " " + string(a.Error) + " " + a.Duration.Round(time.Millisecond).String()
	}
	return id + " ok " + a.Duration.Round(time.Millisecond).String()
}

// CallScope travels with a request's context to the vendor client: the
// account the calls are made for (breakers count failures by account,
// so that one account cannot trip them for the others; calls without
// an account count as one account more, and have no breaker of their
// own) and the request's attempt budget (nil: none).
type CallScope struct {
	Account string
	Budget  *AttemptBudget
}

type callScopeKey struct{}

// WithCallScope returns ctx carrying s.
func WithCallScope(ctx context.Context, s CallScope) context.Context {
	return context.WithValue(ctx, callScopeKey{}, s)
}

// CallScopeFrom returns the scope ctx carries (zero: none).
func CallScopeFrom(ctx context.Context) CallScope {
	s, _ := ctx.Value(callScopeKey{}).(CallScope)
	return s
}

// AttemptBudget bounds what one request may make the gateway spend on
// vendors: at most a number of vendor calls (retries and fallbacks
// together) and no call or retry starting after its deadline; each
// attempt's wait for its first byte ends at the deadline too. It keeps
// its own clock (time.Now unless given), so that every package reads it
// alike. It is safe for concurrent use.
type AttemptBudget struct {
	now      func() time.Time
	mu       sync.Mutex
	left     int
	deadline time.Time
}

// NewAttemptBudget returns a budget of calls vendor calls within d from
// now; a nil clock is time.Now.
func NewAttemptBudget(calls int, d time.Duration, now func() time.Time) *AttemptBudget {
	if now == nil {
		now = time.Now
	}
	return &AttemptBudget{now: now, left: calls, deadline: now().Add(d)}
}

// Take spends one call when one is left and the deadline is ahead;
// false: the budget is spent. A nil budget allows everything.
func (b *AttemptBudget) Take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left <= 0 || !b.now().Before(b.deadline) {
		return false
	}
	b.left--
	return true
}

// CanTake reports whether a call starting after wait would be within the
// budget, without spending it.
func (b *AttemptBudget) CanTake(wait time.Duration) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left > 0 && b.now().Add(wait).Before(b.deadline)
}

// Remaining is the time left before the deadline (0 when past); ok is
// false for a nil budget (no bound).
func (b *AttemptBudget) Remaining() (d time.Duration, ok bool) {
	if b == nil {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.deadline.Sub(b.now()), 0), true
}
