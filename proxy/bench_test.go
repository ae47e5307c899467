package proxy_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// BenchmarkExchange is the proxy's part of one request, Begin to Finish,
// with a guard, a biller and holds and settles on SQLite (holds in
// memory; cpu-us/op includes the store's commits), against providers
// that answer at once: served by the first
// model, and served by a fallback after the first failed (go test -run
// '^$' -bench Exchange -benchmem ./proxy/).
func BenchmarkExchange(b *testing.B) {
	for _, tc := range []struct {
		name      string
		fallbacks []proxy.Target
		first     func(context.Context, *gw.Call) (*gw.Upstream, error)
	}{
		{"first", nil, serving},
		{"fallback", []proxy.Target{{Vendor: "groq", Model: "g"}}, failing(gw.CodeOverloaded)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			primary := &named{provider: provider{send: tc.first}, name: "openai"}
			fallback := &named{provider: provider{send: serving}, name: "groq"}
			bl := vendorBiller{hold: map[string]gw.Money{"openai": 5 * gw.Cent, "groq": 3 * gw.Cent}, cost: map[string]gw.Money{"openai": gw.Cent, "groq": gw.Cent}}
			f := newFallbackFixture(b, map[string]gw.Provider{"openai": primary, "groq": fallback}, bl)
			ctx := context.Background()
			if err := f.store.TopUp(ctx, f.principal.AccountID, 1_000_000*gw.USD, "bench"); err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"model":"openai/m","messages":[{"role":"user","content":"Say hello."}]}`)
			usage := gw.Usage{Reported: true, InputTokens: 10, OutputTokens: 5}
			b.ReportAllocs()
			cpu0 := processCPU()
			i := 0
			for b.Loop() {
				i++
				in := proxy.Inbound{RequestID: "req_" + strconv.Itoa(i), Endpoint: gw.ShapeC, Principal: f.principal, Vendor: "openai", Model: "m",
					Fallbacks: tc.fallbacks, Body: body, Received: time.Now()}
				x, err := f.gw.Begin(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				up, err := x.Call(ctx)
				if err != nil {
					b.Fatal(err)
				}
				up.Body.Close()
				if _, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: usage}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-us/op")
		})
	}
}

// processCPU is the process's user and system CPU time in microseconds:
// unlike ns/op, it does not grow with the machine's other load.
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}
