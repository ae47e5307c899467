// Package upstream is the HTTP client every vendor adapter sends through:
// one tuned transport per vendor (a keep-alive pool sized for high
// concurrency, HTTP/2 where the vendor offers it), connect, first-byte and
// stream-idle timeouts, and bounded, jittered retries that honour
// Retry-After, taken only before any answer is handed back (so never after
// a byte reached the caller). It also maps a vendor's failure status to the
// gateway's error codes (StatusError), which each adapter's errors.go
// calls after extracting the vendor's message.
//
// Retries: a connection error (refused, reset, closed before an answer),
// a first byte that does not come within FirstByteTimeout (headers, then
// the body's first bytes), and the statuses 408, 429, 500, 502, 503, 504
// and 529 are retried, at most MaxRetries times and only while the retry
// can start within RetryBudget of the request's arrival; the wait is
// exponential from RetryBase with full jitter, or what the vendor asks
// for (retry-after-ms, Retry-After) when it asks for at most
// MaxRetryWait. Any other status is the vendor's answer, never retried.
//
// Keys and breakers: a Client spreads calls over the vendor's keys (a
// pool, pool.go): weighted at random or to the key with the fewest calls
// in flight. A key answered 429 rests only when the vendor says the 429
// is about the key (x-ratelimit-remaining-*: 0, anthropic-ratelimit-*-
// remaining: 0, an error type of the key's request quota, or Google's
// QuotaFailure naming a quota of the key's project: rpcstatus.go), for
// the wait the vendor asked (Retry-After, or Google's RetryInfo delay in
// the body) and never longer than KeyRestMax; a 429 about one
// request (too large for the minute's tokens) rests nothing. A key
// answered 401 or 403 is taken out of the pool only when the gateway's
// own Probe, sent with that key, is refused too (at most one probe per
// key per BreakerInterval); a refusal of a request that carried headers
// the caller chose (CallerHeaders) is the caller's, answered
// invalid_request, and touches no key.
// The vendor and each key have a circuit breaker (breaker.go): after
// BreakerFailures failures in a row from at least BreakerAccounts
// distinct accounts (the gw.CallScope's), or confirmed by the gateway's
// own probe, it opens, and calls fail at once with overloaded and
// Retry-After; every BreakerInterval one call probes, and a probe that
// succeeds closes it. Each account also has a breaker of its own, which
// slows only that account's calls. Failures a caller's input causes
// (4xx, 413) never count. Health reports the state.
//
// Attempt budget: a request's context may carry a gw.AttemptBudget
// (gw.CallScope): every call, retry and fallback takes one of its calls,
// none starts after its deadline, and each first-byte wait ends at the
// deadline.
package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// RetryBudget bounds the time before the first byte within which a
	// retry may start, counted from Request.Start (default 30s).
	RetryBudget time.Duration
	// Keys is the vendor's key pool (set by the adapter from its
	// configured keys); empty: the adapter sets its own credentials.
	Keys []Key
	// Spread is how calls are spread over Keys: SpreadWeighted (default)
	// or SpreadLeastInFlight.
	Spread string
	// BreakerFailures is the run of failures that opens a breaker
	// (default 5; negative: no breakers); BreakerInterval how long it
	// stays open before one probe (default 10s).
	BreakerFailures int
	BreakerInterval time.Duration
	// KeyRestMax caps how long a key rests after a 429 about the key, and
	// the wait a vendor's 429 or 503 passes on to the caller as
	// Retry-After (default 60s).
	KeyRestMax time.Duration
	// BreakerAccounts is how many distinct accounts a run of failures
	// must come from to open the vendor's or a key's breaker (default 3;
	// 1: any account's). A run from fewer is confirmed by Probe first.
	BreakerAccounts int
	// Probe is the gateway's own minimal request to the vendor (its
	// models list): it confirms that the vendor refuses a key before the
	// key is taken out, and that the vendor fails before a run of
	// failures from too few accounts opens a breaker. Nil: no key is
	// taken out, and such a run opens nothing (the accounts' own breakers
	// still slow them).
	Probe *Probe
	// CallerHeaders names the request headers that carry values the
	// caller chose (forwarded to the vendor): a 401 or 403 on a request
	// with one is the caller's.
	CallerHeaders []string
	// Logger reports keys taken out and breakers opening (default:
	// discarded).
	Logger *slog.Logger
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
	def(&c.RetryBudget, 30*time.Second)
	def(&c.BreakerInterval, 10*time.Second)
	def(&c.KeyRestMax, 60*time.Second)
	if c.BreakerAccounts == 0 {
		c.BreakerAccounts = 3
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = 5
	}
	if c.Spread == "" {
		c.Spread = SpreadWeighted
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
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

// Probe is the gateway's own request to a vendor: a minimal call that
// costs nothing (the models list). Auth sets a pool key on it.
type Probe struct {
	Method string // default GET
	URL    string
	Header http.Header
	Auth   func(h http.Header, secret string)
}

// Client sends requests to one vendor.
type Client struct {
	vendor string
	cfg    Config
	hc     *http.Client
	br     *breaker
	pool   *pool // nil: no keys configured here
	// accts are the accounts' own breakers.
	amu   sync.Mutex
	accts map[string]*breaker
	// sleep waits between retries and now is the clock; tests replace
	// them.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// New returns a Client for the named vendor (the name prefixes errors).
func New(vendor string, cfg Config) *Client {
	cfg = cfg.withDefaults()
	rt := cfg.Transport
	if rt == nil {
		d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
		rt = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialSending(d),
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
	c := &Client{vendor: vendor, cfg: cfg, hc: &http.Client{Transport: rt}, sleep: sleepCtx, now: time.Now,
		br: newSharedBreaker(cfg.BreakerFailures, cfg.BreakerInterval, cfg.BreakerAccounts), accts: map[string]*breaker{}}
	if len(cfg.Keys) > 0 {
		c.pool = newPool(cfg.Keys, cfg.Spread, cfg.BreakerFailures, cfg.BreakerInterval, cfg.BreakerAccounts)
	}
	return c
}

// Health reports the vendor's breaker and key pool.
func (c *Client) Health(now time.Time) gw.VendorHealth {
	state, failures, retryAt, opened := c.br.snapshot(now)
	h := gw.VendorHealth{Vendor: c.vendor, Breaker: state, Failures: failures, Opened: opened}
	if state == gw.BreakerOpen {
		h.RetryAt = retryAt
	}
	if c.pool != nil {
		h.Keys = c.pool.health(now)
	}
	return h
}

// CloseIdle closes idle pooled connections.
func (c *Client) CloseIdle() { c.hc.CloseIdleConnections() }

// Request is one upstream call. Body is kept so a retry can resend it.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Auth sets a pool key's secret on each attempt's headers (the
	// vendor's own header); nil, or a Client without keys: Header
	// carries the credentials.
	Auth func(h http.Header, secret string)
	// Start is when the caller's request arrived, from which RetryBudget
	// counts (zero: when Do is called).
	Start time.Time
}

// Do sends req and returns the vendor's answer, whatever its status, with
// the body wrapped so that IdleTimeout applies to every read. It retries
// as the package documentation says before returning. A transport
// failure comes back as *gw.Error (upstream_timeout or upstream_error),
// an open breaker or a pool without a usable key as overloaded (with
// RetryAfter) or vendor_unavailable, a spent attempt budget as
// upstream_timeout, a refusal of the caller's forwarded headers as
// invalid_request, and a cancelled ctx as ctx.Err(). A Retry-After the
// answer carries is at most KeyRestMax.
func (c *Client) Do(ctx context.Context, req *Request) (*http.Response, error) {
	start := req.Start
	if start.IsZero() {
		start = c.now()
	}
	scope := gw.CallScopeFrom(ctx)
	acct, bud := scope.Account, scope.Budget
	ab := c.accountBreaker(acct)
	forwarded := c.forwarded(req.Header)
	for attempt := 0; ; attempt++ {
		now := c.now()
		aok, aprobe, await := ab.allow(now)
		if !aok {
			return nil, c.accountOpenError(await)
		}
		ok, probe, wait := c.br.allow(now)
		if !ok {
			ab.done(now, aprobe, outcomeNone, "")
			return nil, c.openError(wait)
		}
		var l lease
		if c.pool != nil {
			var err error
			if l, err = c.pool.pick(now, c.vendor, nil); err != nil {
				ab.done(now, aprobe, outcomeNone, "")
				c.br.done(now, probe, outcomeNone, acct)
				return nil, err
			}
		}
		if c.cfg.Probe != nil && (probe && c.br.shared() || l.probe && l.k.br.shared()) {
			// The half-open trial of a shared breaker is the gateway's
			// own probe, never a caller's call (whose failure may be its
			// own doing): the caller goes on only once the probe passed.
			vendorFailed, keyFailed := c.trial(l, &probe)
			if vendorFailed || keyFailed {
				now = c.now()
				if l.k != nil {
					c.pool.release(now, l, outcomeNone, acct)
				}
				ab.done(now, aprobe, outcomeNone, "")
				c.br.done(now, probe, outcomeNone, acct)
				if vendorFailed {
					return nil, c.openError(c.cfg.BreakerInterval)
				}
				attempt-- // the key's breaker is open again: another key
				continue
			}
			l.probe = false
		}
		if !bud.Take() {
			if l.k != nil {
				c.pool.release(now, l, outcomeNone, acct)
			}
			ab.done(now, aprobe, outcomeNone, "")
			c.br.done(now, probe, outcomeNone, acct)
			return nil, c.spentError()
		}
		resp, err := c.once(ctx, req, l.k, bud)
		o := outcomeOK
		var te *timeoutError
		switch {
		case err != nil && ctx.Err() != nil:
			o = outcomeNone
		case errors.As(err, &te) && te.budget:
			// The request's own time budget ended the wait, not the
			// vendor's first-byte limit: nothing said of the vendor.
			o = outcomeNone
		case err != nil, failureStatus(resp.StatusCode):
			o = outcomeFailure
		case resp.StatusCode == http.StatusTooManyRequests:
			// Rate limits are the key's or the request's, not a failure
			// of the vendor.
			o = outcomeNone
		}
		keyOutcome := o
		if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			keyOutcome = outcomeNone
		}
		now = c.now()
		var confirmKey bool
		if l.k != nil {
			confirmKey = c.pool.release(now, l, keyOutcome, acct)
		}
		ab.done(now, aprobe, o, "")
		confirmVendor := c.br.done(now, probe, o, acct)
		if confirmVendor || confirmKey {
			c.confirm(ctx, l.k, confirmVendor, confirmKey)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			gerr := c.transportError(err)
			wait := c.backoff(attempt)
			if !c.mayRetry(attempt, start, wait, bud) {
				return nil, gerr
			}
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		status := resp.StatusCode
		wait = c.backoff(attempt)
		switch {
		case (status == http.StatusUnauthorized || status == http.StatusForbidden) && len(forwarded) > 0:
			// The caller's own header values went with the request: the
			// refusal is theirs, and says nothing of the gateway's key.
			drain(resp.Body)
			return nil, &gw.Error{Code: gw.CodeInvalidRequest, NoRetry: true,
				Message: fmt.Sprintf("%s: the vendor refused the request (%d) with the header(s) forwarded for the caller (%s); check their values", c.vendor, status, strings.Join(forwarded, ", "))}
		case (status == http.StatusUnauthorized || status == http.StatusForbidden) && l.k != nil:
			if !c.keyRefused(l.k) {
				// The gateway's own probe with this key is accepted (or
				// was lately): the refusal is about this request.
				return resp, nil
			}
			if c.pool.takeOut(l.k, fmt.Sprintf("the vendor answered %d, and %d to the gateway's own probe", status, status)) {
				c.cfg.Logger.Error("vendor key taken out of the pool", "vendor", c.vendor, "key", l.k.Name, "status", status)
			}
			if !c.pool.usable(c.now()) || !bud.CanTake(0) {
				return resp, nil
			}
			// Another key may be good: at once, not counted as a retry.
			drain(resp.Body)
			attempt--
			continue
		case status == http.StatusTooManyRequests:
			ra, hasRA := RetryAfter(resp.Header, now)
			if !hasRA {
				ra, hasRA = bodyRetryAfter(resp)
			}
			if l.k != nil && keyLimited(resp) {
				rest := min(ra, c.cfg.KeyRestMax)
				if !hasRA || rest <= 0 {
					rest = time.Second
				}
				c.pool.rest(l.k, now.Add(rest))
				if len(c.pool.keys) > 1 && c.pool.usable(now) {
					wait, hasRA = 0, false // another key is free: at once
				}
			}
			if hasRA {
				if ra > c.cfg.MaxRetryWait {
					c.capRetryAfter(resp.Header, now)
					return resp, nil // the vendor asks for more than we wait: answer now
				}
				wait = ra
			}
		case retryableStatus(status):
			if ra, ok := RetryAfter(resp.Header, now); ok {
				if ra > c.cfg.MaxRetryWait {
					c.capRetryAfter(resp.Header, now)
					return resp, nil
				}
				wait = ra
			}
		default:
			return resp, nil
		}
		if !c.mayRetry(attempt, start, wait, bud) {
			c.capRetryAfter(resp.Header, now)
			return resp, nil
		}
		drain(resp.Body)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// mayRetry reports whether a retry after attempt (0: the first) may
// start after wait: within MaxRetries, the request's RetryBudget and its
// attempt budget.
func (c *Client) mayRetry(attempt int, start time.Time, wait time.Duration, bud *gw.AttemptBudget) bool {
	return attempt < c.cfg.MaxRetries && c.now().Add(wait).Sub(start) <= c.cfg.RetryBudget && bud.CanTake(wait)
}

// spentError is the answer when the request's attempt budget is spent.
func (c *Client) spentError() *gw.Error {
	return &gw.Error{Code: gw.CodeUpstreamTimeout, Message: c.vendor + ": the request's vendor attempts or time budget are spent",
		Err: fmt.Errorf("%s: attempt budget spent", c.vendor)}
}

// accountOpenError is the answer while the caller's account's own
// breaker is open.
func (c *Client) accountOpenError(wait time.Duration) *gw.Error {
	secs := max((wait+time.Second-1)/time.Second, 1) * time.Second
	return &gw.Error{Code: gw.CodeOverloaded, Message: c.vendor + ": this account's recent requests to the vendor keep failing; retry after Retry-After", RetryAfter: secs,
		Err: fmt.Errorf("%s: the account's circuit breaker is open", c.vendor)}
}

// maxAccountBreakers bounds the accounts' breakers kept: past it, the
// idle ones are dropped.
const maxAccountBreakers = 10_000

// accountBreaker returns the account's own breaker (nil for the
// gateway's own calls, or with breakers off).
func (c *Client) accountBreaker(acct string) *breaker {
	if acct == "" || c.cfg.BreakerFailures <= 0 {
		return nil
	}
	c.amu.Lock()
	defer c.amu.Unlock()
	b := c.accts[acct]
	if b == nil {
		if len(c.accts) >= maxAccountBreakers {
			for k, v := range c.accts {
				if v.idle() {
					delete(c.accts, k)
				}
			}
			if len(c.accts) >= maxAccountBreakers {
				clear(c.accts)
			}
		}
		b = newBreaker(c.cfg.BreakerFailures, c.cfg.BreakerInterval)
		c.accts[acct] = b
	}
	return b
}

// forwarded returns the CallerHeaders h carries.
func (c *Client) forwarded(h http.Header) []string {
	var out []string
	for _, name := range c.cfg.CallerHeaders {
		if len(h.Values(name)) > 0 {
			out = append(out, http.CanonicalHeaderKey(name))
		}
	}
	return out
}

// probeTimeout bounds the gateway's own probe.
const probeTimeout = 10 * time.Second

// probe sends the gateway's own Probe, with key k's secret when k is
// set. It returns the status, or an error when the vendor did not
// answer.
func (c *Client) probe(k *poolKey) (int, error) {
	p := c.cfg.Probe
	ctx, cancel := context.WithTimeout(context.Background(), min(probeTimeout, c.cfg.FirstByteTimeout))
	defer cancel()
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequestWithContext(ctx, method, p.URL, nil)
	if err != nil {
		return 0, err
	}
	hr.Header = p.Header.Clone()
	if hr.Header == nil {
		hr.Header = http.Header{}
	}
	if k != nil && p.Auth != nil {
		p.Auth(hr.Header, k.Secret)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return 0, err
	}
	drain(resp.Body)
	return resp.StatusCode, nil
}

// trial sends the gateway's own probe as the half-open trial of the
// vendor's breaker (*vendorTrial) and of lease l's key's (l.probe), with
// l's key, and reports each outcome to its breaker. It reports which
// trial failed; a breaker whose trial passed is closed, and
// *vendorTrial is cleared once reported.
func (c *Client) trial(l lease, vendorTrial *bool) (vendorFailed, keyFailed bool) {
	status, err := c.probe(l.k)
	ok := err == nil && !failureStatus(status)
	now := c.now()
	if *vendorTrial {
		c.br.trialDone(now, ok)
		*vendorTrial, vendorFailed = false, !ok
	}
	if l.probe && l.k != nil {
		l.k.br.trialDone(now, ok)
		keyFailed = !ok
	}
	return vendorFailed, keyFailed
}

// confirm runs the gateway's own probe after a run of failures from too
// few accounts: when the vendor fails it too, the vendor's breaker
// (vendor) or key k's (key) opens. Without a Probe nothing opens.
func (c *Client) confirm(ctx context.Context, k *poolKey, vendor, key bool) {
	if c.cfg.Probe == nil || ctx.Err() != nil {
		return
	}
	status, err := c.probe(k)
	if err == nil && !failureStatus(status) {
		return // the vendor answers: the run was the requests' own
	}
	now := c.now()
	if vendor {
		c.br.trip(now)
		c.cfg.Logger.Warn("vendor breaker opened by the gateway's own probe", "vendor", c.vendor)
	}
	if key && k != nil {
		k.br.trip(now)
	}
}

// keyRefused reports whether the gateway's own probe with key k is
// refused (401, 403): only then is the key taken out. At most one probe
// per key runs at once and per BreakerInterval; without a Probe a key is
// never taken out.
func (c *Client) keyRefused(k *poolKey) bool {
	if c.cfg.Probe == nil || !c.pool.beginCheck(k, c.now(), c.cfg.BreakerInterval) {
		return false
	}
	status, err := c.probe(k)
	refused := err == nil && (status == http.StatusUnauthorized || status == http.StatusForbidden)
	c.pool.endCheck(k, c.now(), !refused)
	return refused
}

// keyLimited reports whether a 429 is about the key, not the one
// request: the vendor's rate-limit headers say a key's remaining
// requests or tokens are 0, or its error type names the key's request
// quota, or (Google) a QuotaFailure names a quota of the key's project
// (only when it sends no rate-limit headers: those, when they
// show some of every limit left, say the 429 is the request's). The
// body, when read, is given back whole.
func keyLimited(resp *http.Response) bool {
	counted := false
	for name, vs := range resp.Header {
		ln := strings.ToLower(name)
		if len(vs) == 0 {
			continue
		}
		if strings.HasPrefix(ln, "x-ratelimit-remaining-") || strings.HasPrefix(ln, "anthropic-ratelimit-") && strings.HasSuffix(ln, "-remaining") {
			n, err := strconv.ParseFloat(strings.TrimSpace(vs[0]), 64)
			if err != nil {
				continue
			}
			if n <= 0 {
				return true
			}
			counted = true
		}
	}
	if counted {
		// The vendor counts the key's limits and none is spent: the
		// 429 is about this request.
		return false
	}
	head, err := peekBody(resp)
	if err != nil {
		return false
	}
	if _, _, key := rpcRetry(head); key {
		return true // Google: a quota of the key's project (rpcstatus.go)
	}
	var e struct {
		Error struct {
			Type string `json:"type"`
			Code any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(head, &e) != nil {
		return false
	}
	code, _ := e.Error.Code.(string)
	return e.Error.Type == "requests" || e.Error.Type == "insufficient_quota" || code == "insufficient_quota"
}

type readCloser struct {
	io.Reader
	io.Closer
}

// capRetryAfter makes the wait an answer asks for at most KeyRestMax:
// whatever one request was told, no caller is told to stay away longer.
func (c *Client) capRetryAfter(h http.Header, now time.Time) {
	if ra, ok := RetryAfter(h, now); ok && ra > c.cfg.KeyRestMax {
		h.Set("Retry-After-Ms", strconv.FormatInt(c.cfg.KeyRestMax.Milliseconds(), 10))
		h.Set("Retry-After", strconv.FormatInt(int64((c.cfg.KeyRestMax+time.Second-1)/time.Second), 10))
	}
}

// openError is the answer while the vendor's breaker is open.
func (c *Client) openError(wait time.Duration) *gw.Error {
	secs := max((wait+time.Second-1)/time.Second, 1) * time.Second
	return &gw.Error{Code: gw.CodeOverloaded, Message: c.vendor + ": the vendor is failing (circuit open); retry after Retry-After", RetryAfter: secs,
		Err: fmt.Errorf("%s: circuit breaker open", c.vendor)}
}

func (c *Client) once(ctx context.Context, req *Request, k *poolKey, bud *gw.AttemptBudget) (*http.Response, error) {
	fbt, cut := c.cfg.FirstByteTimeout, false
	if left, ok := bud.Remaining(); ok && left < fbt {
		fbt, cut = left, true
		if fbt <= 0 {
			return nil, c.silentError(fbt, cut)
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	hr, err := http.NewRequestWithContext(rctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build request: %w", err)
	}
	var sb *sentBody
	if len(req.Body) >= letGoBytes {
		// The transport keeps the request with its answer (a stream's
		// whole life): the body it reads lets go of its bytes once read,
		// and a resend's copy (GetBody) is had only until the answer.
		sb = newSentBody(req.Body)
		hr.Body, hr.GetBody = sb.open(), sb.reopen
	}
	hr.Header = req.Header.Clone()
	if hr.Header == nil {
		hr.Header = http.Header{}
	}
	if k != nil && req.Auth != nil {
		req.Auth(hr.Header, k.Secret)
	}
	hr.ContentLength = int64(len(req.Body))
	// The first byte must come within FirstByteTimeout of the send: the
	// headers, and for an answer the body's first bytes too (a vendor
	// that accepts the call and then says nothing is a failed attempt).
	sent := time.Now()
	var fired atomic.Bool
	ttfb := time.AfterFunc(fbt, func() { fired.Store(true); cancel() })
	resp, err := c.roundTrip(hr, req)
	if sb != nil {
		sb.answered()
	}
	if err != nil {
		ttfb.Stop()
		cancel()
		if fired.Load() && ctx.Err() == nil {
			return nil, c.silentError(fbt, cut)
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		ttfb.Stop()
		resp.Body = newIdleBody(resp.Body, c.cfg.IdleTimeout, cancel, c.vendor)
		return resp, nil
	}
	// Wait for the body's first bytes, also within the stream idle
	// timeout (a silence inside the body).
	if ttfb.Stop() {
		ttfb.Reset(max(min(fbt-time.Since(sent), c.cfg.IdleTimeout), 0))
	}
	// The first bytes are read into the reader that hands them on:
	// one allocation for the two.
	pk := &peeked{}
	buf := pk.buf[:]
	var n int
	for n == 0 && err == nil {
		n, err = resp.Body.Read(buf)
	}
	if !ttfb.Stop() && err == nil {
		// The limit ran out just as the first bytes came: the call is
		// cancelled already, so the attempt failed.
		err = context.Canceled
	}
	if err != nil && err != io.EOF {
		_ = resp.Body.Close()
		cancel()
		if fired.Load() && ctx.Err() == nil {
			return nil, c.silentError(fbt, cut)
		}
		return nil, err
	}
	body := newIdleBody(resp.Body, c.cfg.IdleTimeout, cancel, c.vendor)
	pk.head, pk.eof, pk.rest = buf[:n], err == io.EOF, body
	resp.Body = pk
	return resp, nil
}

// roundTrip sends hr on the transport, as http.Client.Do would send
// it without its per-call copies (its header copier, kept for
// redirects): an error is wrapped in *url.Error as Do wraps it, and a
// redirect is followed by Do itself, on a fresh copy of the request.
func (c *Client) roundTrip(hr *http.Request, req *Request) (*http.Response, error) {
	resp, err := c.hc.Transport.RoundTrip(hr)
	if err != nil {
		return nil, &url.Error{Op: hr.Method[:1] + strings.ToLower(hr.Method[1:]), URL: redactedURL(hr.URL), Err: err}
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if resp.Header.Get("Location") == "" {
			return resp, nil
		}
		drain(resp.Body)
		again := hr.Clone(hr.Context())
		again.Body = io.NopCloser(bytes.NewReader(req.Body))
		again.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(req.Body)), nil }
		return c.hc.Do(again)
	}
	return resp, nil
}

// redactedURL is u as http.Client names it in errors: without a
// password.
func redactedURL(u *url.URL) string {
	if _, has := u.User.Password(); has {
		v := *u
		v.User = url.UserPassword(u.User.Username(), "***")
		return v.String()
	}
	return u.String()
}

// silentError is a first byte that did not come within fbt; budget
// says the request's attempt budget set fbt (not FirstByteTimeout).
func (c *Client) silentError(fbt time.Duration, budget bool) error {
	// Not wrapped: the cause is the cancellation that ended the wait.
	if budget {
		return &timeoutError{err: fmt.Errorf("no first byte within the request's time budget (%v left)", fbt), budget: true}
	}
	return &timeoutError{err: fmt.Errorf("no first byte within %v", fbt)}
}

// timeoutError is a net.Error time-out, so that transportError reports
// upstream_timeout.
type timeoutError struct {
	err    error
	budget bool // the request's attempt budget ran out, not the vendor's limit
}

func (e *timeoutError) Error() string   { return e.err.Error() }
func (e *timeoutError) Unwrap() error   { return e.err }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return false }

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

// retryableStatus reports the statuses retried: 408, 429, 500, 502, 503,
// 504 and 529 (Anthropic's overloaded).
func retryableStatus(s int) bool {
	return s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || failureStatus(s)
}

// failureStatus reports the statuses that count as the vendor failing,
// for the breakers: every retried status but 429 (a key's or a request's
// rate limit) and 408 (a 4xx: the request's own slowness).
func failureStatus(s int) bool {
	switch s {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
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
