package optimize

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// countPrefix starts the name of every count kept in Config.Store
// (countDocument), of any directive version.
const countPrefix = "optimizer_count/"

// SweepStore is a CountStore that can delete kept documents: the
// gateway's stores.
type SweepStore interface {
	SweepDocuments(ctx context.Context, prefix string, drop func(name string, at time.Time) bool) (int, error)
}

// SweepCounts deletes the counts Config.Store keeps that no request
// reads any more: those of another directive version or text, those of
// a model that is not the rate card's id (left by versions that kept a
// count under the caller's spelling of the model, or a model since
// taken off the card), and those older than TTL. It returns how many it
// deleted; 0 when the store cannot delete.
func (o *Optimizer) SweepCounts(ctx context.Context) (int, error) {
	if o == nil {
		return 0, nil
	}
	s, ok := o.cfg.Store.(SweepStore)
	if !ok {
		return 0, nil
	}
	now := o.cfg.Now()
	return s.SweepDocuments(ctx, countPrefix, func(name string, at time.Time) bool {
		return !o.keptCount(name, at, now)
	})
}

// keptCount reports whether the count kept under name, taken at at, is
// one a request may still read.
func (o *Optimizer) keptCount(name string, at, now time.Time) bool {
	rest, _ := strings.CutPrefix(name, countPrefix)
	version, rest, ok := strings.Cut(rest, "/")
	if !ok || version != "v"+strconv.Itoa(Version)+"-"+textHash() {
		return false
	}
	vendor, model, ok := strings.Cut(rest, "/")
	if !ok || vendor == "" || model == "" {
		return false
	}
	if id, ok := o.canonical(vendor, model); !ok || id != model {
		return false
	}
	return now.Sub(at) < o.cfg.TTL && !at.After(now.Add(time.Minute))
}

// CountDocument is the name vendor's model's count is kept under in
// Config.Store (for a store's tests).
func CountDocument(vendor, model string) string { return countDocument(vendor, model) }
