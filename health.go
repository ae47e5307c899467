package gw

import "time"

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
