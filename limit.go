package gw

import (
	"context"
	"time"
)

// Limit is a key's rate limit; zero fields are unlimited.
type Limit struct {
	RPM int64 // requests per minute
	TPM int64 // tokens per minute
}

// LimitDecision is a Limiter's answer.
type LimitDecision struct {
	Allowed           bool
	RequestsLimit     int64
	RequestsRemaining int64
	RetryAfter        time.Duration // when not allowed
}

// Limiter enforces per-key limits. Allow counts one request and reserves
// tokens (an estimate) against the minute's windows; Adjust reconciles the
// reservation with the real count (delta may be negative).
type Limiter interface {
	Allow(ctx context.Context, key string, lim Limit, tokens int64) (LimitDecision, error)
	Adjust(ctx context.Context, key string, lim Limit, delta int64) error
}
