package optimize

import (
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
