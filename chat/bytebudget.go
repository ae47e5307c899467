package chat

import (
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// byteBudget counts the request body bytes held in flight: in all (at
// most max), per account (at most perAccount) and per key (at most
// perKey), so that one account announcing large bodies and sending them
// slowly holds at most its share and never the whole budget. It is safe
// for concurrent use.
type byteBudget struct {
	max, perAccount, perKey int64

	mu    sync.Mutex
	total int64
	accts map[string]int64
	keys  map[string]int64
}

func newByteBudget(max, perAccount, perKey int64) *byteBudget {
	return &byteBudget{max: max, perAccount: perAccount, perKey: perKey, accts: map[string]int64{}, keys: map[string]int64{}}
}

// reserve counts n more bytes held for p (nil: the total only), or
// returns the refusal: overloaded when the whole budget is spent,
// rate_limited when p's account's or key's share is.
func (b *byteBudget) reserve(p *gw.Principal, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total+n > b.max {
		return &gw.Error{Code: gw.CodeOverloaded, Message: "the gateway is receiving too many request bytes at once; retry", RetryAfter: time.Second}
	}
	if p != nil {
		if b.perAccount > 0 && b.accts[p.AccountID]+n > b.perAccount {
			return &gw.Error{Code: gw.CodeRateLimited, Message: "this account is sending too many request bytes at once (its share of the gateway's bytes in flight); retry when its uploads have arrived", RetryAfter: time.Second}
		}
		if b.perKey > 0 && b.keys[p.KeyID]+n > b.perKey {
			return &gw.Error{Code: gw.CodeRateLimited, Message: "this API key is sending too many request bytes at once (its share of the gateway's bytes in flight); retry when its uploads have arrived", RetryAfter: time.Second}
		}
		b.accts[p.AccountID] += n
		b.keys[p.KeyID] += n
	}
	b.total += n
	return nil
}

// release gives back n bytes held for p.
func (b *byteBudget) release(p *gw.Principal, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total -= n
	if p == nil {
		return
	}
	if b.accts[p.AccountID] -= n; b.accts[p.AccountID] <= 0 {
		delete(b.accts, p.AccountID)
	}
	if b.keys[p.KeyID] -= n; b.keys[p.KeyID] <= 0 {
		delete(b.keys, p.KeyID)
	}
}

// held returns the bytes held in all.
func (b *byteBudget) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
