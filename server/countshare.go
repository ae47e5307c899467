package server

import (
	"context"
	"sync"

	gw "github.com/gwlabs/gateway"
)

// accountSlots bounds the count slots one account may hold or wait for
// at once: its counts past its share wait on its own, so another
// account's count waits for at most the share of this one's running
// counts, never its whole queue. It is safe for concurrent use.
type accountSlots struct {
	share int
	mu    sync.Mutex
	m     map[string]*acctSem
}

type acctSem struct {
	ch   chan struct{}
	refs int
}

func newAccountSlots(share int) *accountSlots {
	return &accountSlots{share: max(share, 1), m: map[string]*acctSem{}}
}

// acquire waits for one of the account's slots; release gives it back.
func (a *accountSlots) acquire(ctx context.Context, account string) (release func(), err error) {
	a.mu.Lock()
	s := a.m[account]
	if s == nil {
		s = &acctSem{ch: make(chan struct{}, a.share)}
		a.m[account] = s
	}
	s.refs++
	a.mu.Unlock()
	done := func() {
		a.mu.Lock()
		if s.refs--; s.refs == 0 {
			delete(a.m, account)
		}
		a.mu.Unlock()
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, &gw.Error{Code: gw.CodeOverloaded, Message: "the caller went away while waiting to count", Err: ctx.Err()}
	}
}
