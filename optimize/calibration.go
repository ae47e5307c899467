package optimize

import (
	"errors"
	"fmt"
	"time"
)

// DefaultCountsPerDay is Config.CountsPerDay's default: the models a
// vendor's directive is counted for in one UTC day, across all tenants.
const DefaultCountsPerDay = 50

// canonical returns the model a count is kept under: the rate card's id
// (Config.Canonical: aliases and the vendor's case rules resolved), so
// that no spelling of a model starts a count of its own. ok is false for
// a model that is not on the rate card: it is never counted, and the
// directive's upper bound is taken off its prompt.
func (o *Optimizer) canonical(vendor, model string) (string, bool) {
	if o.cfg.Canonical == nil {
		return model, true
	}
	return o.cfg.Canonical(vendor, model)
}

// admitCount takes one of vendor's counts of the day (Config.
// CountsPerDay, across all tenants): an error once the day's are spent,
// so that the directive's upper bound applies until the next day.
func (o *Optimizer) admitCount(vendor string) error {
	limit := o.cfg.CountsPerDay
	if limit == 0 {
		limit = DefaultCountsPerDay
	}
	if limit < 0 {
		return nil
	}
	day := o.cfg.Now().UTC().Format(time.DateOnly)
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.daily[vendor]
	if d.day != day {
		d = dayCount{day: day}
	}
	if d.n >= limit {
		return fmt.Errorf("%s: the day's %d directive counts are spent", vendor, limit)
	}
	d.n++
	o.daily[vendor] = d
	return nil
}

// dayCount is one vendor's counts on one UTC day.
type dayCount struct {
	day string
	n   int
}

// CountsToday returns the directive counts taken today per vendor (each
// count is two to six vendor calls on a vendor without a count endpoint;
// their cost is on the operator's records, noted
// optimizer_calibration).
func (o *Optimizer) CountsToday() map[string]int {
	day := o.cfg.Now().UTC().Format(time.DateOnly)
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for v, d := range o.daily {
		if d.day == day {
			out[v] = d.n
		}
	}
	return out
}

// Paid is implemented by a Counter whose counts are real vendor requests
// at the operator's cost (a vendor without a count endpoint): such a
// model is counted only after a request of it succeeded, so that a
// request the vendor refuses never costs the operator a count.
type Paid interface {
	PaidCount() bool
}

// Succeeded notes that a request of vendor's model succeeded: a paid
// count of it may be taken from now on (see Paid).
func (o *Optimizer) Succeeded(vendor, model string) {
	if o == nil {
		return
	}
	model, ok := o.canonical(vendor, model)
	if !ok {
		return
	}
	key := countKey(vendor, model)
	o.mu.Lock()
	if !o.served[key] && len(o.served) < maxServed {
		o.served[key] = true
		delete(o.failed, key) // an unserved model's back-off
	}
	o.mu.Unlock()
}

// errUnserved is a paid count asked before a request of the model
// succeeded.
var errUnserved = errors.New("no request of the model has succeeded yet")

// maxServed bounds the models remembered as served (the rate card's
// models, when Config.Canonical is set).
const maxServed = 100_000

// unserved reports whether vendor's (canonical) model may not be
// counted yet: a paid counter and no request of it succeeded.
func (o *Optimizer) unserved(vendor, model string) bool {
	p, ok := o.cfg.Counters[vendor].(Paid)
	if !ok || !p.PaidCount() {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.served[countKey(vendor, model)]
}
