package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
	"github.com/gwlabs/gateway/internal/sqlstore"
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
	// open counts the holds not being finished: requests in flight,
	// whose settles the group commit can wait for.
	open atomic.Int64
	// spend is the committed charges of a key or account in a budget
	// period, for those a hold under a budget needed (see budget.go):
	// loaded once on the committer, then kept by finish.
	spend map[spendKey]int64
	// budgets is set once a spend was loaded: until then a settle has no
	// budget period to keep, and takes no lock for it.
	budgets atomic.Bool
}

// spendKey is a key's or an account's budget period: owner is the key or
// account id, start the period's first instant (Unix seconds).
type spendKey struct {
	owner  string
	period gw.BudgetPeriod
	start  int64
}

func keyOf(owner string, p gw.BudgetPeriod, at time.Time) spendKey {
	start, _ := gw.PeriodOf(p, at)
	return spendKey{owner, p, start.Unix()}
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
	return &book{holds: map[string]*memHold{}, accts: map[string]*account{}, spend: map[spendKey]int64{}}
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
		limits := h.BudgetLimits()
		if a.known && b.spendKnown(limits, h.At) {
			now := db.now()
			avail := gw.Money(a.balance - a.heldAt(now))
			if avail >= h.Amount {
				if err := b.fits(a, &h, limits, now); err != nil {
					b.mu.Unlock()
					return err
				}
				mh := &memHold{Hold: h}
				b.open.Add(1)
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
				return groupcommit.Insufficient(h.Amount, avail)
			}
		}
		b.mu.Unlock()
		// Load (or, before refusing, reload) the committed balance, and
		// the budget periods' spends, on the committer, between batches.
		if err := db.gc.Submit(ctx, &groupcommit.Op{Kind: groupcommit.Load, ID: h.AccountID, Hold: h}, "place hold"); err != nil {
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
	b.open.Add(-1)
	return h.Hold, nil
}

// untake gives back a hold whose Settle or Release failed.
func (b *book) untake(id string) {
	b.mu.Lock()
	if h := b.holds[id]; h != nil && h.finishing {
		h.finishing = false
		b.open.Add(1)
	}
	b.mu.Unlock()
}

// finish removes the hold and applies its charge to the known balance,
// and to the known spends of the budget periods containing at (its
// record's time), once the charge is committed.
func (b *book) finish(id string, charge int64, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.holds[id]
	if h == nil {
		return
	}
	if !h.finishing {
		b.open.Add(-1)
	}
	delete(b.holds, id)
	a := b.accts[h.AccountID]
	delete(a.holds, id)
	a.held -= int64(h.Amount)
	a.balance -= charge
	if charge > 0 && len(b.spend) > 0 {
		for _, k := range spendKeys(&h.Hold, at) {
			if s, ok := b.spend[k]; ok {
				b.spend[k] = s + charge
			}
		}
	}
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
func (b *book) release(id string) { b.finish(id, 0, time.Time{}) }

// expire removes the holds whose expiry is not after now (except those
// being finished: their commit removes them) and returns how many.
func (b *book) expire(now time.Time) []sqlstore.LapsedHold {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lapsed []sqlstore.LapsedHold
	for id, h := range b.holds {
		if h.finishing || h.ExpiresAt.After(now) {
			continue
		}
		delete(b.holds, id)
		b.open.Add(-1)
		a := b.accts[h.AccountID]
		delete(a.holds, id)
		a.held -= int64(h.Amount)
		lapsed = append(lapsed, sqlstore.LapsedHold{ID: h.ID, AccountID: h.AccountID, KeyID: h.KeyID,
			Vendor: h.Vendor, Model: h.Model, Amount: h.Amount, CreatedAt: h.At})
	}
	return lapsed
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

// spendKeys are the four budget periods a hold's charge counts in: its
// key's and its account's day and month containing at.
func spendKeys(h *gw.Hold, at time.Time) [4]spendKey {
	return [4]spendKey{
		keyOf(h.KeyID, gw.Daily, at), keyOf(h.KeyID, gw.Monthly, at),
		keyOf(h.AccountID, gw.Daily, at), keyOf(h.AccountID, gw.Monthly, at),
	}
}

// spendKnown reports whether the book knows the spend of every period
// in limits (b.mu held).
func (b *book) spendKnown(limits []gw.BudgetLimit, at time.Time) bool {
	for _, l := range limits {
		if _, ok := b.spend[keyOf(l.Owner, l.Period, at)]; !ok {
			return false
		}
	}
	return true
}

// loadedSpend records the committed spend of a budget period, read on
// the committer before a batch's writes, and forgets the owner's earlier
// periods of the same kind.
func (b *book) loadedSpend(k spendKey, spent int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for o := range b.spend {
		if o.owner == k.owner && o.period == k.period && o.start < k.start {
			delete(b.spend, o)
		}
	}
	b.spend[k] = spent
	b.budgets.Store(true)
}

// heldIn sums the live holds of l's owner (in a's account) placed in the
// period of l containing at, except the hold except.
func (b *book) heldIn(accountID string, l gw.BudgetLimit, at time.Time, except string, now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.accts[accountID]
	if a == nil {
		return 0
	}
	return a.heldIn(l, at, except, now)
}

func (a *account) heldIn(l gw.BudgetLimit, at time.Time, except string, now time.Time) int64 {
	start, end := gw.PeriodOf(l.Period, at)
	var sum int64
	for id, h := range a.holds {
		if id == except || !h.ExpiresAt.After(now) || h.At.Before(start) || !h.At.Before(end) {
			continue
		}
		if l.Scope == gw.BudgetKey && h.KeyID != l.Owner {
			continue
		}
		sum += int64(h.Amount)
	}
	return sum
}

// fits refuses h when it does not fit in one of its budgets (b.mu held,
// every spend known).
func (b *book) fits(a *account, h *gw.Hold, limits []gw.BudgetLimit, now time.Time) error {
	for _, l := range limits {
		u := gw.PeriodUse{
			Spent: gw.Money(b.spend[keyOf(l.Owner, l.Period, h.At)]),
			Held:  gw.Money(a.heldIn(l, h.At, h.ID, now)),
		}
		if !gw.FitsBudget(l.Limit, u, h.Amount) {
			return gw.BudgetExceeded(l, u, h.Amount, h.At)
		}
	}
	return nil
}

// batchUse is what a group commit batch has settled so far and the book
// does not show yet: charges committed in the transaction (by budget
// period of their record) and the live holds they finished (by period of
// the hold), which the book still counts as open.
type batchUse struct {
	charged map[spendKey]int64
	held    map[spendKey]int64
}

// cover is what a settle of h may debit under l: its hold (own, 0 when
// expired) plus what the budget still covers after the period's charges
// and the other live holds. A period the book no longer keeps (its hold
// outlived the period) is not bounded.
func (b *book) cover(l gw.BudgetLimit, h *gw.Hold, own int64, now time.Time, bu *batchUse) gw.Money {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := keyOf(l.Owner, l.Period, h.At)
	spent, ok := b.spend[k]
	a := b.accts[h.AccountID]
	if !ok || a == nil {
		return gw.Money(1<<63 - 1)
	}
	u := gw.PeriodUse{
		Spent: gw.Money(spent + bu.charged[k]),
		Held:  gw.Money(a.heldIn(l, h.At, h.ID, now) - bu.held[k]),
	}
	return gw.BudgetCover(l.Limit, u, gw.Money(own))
}

// tally adds a settle of h (own: its live amount; charge; at: its
// record's time) to the batch's use, when the book keeps any spend.
func (b *book) tally(h *gw.Hold, own, charge int64, at time.Time, bu *batchUse) {
	if !b.budgets.Load() {
		return
	}
	if bu.charged == nil {
		bu.charged, bu.held = map[spendKey]int64{}, map[spendKey]int64{}
	}
	for _, k := range spendKeys(h, h.At) {
		bu.held[k] += own
	}
	for _, k := range spendKeys(h, at) {
		bu.charged[k] += charge
	}
}
