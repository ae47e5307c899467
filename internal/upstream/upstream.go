// Package upstream is the HTTP client every vendor adapter sends through:
// one tuned transport per vendor (a keep-alive pool sized for high
// concurrency, HTTP/2 where the vendor offers it), connect, first-byte and
// stream-idle timeouts, and bounded, jittered retries that honour
// Retry-After, taken only before any answer is handed back (so never after
// a byte reached the caller). It also maps a vendor's failure status to the
// gateway's error codes (StatusError), which each adapter's errors.go
// calls after extracting the vendor's message.
package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Config tunes a Client. Zero fields take the documented defaults.
type Config struct {
	// ConnectTimeout bounds dialing and the TLS handshake (default 10s).
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait for the response headers after the
	// request was sent (default 5m: a non-streaming answer arrives whole).
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the silence between two reads of a response body
	// (default 2m).
	IdleTimeout time.Duration
	// MaxRetries is the number of retries after the first attempt
	// (default 2; negative: none).
	MaxRetries int
	// RetryBase is the first backoff (default 250ms), doubled each retry,
	// with full jitter.
	RetryBase time.Duration
	// MaxRetryWait caps a wait the vendor asks for with Retry-After; a
	// longer ask is not retried but answered (default 5s).
	MaxRetryWait time.Duration
	// MaxConnsPerHost bounds idle keep-alive connections kept per host
	// (default 512).
	MaxConnsPerHost int
	// Transport, when set, replaces the tuned transport (tests).
	Transport http.RoundTripper
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ConnectTimeout, 10*time.Second)
	def(&c.FirstByteTimeout, 5*time.Minute)
	def(&c.IdleTimeout, 2*time.Minute)
	def(&c.RetryBase, 250*time.Millisecond)
	def(&c.MaxRetryWait, 5*time.Second)
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = 512
	}
	return c
}

// Client sends requests to one vendor.
type Client struct {
	vendor string
	cfg    Config
	hc     *http.Client
	// sleep waits between retries; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a Client for the named vendor (the name prefixes errors).
func New(vendor string, cfg Config) *Client {
	cfg = cfg.withDefaults()
	rt := cfg.Transport
	if rt == nil {
		d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
		rt = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          0,
			MaxIdleConnsPerHost:   cfg.MaxConnsPerHost,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   cfg.ConnectTimeout,
			ResponseHeaderTimeout: cfg.FirstByteTimeout,
			ExpectContinueTimeout: time.Second,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
			// The gateway relays bodies as they come: no transparent
			// gzip, which would also hide the vendor's framing.
			DisableCompression: true,
		}
	}
	return &Client{vendor: vendor, cfg: cfg, hc: &http.Client{Transport: rt}, sleep: sleepCtx}
}

// CloseIdle closes idle pooled connections.
func (c *Client) CloseIdle() { c.hc.CloseIdleConnections() }

// Request is one upstream call. Body is kept so a retry can resend it.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Do sends req and returns the vendor's answer, whatever its status, with
// the body wrapped so that IdleTimeout applies to every read. It retries
// connect failures, 429 and 5xx/529 answers up to MaxRetries times before
// returning. A transport failure comes back as *gw.Error
// (upstream_timeout or upstream_error); a cancelled ctx as ctx.Err().
func (c *Client) Do(ctx context.Context, req *Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, req)
		last := attempt >= c.cfg.MaxRetries
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if last || !isConnectError(err) {
				return nil, c.transportError(err)
			}
			if err := c.sleep(ctx, c.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		if last || !retryableStatus(resp.StatusCode) {
			return resp, nil
		}
		wait := c.backoff(attempt)
		if ra, ok := RetryAfter(resp.Header, time.Now()); ok {
			if ra > c.cfg.MaxRetryWait {
				return resp, nil // the vendor asks for more than we wait: answer now
			}
			wait = ra
		}
		drain(resp.Body)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func (c *Client) once(ctx context.Context, req *Request) (*http.Response, error) {
	rctx, cancel := context.WithCancel(ctx)
	hr, err := http.NewRequestWithContext(rctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build request: %w", err)
	}
	hr.Header = req.Header.Clone()
	if hr.Header == nil {
		hr.Header = http.Header{}
	}
	hr.ContentLength = int64(len(req.Body))
	resp, err := c.hc.Do(hr)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = newIdleBody(resp.Body, c.cfg.IdleTimeout, cancel, c.vendor)
	return resp, nil
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBase << attempt
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func (c *Client) transportError(err error) *gw.Error {
	// A *url.Error names the upstream URL; keep only its cause, so that
	// no vendor address reaches a log line.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	// A *net.OpError names the upstream address: keep the operation and
	// the system's reason ("dial: connect: connection refused").
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = &redactedOpError{op: oe.Op, err: oe.Err, timeout: oe.Timeout()}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &gw.Error{Code: gw.CodeUpstreamTimeout, Message: c.vendor + ": the vendor did not answer in time", Err: err}
	}
	return &gw.Error{Code: gw.CodeUpstream, Message: c.vendor + ": could not reach the vendor", Err: err}
}

// redactedOpError is a *net.OpError without the addresses.
type redactedOpError struct {
	op      string
	err     error
	timeout bool
}

func (e *redactedOpError) Error() string   { return e.op + ": " + e.err.Error() }
func (e *redactedOpError) Unwrap() error   { return e.err }
func (e *redactedOpError) Timeout() bool   { return e.timeout }
func (e *redactedOpError) Temporary() bool { return false }

func isConnectError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return false
}

func retryableStatus(s int) bool {
	return s == http.StatusTooManyRequests || s >= 500
}

func drain(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 64<<10)
	_ = b.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// idleBody cancels the request when a read waits on the vendor for longer
// than the idle timeout, and reports that as upstream_timeout. The timer
// runs only while a Read is in progress: time the consumer spends between
// reads (writing to a slow caller) is the caller's, bounded by the
// server's write deadline, and never counts as vendor silence.
type idleBody struct {
	rc     io.ReadCloser
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelFunc
	vendor string

	mu    sync.Mutex // guards fired
	fired bool
}

func newIdleBody(rc io.ReadCloser, idle time.Duration, cancel context.CancelFunc, vendor string) *idleBody {
	b := &idleBody{rc: rc, idle: idle, cancel: cancel, vendor: vendor}
	b.timer = time.AfterFunc(idle, func() {
		b.mu.Lock()
		b.fired = true
		b.mu.Unlock()
		cancel()
	})
	b.timer.Stop() // armed by each Read
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.idle)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF {
		b.mu.Lock()
		fired := b.fired
		b.mu.Unlock()
		if fired {
			return n, &gw.Error{Code: gw.CodeUpstreamTimeout, Message: b.vendor + ": the vendor stream went silent", Err: err}
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	return err
}

// StatusError maps a vendor's failure status to the gateway's error, with
// the vendor's own message (already extracted from its error body by the
// adapter) prefixed by the vendor name. Credential failures at the vendor
// (401, 403) are the gateway's fault, not the caller's: their message is
// replaced so that nothing about the vendor key leaks.
func StatusError(vendor string, status int, h http.Header, msg string) *gw.Error {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &gw.Error{Message: vendor + ": " + msg, Err: fmt.Errorf("%s answered %d: %s", vendor, status, msg)}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// The vendor's text may quote part of our key: keep it out of
		// the message and the logs alike.
		e.Code = gw.CodeUpstream
		e.Message = vendor + ": the vendor refused the gateway's credentials"
		e.Err = fmt.Errorf("%s answered %d (credentials refused; vendor text withheld)", vendor, status)
	case status == http.StatusPaymentRequired:
		e.Code, e.NoRetry = gw.CodeUpstream, true
	case status == http.StatusNotFound:
		e.Code = gw.CodeNotFound
		e.Message = "model_not_found: " + e.Message
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Code = gw.CodeUpstreamTimeout
	case status == http.StatusRequestEntityTooLarge:
		e.Code = gw.CodeRequestTooLarge
	case status == http.StatusTooManyRequests:
		e.Code = gw.CodeRateLimited
		e.RetryAfter = time.Second
		if ra, ok := RetryAfter(h, time.Now()); ok && ra > 0 {
			e.RetryAfter = ra
		}
	case status == http.StatusServiceUnavailable || status == 529:
		e.Code = gw.CodeOverloaded
		if ra, ok := RetryAfter(h, time.Now()); ok && ra > 0 {
			e.RetryAfter = ra
		}
	case status >= 500:
		e.Code = gw.CodeUpstream
	default:
		e.Code = gw.CodeInvalidRequest
	}
	return e
}

// RetryAfter reads how long the vendor asks to wait: retry-after-ms,
// retry-after (seconds or an HTTP date), then the rate-limit reset headers
// (OpenAI's x-ratelimit-reset-* durations like "6s" or "1m30s",
// Anthropic's anthropic-ratelimit-*-reset RFC 3339 times).
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	var best time.Duration
	found := false
	for k, vs := range h {
		lk := strings.ToLower(k)
		if len(vs) == 0 {
			continue
		}
		var d time.Duration
		switch {
		case strings.HasPrefix(lk, "x-ratelimit-reset-"):
			pd, err := time.ParseDuration(vs[0])
			if err != nil {
				continue
			}
			d = pd
		case strings.HasPrefix(lk, "anthropic-ratelimit-") && strings.HasSuffix(lk, "-reset"):
			t, err := time.Parse(time.RFC3339, vs[0])
			if err != nil {
				continue
			}
			d = max(t.Sub(now), 0)
		default:
			continue
		}
		if !found || d > best {
			best, found = d, true
		}
	}
	return best, found
}

// ReadErrorBody reads at most 1 MiB of an error body and closes it.
func ReadErrorBody(b io.ReadCloser) []byte {
	defer b.Close()
	data, _ := io.ReadAll(io.LimitReader(b, 1<<20))
	return data
}
