// Package redis is the gw.Limiter for a gateway scaled out to several
// instances: every instance keeps its per-key request and token counts in
// one Redis, so a key's limits hold across all of them instead of
// multiplying by the number of instances. A single instance uses the
// in-memory limiter of package ratelimit instead; both enforce the same
// sliding window with the same answers and pass the same conformance
// suite.
//
// # Window
//
// Each key is one Redis hash of one-second buckets; a request is admitted
// when the current bucket and the 60 before it, plus this request, stay
// within RPM and TPM. In any 60-second interval a key is never admitted
// more than RPM requests nor more than TPM reserved tokens (except, as in
// package ratelimit, a single request larger than TPM, admitted only into
// an empty token window, and tokens added later by Adjust). A Lua script
// reads, decides and counts in one step, so concurrent instances cannot
// both take the last slot. The script runs with EVALSHA, falling back to
// EVAL when the server does not have it cached. Each key expires 62
// seconds after its last count, when all its buckets have left the
// window.
//
// # Time
//
// By default the script reads the Redis server's clock (TIME), so every
// instance counts on one time line whatever the skew between their own
// clocks. Options.Now makes it use the caller's clock instead (tests,
// or a deployment that prefers it); instances' clocks must then agree to
// well under a second. Either way a clock that steps back never lets a
// count leave the window early.
//
// # Failure
//
// When Redis cannot be reached (or the call exceeds Options.Timeout),
// Allow returns a non-nil error wrapping ErrUnavailable together with a
// decision that already applies the fail mode, and callers log the error
// and obey the decision's Allowed:
//
//   - FailOpen false (the zero value): fail closed. The decision denies
//     with a one-second RetryAfter, and the error is a *gw.Error with
//     CodeOverloaded (503, Retry-After 1), so a caller that simply
//     returns the error answers correctly. Limits stay global at the
//     price of availability while Redis is down.
//   - FailOpen true: the decision admits (RequestsRemaining reports the
//     full limit) and the error is only for logging. The gateway stays up
//     and unlimited while Redis is down; no per-instance fallback counts,
//     so a long outage is visible in logs rather than silently turning a
//     global limit into a per-instance one.
//
// Adjust returns the error in both modes; it changes only a reservation,
// so callers log it and go on.
package redis

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	gw "github.com/gwlabs/gateway"
)

// ErrUnavailable is wrapped by the errors Allow and Adjust return when
// Redis could not be used.
var ErrUnavailable = errors.New("rate limiter unavailable")

// DefaultPrefix is the key prefix used when Options.Prefix is empty.
const DefaultPrefix = "gw:ratelimit:"

// DefaultTimeout bounds one Redis round trip when Options.Timeout is zero.
const DefaultTimeout = 250 * time.Millisecond

// ttl is how long a key's hash outlives its last count: the 61 buckets
// of the window plus a second of slack.
const ttl = 62 * time.Second

//go:embed allow.lua
var allowSrc string

//go:embed adjust.lua
var adjustSrc string

// Options configures a Limiter. The zero value is ready to use.
type Options struct {
	// Prefix is put before every key name in Redis. Empty means
	// DefaultPrefix.
	Prefix string
	// FailOpen admits requests while Redis is unreachable; the default
	// denies them. See the package doc.
	FailOpen bool
	// Timeout bounds each Redis call. Zero means DefaultTimeout;
	// negative means only the caller's context bounds it. The client
	// honours it (and the caller's deadline) only when its options have
	// ContextTimeoutEnabled, as ParseURL's clients do; otherwise its own
	// dial, read and write timeouts apply.
	Timeout time.Duration
	// Now, when set, supplies the time instead of the Redis server's
	// clock. See the package doc.
	Now func() time.Time
}

// Limiter is a gw.Limiter whose counts live in Redis, shared by every
// gateway instance that uses the same Redis and Prefix. Its methods are
// safe for concurrent use. It does not own the client: close that
// yourself.
type Limiter struct {
	client   goredis.UniversalClient
	prefix   string
	failOpen bool
	timeout  time.Duration
	now      func() time.Time
	allow    *goredis.Script
	adjust   *goredis.Script
}

// New returns a Limiter that keeps its counts in client.
func New(client goredis.UniversalClient, opts Options) *Limiter {
	l := &Limiter{
		client:   client,
		prefix:   opts.Prefix,
		failOpen: opts.FailOpen,
		timeout:  opts.Timeout,
		now:      opts.Now,
		allow:    goredis.NewScript(allowSrc),
		adjust:   goredis.NewScript(adjustSrc),
	}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	return l
}

// ParseURL returns a client for a redis:// or rediss:// URL, such as
// redis://:password@host:6379/0, with context deadlines enabled so that
// Options.Timeout takes effect. The error never contains the URL, which
// may hold a password.
func ParseURL(rawURL string) (*goredis.Client, error) {
	opts, err := goredis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	return goredis.NewClient(opts), nil
}

// Allow counts one request and reserves tokens for key when both fit in
// lim, atomically across every instance sharing the Redis. On a Redis
// failure it returns an error wrapping ErrUnavailable and a decision
// following the fail mode; see the package doc.
func (l *Limiter) Allow(ctx context.Context, key string, lim gw.Limit, tokens int64) (gw.LimitDecision, error) {
	if lim.RPM <= 0 && lim.TPM <= 0 {
		return gw.LimitDecision{Allowed: true}, nil
	}
	rpm, tpm := max(lim.RPM, 0), max(lim.TPM, 0)
	ctx, cancel := l.bound(ctx)
	defer cancel()
	res, err := l.allow.Run(ctx, l.client, []string{l.prefix + key},
		rpm, tpm, max(tokens, 0), l.nowArg(), ttl.Milliseconds()).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("unexpected script reply %v", res)
	}
	if err != nil {
		return l.fail(rpm, fmt.Errorf("%w: redis allow: %w", ErrUnavailable, err))
	}
	d := gw.LimitDecision{
		Allowed:       res[0] == 1,
		RequestsLimit: rpm,
	}
	if rpm > 0 {
		d.RequestsRemaining = max(rpm-res[1], 0)
	}
	if !d.Allowed {
		d.RetryAfter = max(time.Duration(res[2])*time.Microsecond, time.Millisecond)
	}
	return d, nil
}

// fail answers a request Redis could not decide, per the fail mode.
func (l *Limiter) fail(rpm int64, err error) (gw.LimitDecision, error) {
	if l.failOpen {
		return gw.LimitDecision{Allowed: true, RequestsLimit: rpm, RequestsRemaining: rpm}, err
	}
	return gw.LimitDecision{RequestsLimit: rpm, RetryAfter: time.Second}, &gw.Error{
		Code:       gw.CodeOverloaded,
		Message:    "rate limiter unavailable, retry shortly",
		Err:        err,
		RetryAfter: time.Second,
	}
}

// Adjust adds delta tokens to key's window (delta = real - estimate; a
// negative delta is refunded from the newest buckets, never below zero).
// It does nothing when lim.TPM is unlimited.
func (l *Limiter) Adjust(ctx context.Context, key string, lim gw.Limit, delta int64) error {
	if lim.TPM <= 0 || delta == 0 {
		return nil
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()
	err := l.adjust.Run(ctx, l.client, []string{l.prefix + key},
		delta, l.nowArg(), ttl.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("%w: redis adjust: %w", ErrUnavailable, err)
	}
	return nil
}

func (l *Limiter) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if l.timeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, l.timeout)
}

// nowArg is the script's time argument: the caller's clock in
// microseconds, or "" for the server's TIME.
func (l *Limiter) nowArg() string {
	if l.now == nil {
		return ""
	}
	return strconv.FormatInt(l.now().UnixMicro(), 10)
}

var _ gw.Limiter = (*Limiter)(nil)
