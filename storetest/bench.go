package storetest

import (
	"fmt"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// BenchmarkHoldSettleRecord measures one billed request's store path
// alone, without concurrency: PlaceHold, then Settle with its record
// (the charge, the ledger entry and the record row). Its ns/op is the
// latency those writes add to a request on an idle store; allocs/op is
// the store's own garbage per request.
func BenchmarkHoldSettleRecord(b *testing.B, s gw.Store) {
	ctx := b.Context()
	a, err := s.EnsureAccount(ctx, "bench")
	if err != nil {
		b.Fatalf("EnsureAccount: %v", err)
	}
	if err := s.TopUp(ctx, a.ID, 1_000_000*gw.USD, "bench"); err != nil {
		b.Fatalf("TopUp: %v", err)
	}
	at := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("req_%012d", i)
		if err := s.PlaceHold(ctx, hold(id, a.ID, gw.Cent)); err != nil {
			b.Fatalf("PlaceHold: %v", err)
		}
		if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
			b.Fatalf("Settle: %v", err)
		}
	}
}
