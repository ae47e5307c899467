package gw

import (
	"context"
	"time"
)

// RefusedSweeper is what both stores do to bound the rows refused and
// blocked requests leave: SweepRefused deletes the incidents (and their
// kept texts) and the records of refused requests (an error status,
// neither charge nor vendor cost) created before before, and all but
// each account's newest perAccount of each; reviewed incidents are
// kept. It returns the rows deleted.
type RefusedSweeper interface {
	SweepRefused(ctx context.Context, before time.Time, perAccount int) (int, error)
}
