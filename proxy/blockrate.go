package proxy

import (
	"fmt"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// DefaultBlocksPerMinute is how many blocked requests one key may make
// in a minute (Config.BlocksPerMinute): past it, the key's requests are
// refused at once until the minute ends, before the guard reads them,
// so a key sending blocked requests in a loop adds no incident or
// record row of its own for each (its refusals count among the key's
// refused requests, whose records past RefusedPerMinute become one
// aggregate row a minute).
const DefaultBlocksPerMinute = 20

// blockRate counts each key's blocked requests in the current minute.
// Its size is bounded by the keys that had a block in the current
// minute: the first note of a new minute drops the older windows.
type blockRate struct {
	limit int
	mu    sync.Mutex
	min   int64
	n     map[string]int
}

func newBlockRate(limit int) *blockRate {
	if limit == 0 {
		limit = DefaultBlocksPerMinute
	}
	if limit < 0 {
		return nil
	}
	return &blockRate{limit: limit, n: map[string]int{}}
}

// note counts a block of p's key at now.
func (b *blockRate) note(p *gw.Principal, now time.Time) {
	if b == nil || p == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := now.Unix() / 60; m != b.min {
		b.min = m
		clear(b.n)
	}
	b.n[p.KeyID]++
}

// check returns the refusal of p's key while it is past the limit in
// the current minute, nil otherwise.
func (b *blockRate) check(p *gw.Principal, now time.Time) error {
	if b == nil || p == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Unix()/60 != b.min || b.n[p.KeyID] < b.limit {
		return nil
	}
	end := time.Unix((b.min+1)*60, 0)
	return &gw.Error{
		Code:       gw.CodeRateLimited,
		Message:    fmt.Sprintf("this API key made %d blocked requests this minute; retry after the time in Retry-After", b.limit),
		RetryAfter: max(end.Sub(now).Round(time.Second), time.Second),
		NoRetry:    true,
	}
}

// admitted returns the refusal of a principal in a cool-down or past
// its blocks a minute, nil otherwise.
func (g *Gateway) admitted(p *gw.Principal, now time.Time) error {
	if err := g.cool.check(p, now); err != nil {
		return err
	}
	return g.blocks.check(p, now)
}
