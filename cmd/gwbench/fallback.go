package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"
)

// FallbackConfig is a -fallback run: the gateway at Rate req/s for
// Duration, its requests for openai/gpt-6-sol naming
// anthropic/claude-sonnet-5-5 as their fallback ("models"), first with a
// healthy primary, then with the primary answering 503 to FailPercent of
// its requests (the same requests every try, so they reach the
// fallback). Two gateways: the defaults (2 retries, breakers), and one
// with retries and breakers off (every failed request falls over on its
// own).
type FallbackConfig struct {
	Gateway     string
	Rate        float64
	Duration    time.Duration
	FailPercent int
	Repeats     int
}

// RunFallback runs the fallback comparison and returns its Markdown table.
func RunFallback(ctx context.Context, cfg FallbackConfig, log io.Writer) (string, error) {
	dir, err := os.MkdirTemp("", "gwbench-fb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	bin := cfg.Gateway
	if bin == "" {
		fmt.Fprintln(log, "building ./cmd/gateway ...")
		if bin, err = buildGateway(ctx, dir); err != nil {
			return "", err
		}
	}
	mock := NewMock(MockConfig{Chunks: 20})
	ms := httptest.NewServer(mock)
	defer ms.Close()
	pin := pinning(1)
	if pin != nil && !pinSelf(0) {
		pin = nil
	}
	type gwRun struct {
		name string
		env  []string
	}
	gws := []gwRun{
		{"gateway (defaults: 2 retries, breakers)", nil},
		{"gateway (retries and breakers off)", []string{"GATEWAY_MAX_RETRIES=0", "GATEWAY_BREAKER_FAILURES=0"}},
	}
	client := newClient(1024)
	defer client.CloseIdleConnections()
	var b strings.Builder
	fmt.Fprintf(&b, "load average at start: %s\n\n", loadAvg())
	fmt.Fprintf(&b, "| gateway | primary | round | ok / errors | p50 | p99 | primary 503s | served by the fallback |\n|---|---|---|---|---|---|---|---|\n")
	for i, g := range gws {
		p, key, err := startGateway(ctx, dir, pin, gatewayOpts{Binary: bin, Database: fmt.Sprintf("%s/gw%d.db", dir, i), Env: g.env, Name: fmt.Sprintf("gateway-%d", i)}, ms.URL)
		if err != nil {
			return "", err
		}
		var n atomic.Int64
		t := Target{Name: g.name, URLs: []string{p.url}, Pids: []int{p.pid}, Request: func(bool) (string, http.Header, []byte) {
			h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + key}}
			return "/v1/chat/completions", h, fmt.Appendf(nil, `{"model":"openai/gpt-6-sol","models":["anthropic/claude-sonnet-5-5"],"max_tokens":64,"messages":[{"role":"user","content":"%s #%d"}]}`, prompt, n.Add(1))
		}}
		mock.Set(MockConfig{Chunks: 20})
		Rate(ctx, client, t, 200, 500*time.Millisecond, drainRate)
		for rnd := range max(cfg.Repeats, 1) {
			for _, fail := range []int{0, cfg.FailPercent} {
				mock.Set(MockConfig{Chunks: 20, FailModel: "gpt-6-sol", FailPercent: fail})
				mock.Failed.Store(0)
				before := mock.Messages.Load()
				r := Rate(ctx, client, t, cfg.Rate, cfg.Duration, drainRate)
				primary := "healthy"
				if fail > 0 {
					primary = fmt.Sprintf("503 to %d%%", fail)
				}
				served := mock.Messages.Load() - before
				fmt.Fprintf(log, "%-45s %-12s round %d ok %d err %d p50 %v p99 %v 503s %d served %d %s\n", g.name, primary, rnd+1, r.OK, r.Errors,
					r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), mock.Failed.Load(), served, r.FirstErr)
				fmt.Fprintf(&b, "| %s | %s | %d | %d / %d | %v | %v | %d | %d |\n", g.name, primary, rnd+1, r.OK, r.Errors,
					r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), mock.Failed.Load(), served)
				client.CloseIdleConnections()
				if fail > 0 {
					// Let an open breaker (10 s by default) close
					// before the next healthy run.
					time.Sleep(11 * time.Second)
				}
			}
		}
		p.stop()
	}
	fmt.Fprintf(&b, "\nload average at end: %s\n", loadAvg())
	return b.String(), nil
}

// runFallback is main's -fallback branch.
func runFallback(gateway, rates string, d time.Duration, repeats, fail int) {
	cfg := FallbackConfig{Gateway: gateway, Rate: 1000, Duration: 5 * time.Second, FailPercent: fail, Repeats: repeats}
	if rates != "" {
		if _, err := fmt.Sscanf(strings.Split(rates, ",")[0], "%g", &cfg.Rate); err != nil {
			fmt.Fprintln(os.Stderr, "gwbench: -rates:", err)
			os.Exit(2)
		}
	}
	if d > 0 {
		cfg.Duration = d
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	table, err := RunFallback(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gwbench:", err)
		os.Exit(1)
	}
	fmt.Print(table)
}
