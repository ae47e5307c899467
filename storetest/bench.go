package storetest

import (
	"fmt"
	"slices"
	"sync"
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

// BenchmarkSettleAtRate is requests arriving at rate per second (open
// loop: each starts on schedule whatever the others do), each placing a
// hold and settling it, as a gateway's store sees them under steady
// load. Besides CPU per request it reports the median and 99th
// percentile time a request spent in the store (hold + settle), which a
// group commit that waits for more calls trades against its CPU.
func BenchmarkSettleAtRate(b *testing.B, s gw.Store, rate float64) {
	BenchmarkRequestsAtRate(b, s, rate, 0)
}

// BenchmarkRequestsAtRate is BenchmarkSettleAtRate with requests that
// take d between their hold and their settle (the vendor's answer), so
// that, as in a gateway, requests are in flight when a settle comes.
// The times it reports include d.
func BenchmarkRequestsAtRate(b *testing.B, s gw.Store, rate float64, d time.Duration) {
	ctx := b.Context()
	a, err := s.EnsureAccount(ctx, "bench")
	if err != nil {
		b.Fatalf("EnsureAccount: %v", err)
	}
	if err := s.TopUp(ctx, a.ID, 1_000_000*gw.USD, "bench"); err != nil {
		b.Fatalf("TopUp: %v", err)
	}
	at := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	cpu := startCPU(b)
	var wg sync.WaitGroup
	lat := make([]time.Duration, b.N)
	start := time.Now()
	for i := range b.N {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		wg.Go(func() {
			t0 := time.Now()
			id := fmt.Sprintf("req_%012d", i)
			if err := s.PlaceHold(ctx, hold(id, a.ID, gw.Cent)); err != nil {
				b.Errorf("PlaceHold: %v", err)
				return
			}
			if d > 0 {
				time.Sleep(d)
			}
			if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
				b.Errorf("Settle: %v", err)
			}
			lat[i] = time.Since(t0)
		})
	}
	wg.Wait()
	cpu.report()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
}

// BenchmarkHoldSettleBudgeted is BenchmarkHoldSettleRecord under a key's
// and its account's daily and monthly budgets (large enough never to
// refuse), after prior charged requests of the key this month: what the
// budgets add to a request's store path, and how that grows with the
// period's records (on a store that sums them per hold).
func BenchmarkHoldSettleBudgeted(b *testing.B, s gw.Store, prior int) {
	ctx := b.Context()
	a, err := s.EnsureAccount(ctx, "bench-budget")
	if err != nil {
		b.Fatalf("EnsureAccount: %v", err)
	}
	if err := s.TopUp(ctx, a.ID, 1_000_000*gw.USD, "bench"); err != nil {
		b.Fatalf("TopUp: %v", err)
	}
	at := time.Now()
	big := gw.Budget{Daily: 100_000 * gw.USD, Monthly: 100_000 * gw.USD}
	h := func(id string) gw.Hold {
		return gw.Hold{ID: id, AccountID: a.ID, KeyID: "key_1", Amount: gw.Cent, ExpiresAt: time.Now().Add(time.Hour), At: at, KeyBudget: big, AccountBudget: big}
	}
	for i := range prior {
		id := fmt.Sprintf("req_prior_%09d", i)
		if err := s.PlaceHold(ctx, hold(id, a.ID, gw.Cent)); err != nil {
			b.Fatalf("PlaceHold: %v", err)
		}
		if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
			b.Fatalf("Settle: %v", err)
		}
	}
	b.ReportAllocs()
	cpu := startCPU(b)
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("req_%012d", i)
		if err := s.PlaceHold(ctx, h(id)); err != nil {
			b.Fatalf("PlaceHold: %v", err)
		}
		if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
			b.Fatalf("Settle: %v", err)
		}
	}
	cpu.report()
}
