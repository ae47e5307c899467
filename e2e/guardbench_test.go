package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/guard"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// BenchmarkGreyBandTTFB measures what the second stage adds to the time
// to first byte of a grey-band request, one request at a time, against
// the same request with no second stage (the band let through) and a
// clear request, in the same run:
//
//	go test -run '^$' -bench GreyBandTTFB -benchtime 40x ./e2e/
//
// ttfb-ms is the mean time from sending the request to the response
// headers. With the vendor answering at once, the second stage's latency
// shows in full; with a vendor slower than the classifier (the vendor's
// first byte delayed 300 ms) it runs in parallel and adds nothing.
func BenchmarkGreyBandTTFB(b *testing.B) {
	g, err := guard.New(guard.Config{})
	if err != nil {
		b.Fatal(err)
	}
	slowVendor := greyText + " [fake:slow=300ms]"
	for _, s := range []string{greyText, slowVendor} {
		if v := g.Check([]guard.Segment{{Source: guard.SourceUser, Text: s}}); !v.Grey {
			b.Fatalf("%q is not in the grey band: %+v", s, v)
		}
	}
	for _, c := range []struct {
		name    string
		text    string
		latency time.Duration // 0: no second stage
	}{
		{"clear/none", "What is the capital of Portugal?", 0},
		{"grey/none", greyText, 0},
		{"grey/fake20ms", greyText, 20 * time.Millisecond},
		{"grey/fake200ms", greyText, 200 * time.Millisecond},
		{"grey-slowvendor/none", slowVendor, 0},
		{"grey-slowvendor/fake20ms", slowVendor, 20 * time.Millisecond},
		{"grey-slowvendor/fake200ms", slowVendor, 200 * time.Millisecond},
	} {
		b.Run(c.name, func(b *testing.B) {
			var opt func(*app.Config)
			if c.latency > 0 {
				f := newFakeClassifier(b, c.latency, 0.1)
				opt = withSecondStage(f, time.Second, false)
			}
			url, key := startGuardBench(b, opt)
			body := chatBody("openai/"+nativeModels["openai"], c.text, false, "")
			client := benchClient()
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ttfb-ms")
		})
	}
}

func startGuardBench(b *testing.B, opt func(*app.Config)) (url, key string) {
	b.Helper()
	fake, err := fakevendor.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fake.Close() })
	cfg, _ := app.ConfigFromEnv(func(string) string { return "" })
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = filepath.Join(b.TempDir(), "gateway.db")
	cfg.RPM, cfg.TPM = 0, 0
	for _, v := range route.Vendors() {
		cfg.Vendors[v] = app.VendorConfig{BaseURL: fake.BaseURL(v), APIKey: fake.APIKey(v)}
	}
	if opt != nil {
		opt(&cfg)
	}
	m := &app.Main{Config: cfg}
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
	secret, _, err := createKey(context.Background(), m.Store(), fmt.Sprintf("guardbench-%d", time.Now().UnixNano()), 1000*gw.USD)
	if err != nil {
		b.Fatal(err)
	}
	return "http://" + m.Addr(), secret
}
