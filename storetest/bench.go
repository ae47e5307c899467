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
	cpu := startCPU(b)
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("req_%012d", i)
		if err := s.PlaceHold(ctx, hold(id, a.ID, gw.Cent)); err != nil {
			b.Fatalf("PlaceHold: %v", err)
		}
		if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
			b.Fatalf("Settle: %v", err)
		}
	}
	cpu.report()
}

// cpuMeter reports the process's CPU time per op (user + system, every
// goroutine's, the store's background work included), which unlike ns/op
// does not depend on how much CPU other processes leave the benchmark.
type cpuMeter struct {
	b     *testing.B
	start int64
}

// startCPU resets the benchmark's timer and starts the CPU meter.
func startCPU(b *testing.B) cpuMeter {
	b.ResetTimer()
	return cpuMeter{b: b, start: processCPU()}
}

func (m cpuMeter) report() {
	m.b.StopTimer()
	if end := processCPU(); m.start >= 0 && end >= 0 && m.b.N > 0 {
		m.b.ReportMetric(float64(end-m.start)/float64(m.b.N), "cpu-us/op")
	}
}
