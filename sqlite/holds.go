package sqlite

import (
	"context"
	"fmt"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
)

// book keeps the holds of an exclusive store (Options.Exclusive) in
// memory: a hold is a reservation against the account's balance that
// writes nothing to the database. A crash loses the holds, which costs
// nothing (their requests died with the process); the charges, written
// by Settle, are durable as before.
//
// The check of a new hold needs the account's committed balance; the
// book keeps it. Only the group committer changes it after loading it
// (a settle's charge, applied once its transaction committed), and a load
// runs on the committer too, between two batches, so a loaded balance
// never misses nor double-counts a charge. A top-up through this store
// forgets the account's balance, so the next hold loads it again; a
// top-up by another process (an admin command) is seen when a hold would
// be refused: the refusal loads the balance again first. Both directions
// are safe meanwhile: a balance kept too low refuses, never overdraws.
type book struct {
	mu    sync.Mutex
	holds map[string]*memHold
	accts map[string]*account
}

type memHold struct {
	gw.Hold
	finishing bool // a Settle or Release of it is in progress
}

type account struct {
	balance int64 // the committed balance, when known
	known   bool
	held    int64 // every open hold's amount, expired or not
	holds   map[string]*memHold
	// minExp is at most the earliest expiry of the open holds: before
	// it none has expired and held is exact.
	minExp time.Time
}

func newBook() *book {
	return &book{holds: map[string]*memHold{}, accts: map[string]*account{}}
}

// heldAt returns what a's open holds hold at now: those past their
// expiry no longer count.
func (a *account) heldAt(now time.Time) int64 {
	if now.Before(a.minExp) {
		return a.held
	}
	held, first := a.held, time.Time{}
	for _, h := range a.holds {
		if !h.ExpiresAt.After(now) {
			held -= int64(h.Amount)
		} else if first.IsZero() || h.ExpiresAt.Before(first) {
			first = h.ExpiresAt
		}
	}
	if held == a.held {
		a.minExp = first // none expired: the fast path holds until first
		if first.IsZero() {
			a.minExp = time.Time{}.Add(1<<63 - 1)
		}
	}
	return held
}

func (b *book) account(id string) *account {
	a := b.accts[id]
	if a == nil {
		a = &account{holds: map[string]*memHold{}, minExp: time.Time{}.Add(1<<63 - 1)}
		b.accts[id] = a
	}
	return a
}

// placeHold is PlaceHold on an exclusive store.
func (db *DB) placeHoldMem(ctx context.Context, h gw.Hold) error {
	b := db.book
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		if _, dup := b.holds[h.ID]; dup {
			b.mu.Unlock()
			return fmt.Errorf("place hold: hold %q: %w", h.ID, groupcommit.ErrHoldExists)
		}
		a := b.account(h.AccountID)
		if a.known {
			avail := gw.Money(a.balance - a.heldAt(db.now()))
			if avail >= h.Amount {
				mh := &memHold{Hold: h}
				b.holds[h.ID] = mh
				a.holds[h.ID] = mh
				a.held += int64(h.Amount)
				if h.ExpiresAt.Before(a.minExp) {
					a.minExp = h.ExpiresAt
				}
				b.mu.Unlock()
				return nil
			}
			if attempt > 0 {
				b.mu.Unlock()
				return insufficient(h.Amount, avail)
			}
		}
		b.mu.Unlock()
		// Load (or, before refusing, reload) the committed balance on
		// the committer, between batches.
		if err := db.gc.Submit(ctx, &groupcommit.Op{Kind: groupcommit.Load, ID: h.AccountID}, "place hold"); err != nil {
			return err
		}
	}
}

// loaded records the account's committed balance, read on the
// committer before a batch's writes.
func (b *book) loaded(id string, balance int64) {
	b.mu.Lock()
	a := b.account(id)
	a.balance, a.known = balance, true
	b.mu.Unlock()
}

// forget drops the account's known balance (after a top-up), so the next
// hold loads it.
func (b *book) forget(accountID string) {
	b.mu.Lock()
	if a := b.accts[accountID]; a != nil {
		a.known = false
	}
	b.mu.Unlock()
}

// take marks the hold as finishing and returns it; an unknown hold, or
// one another call is finishing, is ErrNotFound.
func (b *book) take(id, what string) (gw.Hold, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.holds[id]
	if h == nil || h.finishing {
		return gw.Hold{}, fmt.Errorf("%s: hold %q: %w", what, id, gw.ErrNotFound)
	}
	h.finishing = true
	return h.Hold, nil
}

// untake gives back a hold whose Settle or Release failed.
func (b *book) untake(id string) {
	b.mu.Lock()
	if h := b.holds[id]; h != nil {
		h.finishing = false
	}
	b.mu.Unlock()
}

// finish removes the hold and applies its charge to the known balance,
// once the charge is committed.
func (b *book) finish(id string, charge int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.holds[id]
	if h == nil {
		return
	}
	delete(b.holds, id)
	a := b.accts[h.AccountID]
	delete(a.holds, id)
	a.held -= int64(h.Amount)
	a.balance -= charge
}

// liveOthers returns what the account's live holds other than id hold at
// now, and what id itself holds (0 when it has expired).
func (b *book) liveOthers(accountID, id string, now time.Time) (others, own int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.accts[accountID]
	if a == nil {
		return 0, 0
	}
	held := a.heldAt(now)
	if h := a.holds[id]; h != nil && h.ExpiresAt.After(now) {
		own = int64(h.Amount)
	}
	return held - own, own
}

// settleView is liveOthers with the account's balance as the book knows
// it: the committed balance loaded last, less the charges committed
// since, which is never above the table's (see finishMem); 0 when never
// loaded.
func (b *book) settleView(accountID, id string, now time.Time) (balance, others, own int64) {
	others, own = b.liveOthers(accountID, id, now)
	b.mu.Lock()
	if a := b.accts[accountID]; a != nil {
		balance = a.balance
	}
	b.mu.Unlock()
	return balance, others, own
}

// renew moves a live hold's expiry to exp (never earlier); false when the
// hold is unknown, finishing or already past its expiry. The account's
// minExp stays a lower bound of its holds' expiries.
func (b *book) renew(id string, exp, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.holds[id]
	if h == nil || h.finishing || !h.ExpiresAt.After(now) {
		return false
	}
	if exp.After(h.ExpiresAt) {
		h.ExpiresAt = exp
	}
	return true
}

// release removes a hold that wrote nothing.
func (b *book) release(id string) { b.finish(id, 0) }

// expire removes the holds whose expiry is not after now (except those
// being finished: their commit removes them) and returns how many.
func (b *book) expire(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for id, h := range b.holds {
		if h.finishing || h.ExpiresAt.After(now) {
			continue
		}
		delete(b.holds, id)
		a := b.accts[h.AccountID]
		delete(a.holds, id)
		a.held -= int64(h.Amount)
		n++
	}
	return n
}

// heldOf returns the account's unexpired held total at now.
func (b *book) heldOf(accountID string, now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.accts[accountID]; a != nil {
		return a.heldAt(now)
	}
	return 0
}

// lockShared takes the holds lock shared before a store without Exclusive
// places its first hold.
func (db *DB) lockShared() error {
	db.lockMu.Lock()
	defer db.lockMu.Unlock()
	if db.lock != nil {
		return nil
	}
	l, err := lockHolds(db.path, false)
	if err != nil {
		return err
	}
	db.lock = l
	return nil
}
