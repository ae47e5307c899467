// Package groupcommit batches the stores' money writes (place hold,
// settle, release, log) into shared transactions, so that a durable commit
// costs one sync for many concurrent requests instead of one each. Both
// stores use it; each supplies only how to apply a batch in its own SQL.
//
// A Committer runs one goroutine. Submit hands it a call and waits for
// that call's own result; the goroutine takes a call, gathers every call
// already waiting (up to the batch limit, yielding the processor once so
// that callers about to submit can join), applies them in one
// transaction, and answers each. Batches grow with the load by
// themselves: calls arriving during a commit wait for the next one. When the transaction fails, each call is
// retried in a transaction of its own, so one bad call cannot fail the
// others.
//
// Under load a committer can also wait a little for more calls before it
// commits (Options.Linger): once calls arrive faster than one per linger
// interval, a batch stays open until about as many calls as that rate
// brings in the interval joined it, or the interval ended; when the
// store says how many calls are in flight (Options.InFlight: requests
// holding money that will settle), it waits for no more than those. Each commit
// costs about the same whatever its size, so this trades at most one
// interval of latency for fewer commits per call; below that rate it
// never waits, nor for a while after two waits that no call joined
// (callers that submit only once their previous call returned).
package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Kind says what a call does.
type Kind int

// Kinds of calls.
const (
	Hold Kind = iota
	Settle
	Release
	Log
	// Load reads an account's committed balance (ID: the account id)
	// between batches, for a store that keeps holds in memory; it writes
	// nothing.
	Load
)

func (k Kind) String() string {
	switch k {
	case Hold:
		return "place hold"
	case Settle:
		return "settle"
	case Release:
		return "release"
	case Load:
		return "load"
	}
	return "log"
}

// ErrHoldExists refuses a second hold with the same id.
var ErrHoldExists = errors.New("hold already exists")

// Insufficient is the caller-facing refusal of a hold of need when the
// account has avail available.
func Insufficient(need, avail gw.Money) *gw.Error {
	return &gw.Error{
		Code: gw.CodeInsufficientBalance,
		Message: fmt.Sprintf("insufficient balance: this request needs up to $%s, the available balance is $%s",
			need.USDString(), max(avail, 0).USDString()),
		NoRetry: true,
	}
}

// ErrClosed is returned by calls submitted after Close.
var ErrClosed = errors.New("store closed")

// Op is one call.
type Op struct {
	Kind Kind
	Hold gw.Hold    // Hold; for Settle and Release on a store that keeps holds in memory, the hold being finished
	ID   string     // the hold id, for Settle and Release; the account id, for Load
	Rec  *gw.Record // the record to write; nil for a bare release
	res  chan error // receives exactly one result
}

// Apply runs ops in one transaction and stores each call's own outcome in
// results. A call's clean refusal (see Clean) has changed nothing and
// leaves the transaction usable; any other error aborts the transaction
// and is returned.
type Apply func(ops []*Op, results []error) error

// Clean reports whether err is a call's own refusal, made before it wrote
// anything: a missing hold or account, a duplicate hold, or a *gw.Error
// such as insufficient balance.
func Clean(err error) bool {
	var e *gw.Error
	return errors.Is(err, gw.ErrNotFound) || errors.Is(err, ErrHoldExists) || errors.As(err, &e)
}

// NeedsSync reports whether a batch must be synced to disk before its
// callers are answered: only a settle tells a caller of a charge. A hold,
// a release or a failed request's log row lost to a machine crash costs
// nothing: the hold would expire anyway, and a settle whose hold is gone
// is charged through a fresh one. A process crash loses none of them.
func NeedsSync(ops []*Op) bool {
	for _, o := range ops {
		if o.Kind == Settle {
			return true
		}
	}
	return false
}

// Stats counts the committer's work.
type Stats struct {
	Batches int64 // transactions run
	Ops     int64 // calls those transactions carried
	Retried int64 // calls retried alone after their batch failed
}

// Committer is the batching goroutine.
type Committer struct {
	apply    Apply
	maxBatch int
	linger   time.Duration
	inFlight func() int
	ops      chan *Op
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once

	batches, opsDone, retried atomic.Int64
}

// Options configures a committer.
type Options struct {
	MaxBatch int // calls per transaction at most (below 1: 1)
	// Linger is the longest a batch waits for more calls once they arrive
	// at least one per Linger (0: never waits).
	Linger time.Duration
	// InFlight, when set, says how many settles and releases are on
	// their way: for a store keeping its holds in memory, the holds
	// whose settle or release has not been submitted yet. A batch then
	// waits only for as many as are in flight, plus the other calls
	// (logs) their own arrival rate brings, and no more than every
	// call's rate brings within Linger: a request that has not started
	// yet is not waited for.
	InFlight func() int
}

// Start starts a committer applying batches of at most maxBatch calls.
func Start(maxBatch int, apply Apply) *Committer {
	return StartWith(Options{MaxBatch: maxBatch}, apply)
}

// StartWith starts a committer with options.
func StartWith(opt Options, apply Apply) *Committer {
	maxBatch := opt.MaxBatch
	c := &Committer{
		apply:    apply,
		linger:   max(opt.Linger, 0),
		inFlight: opt.InFlight,
		maxBatch: max(maxBatch, 1),
		ops:      make(chan *Op),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go c.run()
	return c
}

// Submit hands o to the committer and waits for its result. ctx bounds
// only the hand-over: once the committer took the call, Submit waits for
// the commit, since the call may succeed even if the caller gave up, and
// telling it otherwise would be a lie about money. what prefixes errors.
func (c *Committer) Submit(ctx context.Context, o *Op, what string) error {
	res := results.Get().(chan error)
	o.res = res
	select {
	case c.ops <- o:
	case <-c.quit:
		o.res = nil
		results.Put(res) // never taken: nothing is sent on it
		return fmt.Errorf("%s: %w", what, ErrClosed)
	case <-ctx.Done():
		o.res = nil
		results.Put(res)
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	err := <-res
	// Answered once and emptied: the next call may use it.
	o.res = nil
	results.Put(res)
	return err
}

// results are the calls' answer channels, reused once a call has read
// its one answer.
var results = sync.Pool{New: func() any { return make(chan error, 1) }}

// Close stops the committer after the batch in progress. The ops channel
// is unbuffered, so a call is either taken (and answered) or its sender
// sees ErrClosed: none is lost.
func (c *Committer) Close() {
	c.once.Do(func() {
		close(c.quit)
		<-c.done
	})
}

// Stats returns the counters.
func (c *Committer) Stats() Stats {
	return Stats{Batches: c.batches.Load(), Ops: c.opsDone.Load(), Retried: c.retried.Load()}
}

func (c *Committer) run() {
	defer close(c.done)
	batch := make([]*Op, 0, c.maxBatch)
	var timer *time.Timer
	// arr is every call's arrivals; others those of the calls InFlight
	// does not count (a request's log without a hold).
	var arr, others arrivals
	// Lingering pays only if calls join meanwhile: callers that wait for
	// their own call before submitting the next (a closed loop) never
	// do. After two lingers in a row that nobody joined, none for a
	// while.
	var misses int
	var lingerOff time.Time
	for {
		select {
		case o := <-c.ops:
			batch = append(batch[:0], o)
		case <-c.quit:
			return
		}
		now := time.Now()
		yielded := false
	fill:
		for len(batch) < c.maxBatch {
			select {
			case o := <-c.ops:
				batch = append(batch, o)
			default:
				if yielded {
					break fill
				}
				// Let callers that are about to submit reach the channel
				// before the batch closes.
				yielded = true
				runtime.Gosched()
			}
		}
		want := arr.expected(now, c.linger)
		if c.inFlight != nil && want > len(batch) {
			want = lingerWant(want, len(batch), c.inFlight(), others.expected(now, c.linger))
		}
		if want > len(batch) && len(batch) < c.maxBatch && now.After(lingerOff) {
			before := len(batch)
			// Calls come fast enough for more to join within the
			// linger interval: wait for about as many as the rate
			// brings, or the interval's end.
			want = min(want, c.maxBatch)
			if timer == nil {
				timer = time.NewTimer(c.linger)
			} else {
				timer.Reset(c.linger)
			}
		linger:
			for len(batch) < want {
				select {
				case o := <-c.ops:
					batch = append(batch, o)
				case <-timer.C:
					break linger
				case <-c.quit:
					break linger // answer what was taken, then stop
				}
			}
			timer.Stop()
			if len(batch) > before {
				misses = 0
			} else if misses++; misses >= 2 {
				misses, lingerOff = 0, time.Now().Add(lingerBackoff)
			}
		}
		arr.add(now, len(batch))
		if c.inFlight != nil {
			others.add(now, notInFlight(batch))
		}
		c.commit(batch)
	}
}

// arrivals estimates the rate at which calls arrive, over windows of
// about 50 ms.
type arrivals struct {
	start time.Time // of the current window
	last  time.Time // the latest batch
	n     int       // calls in the current window
	rate  float64   // calls per second, smoothed over windows
}

// lingerBackoff is how long a committer does not linger after lingers
// that nobody joined.
const lingerBackoff = 100 * time.Millisecond

// window is the span over which the arrival rate is measured.
const window = 50 * time.Millisecond

func (a *arrivals) add(now time.Time, n int) {
	if a.start.IsZero() || now.Sub(a.last) > window {
		// The first calls, or after a pause: start afresh.
		a.start, a.n, a.rate = now, 0, 0
	}
	a.last = now
	a.n += n
	if d := now.Sub(a.start); d >= window {
		r := float64(a.n) / d.Seconds()
		if a.rate == 0 {
			a.rate = r
		} else {
			a.rate = (a.rate + r) / 2
		}
		a.start, a.n = now, 0
	}
}

// expected returns how many calls the rate brings within linger, at
// least 2 for a batch to wait; 0 when it should not wait (no linger, or
// calls slower than one per linger, or a pause since the last batch).
func (a *arrivals) expected(now time.Time, linger time.Duration) int {
	if linger <= 0 || a.rate == 0 || now.Sub(a.last) > window {
		return 0
	}
	n := int(a.rate * linger.Seconds())
	if n < 2 {
		return 0
	}
	return n
}

// lingerWant is the size a batch of n calls waits for: want, what the
// arrival rate brings within the linger, but no more than the calls in
// flight and the others (calls not counted in flight, at their own rate)
// can bring.
func lingerWant(want, n, inFlight, others int) int {
	return min(want, n+max(inFlight, 0)+others)
}

// notInFlight counts the calls of batch that Options.InFlight does not
// count: all but settles and releases.
func notInFlight(batch []*Op) int {
	n := 0
	for _, o := range batch {
		if o.Kind != Settle && o.Kind != Release {
			n++
		}
	}
	return n
}

func (c *Committer) commit(batch []*Op) {
	for i, err := range c.Commit(batch) {
		batch[i].res <- err
	}
}

// Commit applies batch the way the committer does (one transaction; on
// failure each call alone) and returns each call's result. The committer
// goroutine uses it; a test can drive a hand-made batch through it.
func (c *Committer) Commit(batch []*Op) []error {
	c.batches.Add(1)
	c.opsDone.Add(int64(len(batch)))
	results := make([]error, len(batch))
	err := c.apply(batch, results)
	if err != nil && len(batch) > 1 {
		c.retried.Add(int64(len(batch)))
		for i := range batch {
			if err := c.apply(batch[i:i+1], results[i:i+1]); err != nil {
				results[i] = err
			}
		}
	} else if err != nil {
		results[0] = err
	}
	for i, o := range batch {
		if results[i] != nil {
			results[i] = fmt.Errorf("%s: %w", o.Kind, results[i])
		}
	}
	return results
}
