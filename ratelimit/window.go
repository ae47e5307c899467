package ratelimit

import (
	"time"

	gw "github.com/gwlabs/gateway"
)

// Window is the span every limit is counted over: RPM and TPM are
// requests and tokens per Window.
const Window = time.Minute

// Resolution is the width of one counting bucket. A key's window is the
// current bucket plus the Window/Resolution buckets before it, so a count
// leaves the window between Window and Window+Resolution after it was
// made: never early, at most Resolution late.
const Resolution = time.Second

// nBuckets is the number of buckets a window spans: the current, partly
// elapsed one and the Window/Resolution whole ones before it.
const nBuckets = int64(Window/Resolution) + 1

// counts is one key's sliding window: two rings of per-bucket counts
// (requests, tokens) and their sums. Bucket i lives in slot i mod
// nBuckets; buckets older than head-nBuckets+1 are zero.
type counts struct {
	head int64 // index of the newest bucket touched
	reqs int64 // sum of req
	toks int64 // sum of tok
	req  [nBuckets]int64
	tok  [nBuckets]int64
}

func slot(i int64) int64 {
	s := i % nBuckets
	if s < 0 {
		s += nBuckets
	}
	return s
}

// advance moves the window to bucket cur, dropping the buckets that left
// it, and returns the bucket now current. A clock that went backwards
// keeps the newest bucket: counts never leave the window early.
func (c *counts) advance(cur int64) int64 {
	if cur <= c.head {
		return c.head
	}
	if cur-c.head >= nBuckets {
		*c = counts{head: cur}
		return cur
	}
	for i := c.head + 1; i <= cur; i++ {
		s := slot(i)
		c.reqs -= c.req[s]
		c.toks -= c.tok[s]
		c.req[s], c.tok[s] = 0, 0
	}
	c.head = cur
	return cur
}

// wait returns how long after now (an offset on the bucket time line)
// the oldest buckets of ring holding at least excess will have left the
// window. Bucket j leaves when bucket j+nBuckets begins.
func (c *counts) wait(ring *[nBuckets]int64, excess int64, now time.Duration) time.Duration {
	lo := c.head - nBuckets + 1
	var dropped int64
	j := lo
	for ; j <= c.head; j++ {
		dropped += ring[slot(j)]
		if dropped >= excess {
			break
		}
	}
	if j > c.head {
		j = c.head
	}
	return max(time.Duration(j+nBuckets)*Resolution-now, time.Millisecond)
}

// take decides one request in the current bucket (advance first) and
// counts it when admitted. now is the same time line's offset, for
// RetryAfter.
func (c *counts) take(lim gw.Limit, tokens int64, now time.Duration) gw.LimitDecision {
	d := gw.LimitDecision{RequestsLimit: max(lim.RPM, 0)}
	var wait time.Duration
	if lim.RPM > 0 && c.reqs+1 > lim.RPM {
		wait = c.wait(&c.req, c.reqs+1-lim.RPM, now)
	}
	if lim.TPM > 0 && tokens > 0 {
		excess := c.toks + tokens - lim.TPM
		if tokens > lim.TPM {
			// A request larger than the whole limit could never fit;
			// it goes through once the key's token window is empty.
			excess = c.toks
		}
		if excess > 0 {
			wait = max(wait, c.wait(&c.tok, excess, now))
		}
	}
	if wait > 0 {
		d.RetryAfter = wait
	} else {
		s := slot(c.head)
		c.req[s]++
		c.reqs++
		c.tok[s] += tokens
		c.toks += tokens
		d.Allowed = true
	}
	if lim.RPM > 0 {
		d.RequestsRemaining = max(lim.RPM-c.reqs, 0)
	}
	return d
}

// adjust adds delta tokens to the current bucket, or for a negative delta
// takes them back from the newest buckets first, never below zero.
func (c *counts) adjust(delta int64) {
	if delta >= 0 {
		c.tok[slot(c.head)] += delta
		c.toks += delta
		return
	}
	left := -delta
	for j := c.head; j > c.head-nBuckets && left > 0; j-- {
		s := slot(j)
		n := min(c.tok[s], left)
		c.tok[s] -= n
		c.toks -= n
		left -= n
	}
}
