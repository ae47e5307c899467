package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// The benchmarks here measure the gateway against a baseline in the same
// process:
//
//	BenchmarkPassThrough/direct    a client calling the fake vendor itself
//	BenchmarkPassThrough/gateway   the same call through the gateway (auth,
//	                               routing, guard, limits, hold, settle on SQLite)
//	BenchmarkSettled/<store>/{nobilling,billing}
//	                               requests through the full path with billing
//	                               off (baseline) and on, per store
//
// Compare ns/op, cpu-us/op and allocs/op between the pairs (benchstat
// works on the output). cpu-us/op is the process's CPU time (user +
// system) per request: client, fake vendor and gateway together, so the
// gateway's own share is gateway minus direct; unlike ns/op it does not
// depend on how much CPU the machine's other processes leave.
// Run: go test -run '^$' -bench . -benchmem ./e2e/

type benchEnv struct {
	url  string
	key  string
	body []byte
	path string
	hdr  http.Header
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
}

func startBenchGateway(b *testing.B, dbURL string, billingOn bool, opts ...func(*app.Config)) (*app.Main, *fakevendor.Server, string) {
	b.Helper()
	fake, err := fakevendor.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fake.Close() })
	cfg, _ := app.ConfigFromEnv(func(string) string { return "" })
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = dbURL
	cfg.RPM, cfg.TPM = 0, 0
	for _, v := range route.Vendors() {
		cfg.Vendors[v] = app.VendorConfig{BaseURL: fake.BaseURL(v), APIKey: fake.APIKey(v)}
	}
	for _, o := range opts {
		o(&cfg)
	}
	m := &app.Main{Config: cfg, NoBilling: !billingOn}
	if err := m.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve() }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Shutdown(ctx)
		<-done
		_ = m.Close()
	})
	secret, _, err := createKey(context.Background(), m.Store(), fmt.Sprintf("bench-%d", time.Now().UnixNano()), 1_000_000*gw.USD)
	if err != nil {
		b.Fatal(err)
	}
	return m, fake, secret
}

func runBench(b *testing.B, e benchEnv) {
	client := benchClient()
	b.ReportAllocs()
	// 16 x GOMAXPROCS requests in flight, as under real traffic (with two
	// cores, RunParallel alone keeps only two in flight, and every request
	// would wait for its own commits instead of sharing group commits).
	b.SetParallelism(16)
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, e.url+e.path, bytes.NewReader(e.body))
			req.Header = e.hdr.Clone()
			if e.key != "" {
				req.Header.Set("Authorization", "Bearer "+e.key)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	if cpu1 := processCPU(); cpu0 >= 0 && cpu1 >= 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-us/op")
	}
}

// processCPU returns the process's user + system CPU time in
// microseconds (-1 when unknown).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}

func BenchmarkPassThrough(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "nonstream"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			m, fake, key := startBenchGateway(b, filepath.Join(b.TempDir(), "bench.db"), true)
			_ = m
			hdr := http.Header{"Content-Type": {"application/json"}}
			model := nativeModels["openai"]
			extra := ""
			if stream {
				// The caller asks for usage itself, so both runs send the
				// vendor the same body.
				extra = `,"stream_options":{"include_usage":true}`
			}
			b.Run("direct", func(b *testing.B) {
				h := hdr.Clone()
				h.Set("Authorization", "Bearer "+fake.APIKey("openai"))
				runBench(b, benchEnv{url: fake.BaseURL("openai"), path: "/chat/completions", body: chatBody(model, "Say hello.", stream, extra), hdr: h})
			})
			b.Run("gateway", func(b *testing.B) {
				runBench(b, benchEnv{url: "http://" + m.Addr(), path: "/v1/chat/completions", key: key, body: chatBody("openai/"+model, "Say hello.", stream, extra), hdr: hdr})
			})
			// The same with the optimization layer off for the request:
			// what the directive costs on the request path.
			if !stream {
				// Holds in the SQLite table (several processes on one
				// file), as before they moved to memory.
				b.Run("gateway_sqlite_shared", func(b *testing.B) {
					ms, _, skey := startBenchGateway(b, filepath.Join(b.TempDir(), "shared.db"), true, func(c *app.Config) { c.SQLiteShared = true })
					runBench(b, benchEnv{url: "http://" + ms.Addr(), path: "/v1/chat/completions", key: skey, body: chatBody("openai/"+model, "Say hello.", stream, extra), hdr: hdr})
				})
			}
			// Every request traced and exported over OTLP/HTTP to an
			// in-process receiver: what tracing costs when it is on (off,
			// the gateway run above builds no span).
			b.Run("gateway_traced", func(b *testing.B) {
				rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/x-protobuf")
				}))
				b.Cleanup(rcv.Close) // after the gateway's close, which flushes
				otel := func(k string) string {
					if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
						return rcv.URL
					}
					return ""
				}
				mt, _, tkey := startBenchGateway(b, filepath.Join(b.TempDir(), "traced.db"), true, func(c *app.Config) { c.OTelEnv = otel })
				runBench(b, benchEnv{url: "http://" + mt.Addr(), path: "/v1/chat/completions", key: tkey, body: chatBody("openai/"+model, "Say hello.", stream, extra), hdr: hdr})
			})
			b.Run("gateway_optimize_off", func(b *testing.B) {
				h := hdr.Clone()
				h.Set("X-Gateway-Optimize", "off")
				runBench(b, benchEnv{url: "http://" + m.Addr(), path: "/v1/chat/completions", key: key, body: chatBody("openai/"+model, "Say hello.", stream, extra), hdr: h})
			})
		})
	}
}

func BenchmarkSettled(b *testing.B) {
	stores := map[string]func(b *testing.B) string{
		"sqlite": func(b *testing.B) string { return filepath.Join(b.TempDir(), "bench.db") },
	}
	if u := os.Getenv("GATEWAY_TEST_POSTGRES_URL"); u != "" {
		stores["postgres"] = func(b *testing.B) string { return u }
	}
	for _, name := range []string{"sqlite", "postgres"} {
		open, ok := stores[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			for _, billingOn := range []bool{false, true} {
				mode := "nobilling"
				if billingOn {
					mode = "billing"
				}
				b.Run(mode, func(b *testing.B) {
					m, _, key := startBenchGateway(b, open(b), billingOn)
					runBench(b, benchEnv{url: "http://" + m.Addr(), path: "/v1/chat/completions", key: key,
						body: chatBody("openai/"+nativeModels["openai"], "Say hello.", false, ""), hdr: http.Header{"Content-Type": {"application/json"}}})
					if billingOn {
						assertLedger(b, m)
					}
				})
			}
		})
	}
}

// assertLedger checks the balance identity after a billed run.
func assertLedger(b *testing.B, m *app.Main) {
	b.Helper()
	keys, err := m.Store().Keys(context.Background())
	if err != nil || len(keys) == 0 {
		b.Fatal("no keys", err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k.AccountName, "bench-") {
			continue
		}
		bal, err := m.Store().Balance(context.Background(), k.AccountID)
		if err != nil {
			b.Fatal(err)
		}
		if bal.Balance != bal.TopUps-bal.Charged || bal.Held != 0 {
			b.Fatalf("balance identity broken: %+v", bal)
		}
	}
}
