package gw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Incarnation names one start of one gateway instance: Instance is the
// instance's stable name (GATEWAY_INSTANCE, by default the host name),
// the same across its restarts; ID is random for each process start.
type Incarnation struct {
	Instance string
	ID       string
}

// NewIncarnation returns instance's incarnation for this process start.
func NewIncarnation(instance string) Incarnation {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return Incarnation{Instance: instance, ID: hex.EncodeToString(b)}
}

// Incarnations is implemented by stores whose holds outlive the process
// that placed them (PostgreSQL, SQLite in shared mode): each hold carries
// the incarnation of the process that placed it, so that a restarted
// instance releases the holds of its own earlier incarnations at start,
// without waiting for their leases, and never another instance's.
type Incarnations interface {
	// SetIncarnation stamps every hold the store places from now on.
	SetIncarnation(inc Incarnation)
	// ReleaseEarlierIncarnations deletes the holds of inc.Instance
	// placed by an incarnation other than inc.ID, takes them off their
	// accounts' held totals, records each request as cut by a crash
	// (like ExpireHolds), and returns how many it released.
	ReleaseEarlierIncarnations(ctx context.Context, inc Incarnation) (int, error)
}
