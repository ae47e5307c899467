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
// When Redis cannot be reached (or the call exceeds Options.Timeout), a
// circuit breaker opens: for Options.Cooldown (default 5 s) no call goes
// to Redis at all, so an outage costs one time-out per cooldown rather
// than one per request; then one request probes it again. While the
// breaker is open, Degraded reports it. What a request gets meanwhile
// depends on the mode:
//
//   - Options.Fallback set (the gateway's default): the fallback limiter,
//     in this instance's memory, decides with each limit divided by
//     Options.Instances (at least 1), so that N instances together stay
//     near the global limit. Allow returns no error: the decision is a
//     real one (429 past the per-instance share); the limiter logs the
//     outage and the recovery once each.
//   - FailOpen false, no fallback: fail closed. The decision denies with
//     a one-second RetryAfter, and the error is a *gw.Error with
//     CodeOverloaded (503, Retry-After 1), so a caller that simply
//     returns the error answers correctly.
//   - FailOpen true, no fallback: the decision admits (RequestsRemaining
//     reports the full limit) and the error is only for logging.
//
// In the last two modes Allow's error wraps ErrUnavailable. Adjust
// returns the error too (it changes only a reservation, so callers log
// it and go on), except with a fallback, which it adjusts instead.
//
// # Round trips
//
// Allow is one round trip (one script). Adjust, by default, is another.
// With Options.AdjustDelay set (the gateway sets it), Adjust makes none:
// it adds the correction to the key's pending total in this instance's
// memory, and the key's next Allow here carries it into its script,
// which applies it before it decides; a key with no Allow meanwhile has
// its corrections sent after at most AdjustDelay, every pending key in
// one pipelined round trip. So a request costs one round trip to Redis,
// not two. What it costs: this instance's own decisions see every
// correction at once, but other instances see it up to AdjustDelay
// late, and a correction counts in the bucket of the second it reaches
// Redis, not of the Adjust call; a crash loses the corrections of the
// last AdjustDelay at most (Close sends them).
package redis

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// DefaultCooldown is how long the breaker keeps Redis out of the path
// after a failure, when Options.Cooldown is zero.
const DefaultCooldown = 5 * time.Second

// dialTimeout bounds a connection attempt of ParseURL's clients: an
// unreachable Redis must fail fast, not at go-redis's 5 s default.
const dialTimeout = 250 * time.Millisecond

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
	// Fallback decides while Redis is unreachable, with each limit
	// divided by Instances (the number of gateway instances sharing the
	// Redis; zero means 1). See the package doc.
	Fallback  gw.Limiter
	Instances int64
	// Cooldown is how long the breaker stays open after a failure; zero
	// means DefaultCooldown.
	Cooldown time.Duration
	// Logger receives the outage and the recovery; nil: discarded.
	Logger *slog.Logger
	// AdjustDelay, when positive, defers Adjust's corrections: they ride
	// on the key's next Allow, or are sent at most this long after they
	// were made (see Round trips in the package doc). Zero: Adjust calls
	// Redis itself. A Limiter with it set should be closed.
	AdjustDelay time.Duration
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

	fallback  gw.Limiter
	instances int64
	cooldown  time.Duration
	log       *slog.Logger
	// openUntil is when the breaker lets a probe through (Unix ns); 0:
	// closed. lastErr is the failure that opened it.
	openUntil atomic.Int64
	lastErr   atomic.Pointer[error]

	// delay is Options.AdjustDelay; pending holds the deferred
	// corrections by Redis key, and flushing is the timer that sends
	// them (nil: none pending or deferral off).
	delay    time.Duration
	mu       sync.Mutex
	pending  map[string]correction // guarded by mu
	flushing *time.Timer           // guarded by mu
	closed   bool                  // guarded by mu
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
	l.fallback, l.instances, l.cooldown, l.log = opts.Fallback, max(opts.Instances, 1), opts.Cooldown, opts.Logger
	l.delay = max(opts.AdjustDelay, 0)
	if l.cooldown <= 0 {
		l.cooldown = DefaultCooldown
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l
}

// Degraded reports whether Redis is out of the path (the breaker is open
// after a failure), and why.
func (l *Limiter) Degraded() (bool, error) {
	if l.openUntil.Load() == 0 {
		return false, nil
	}
	var err error
	if p := l.lastErr.Load(); p != nil {
		err = *p
	}
	return true, err
}

// skip reports whether the breaker keeps this call away from Redis. Once
// the cooldown is over, one caller at a time probes.
func (l *Limiter) skip() bool {
	until := l.openUntil.Load()
	if until == 0 {
		return false
	}
	now := time.Now().UnixNano()
	if now < until {
		return true
	}
	// Let this call probe; the others keep skipping for another cooldown
	// unless it succeeds.
	return !l.openUntil.CompareAndSwap(until, now+int64(l.cooldown))
}

// trip opens the breaker after a failure.
func (l *Limiter) trip(err error) {
	l.lastErr.Store(&err)
	if l.openUntil.Swap(time.Now().Add(l.cooldown).UnixNano()) == 0 {
		l.log.Error("redis unreachable: rate limits fall back", "err", err, "fallback", l.mode(), "cooldown", l.cooldown)
	}
}

// heal closes the breaker after a success.
func (l *Limiter) heal() {
	if l.openUntil.Load() != 0 && l.openUntil.Swap(0) != 0 {
		l.log.Info("redis reachable again: rate limits are global again")
	}
}

func (l *Limiter) mode() string {
	switch {
	case l.fallback != nil:
		return fmt.Sprintf("in-memory, limits divided by %d", l.instances)
	case l.failOpen:
		return "open"
	}
	return "closed"
}

// share is this instance's part of lim while Redis is down.
func (l *Limiter) share(lim gw.Limit) gw.Limit {
	div := func(n int64) int64 {
		if n <= 0 {
			return n
		}
		return max(n/l.instances, 1)
	}
	return gw.Limit{RPM: div(lim.RPM), TPM: div(lim.TPM)}
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
	if opts.DialTimeout == 0 {
		opts.DialTimeout = dialTimeout
	}
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
	if l.skip() {
		return l.fail(ctx, key, lim, tokens, l.breakerErr())
	}
	rctx, cancel := l.bound(ctx)
	defer cancel()
	rkey := l.prefix + key
	adj := l.take(rkey)
	res, err := l.allow.Run(rctx, l.client, []string{rkey},
		rpm, tpm, max(tokens, 0), l.nowArg(), ttl.Milliseconds(), adj).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("unexpected script reply %v", res)
	}
	if err != nil {
		err = fmt.Errorf("%w: redis allow: %w", ErrUnavailable, err)
		if ctx.Err() == nil { // not the caller going away
			l.trip(err)
		}
		if adj != 0 && l.fallback != nil {
			l.fallback.Adjust(ctx, key, l.share(lim), adj)
		}
		return l.fail(ctx, key, lim, tokens, err)
	}
	l.heal()
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

// breakerErr is the error of a call the open breaker kept from Redis.
func (l *Limiter) breakerErr() error {
	if _, err := l.Degraded(); err != nil {
		return err
	}
	return fmt.Errorf("%w: redis circuit open", ErrUnavailable)
}

// fail answers a request Redis could not decide, per the fail mode.
func (l *Limiter) fail(ctx context.Context, key string, lim gw.Limit, tokens int64, err error) (gw.LimitDecision, error) {
	if l.fallback != nil {
		return l.fallback.Allow(ctx, key, l.share(lim), tokens)
	}
	rpm := max(lim.RPM, 0)
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
	if l.skip() {
		if l.fallback != nil {
			return l.fallback.Adjust(ctx, key, l.share(lim), delta)
		}
		return l.breakerErr()
	}
	if l.defer_(key, lim, delta) {
		return nil
	}
	rctx, cancel := l.bound(ctx)
	defer cancel()
	err := l.adjust.Run(rctx, l.client, []string{l.prefix + key},
		delta, l.nowArg(), ttl.Milliseconds()).Err()
	if err != nil {
		err = fmt.Errorf("%w: redis adjust: %w", ErrUnavailable, err)
		if ctx.Err() == nil {
			l.trip(err)
		}
		if l.fallback != nil {
			return l.fallback.Adjust(ctx, key, l.share(lim), delta)
		}
		return err
	}
	l.heal()
	return nil
}

// correction is a key's pending token correction, with the limit of its
// latest Adjust (for the fallback's share).
type correction struct {
	key   string
	lim   gw.Limit
	delta int64
}

// defer_ adds delta to rkey's pending correction and reports whether it
// did (false: deferral is off or the limiter closed).
func (l *Limiter) defer_(key string, lim gw.Limit, delta int64) bool {
	if l.delay <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if l.pending == nil {
		l.pending = map[string]correction{}
	}
	rkey := l.prefix + key
	if v := l.pending[rkey].delta + delta; v != 0 {
		l.pending[rkey] = correction{key, lim, v}
	} else {
		delete(l.pending, rkey)
	}
	if l.flushing == nil && len(l.pending) > 0 {
		l.flushing = time.AfterFunc(l.delay, func() {
			ctx, cancel := context.WithTimeout(context.Background(), max(l.timeout, DefaultTimeout))
			defer cancel()
			if err := l.Flush(ctx); err != nil {
				l.log.Warn("redis: deferred rate limit corrections not sent", "err", err)
			}
		})
	}
	return true
}

// take removes and returns rkey's pending correction (0: none).
func (l *Limiter) take(rkey string) int64 {
	if l.delay <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.pending[rkey]
	delete(l.pending, rkey)
	return c.delta
}

// Flush sends every pending correction now, in one pipelined round trip.
// On failure the corrections go to the fallback when there is one, and
// are dropped otherwise (as a failed Adjust's would be).
func (l *Limiter) Flush(ctx context.Context) error {
	l.mu.Lock()
	all := l.pending
	l.pending = nil
	if l.flushing != nil {
		l.flushing.Stop()
		l.flushing = nil
	}
	l.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	var err error
	if !l.skip() {
		rctx, cancel := l.bound(ctx)
		defer cancel()
		now := l.nowArg()
		cmds := map[string]*goredis.Cmd{}
		_, err = l.client.Pipelined(rctx, func(p goredis.Pipeliner) error {
			for rkey, c := range all {
				cmds[rkey] = l.adjust.EvalSha(rctx, p, []string{rkey}, c.delta, now, ttl.Milliseconds())
			}
			return nil
		})
		if err != nil && strings.Contains(err.Error(), "NOSCRIPT") {
			// The server lost its script cache: once more, each with
			// its body.
			err = nil
			for rkey, c := range all {
				if cmds[rkey].Err() != nil {
					err = errors.Join(err, l.adjust.Run(rctx, l.client, []string{rkey}, c.delta, now, ttl.Milliseconds()).Err())
				}
			}
		}
		if err == nil {
			l.heal()
			return nil
		}
		err = fmt.Errorf("%w: redis adjust: %w", ErrUnavailable, err)
		if ctx.Err() == nil {
			l.trip(err)
		}
	} else {
		err = l.breakerErr()
	}
	if l.fallback != nil {
		for _, c := range all {
			l.fallback.Adjust(ctx, c.key, l.share(c.lim), c.delta)
		}
		return nil
	}
	return err
}

// Close sends the pending corrections and stops deferring: Adjust calls
// Redis itself from now on. It does not close the client.
func (l *Limiter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), max(l.timeout, DefaultTimeout))
	defer cancel()
	return l.Flush(ctx)
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
