package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/guard"
	"github.com/gwlabs/gateway/metrics"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratelimit"
	"github.com/gwlabs/gateway/redis"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/server"
)

// Main is the running gateway: Open builds it from Config and starts
// listening, Serve serves until Shutdown, Close releases everything. Tests
// run it on 127.0.0.1:0 with a temporary SQLite file.
type Main struct {
	Config Config
	Stdout io.Writer
	Logger *slog.Logger

	// noBilling turns holds and charges off (requests are still logged):
	// the baseline of the billing benchmark.
	noBilling bool

	store   gw.Store
	fake    *fakevendor.Server
	closers []func() error
	server  *server.Server
	http    *http.Server
	ln      net.Listener
	metrics *http.Server // nil unless GATEWAY_METRICS_ADDR is set
	mln     net.Listener
	stop    chan struct{}
	wg      sync.WaitGroup
}

// Addr returns the address the gateway listens on.
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Store returns the gateway's store.
func (m *Main) Store() gw.Store { return m.store }

// Fake returns the in-process fake vendors, when --fake-vendors is on.
func (m *Main) Fake() *fakevendor.Server { return m.fake }

// Open builds the gateway and starts listening (not yet serving).
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = m.Close()
		}
	}()
	c := &m.Config
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if m.Stdout == nil {
		m.Stdout = io.Discard
	}
	if c.FakeVendors {
		m.fake, err = fakevendor.Start()
		if err != nil {
			return fmt.Errorf("start fake vendors: %w", err)
		}
		m.closers = append(m.closers, m.fake.Close)
		for _, v := range route.Vendors() {
			vc := c.Vendors[v]
			if vc.APIKey == "" {
				// Real keys win: a vendor with a configured key is
				// the real one, the others are faked.
				c.Vendors[v] = VendorConfig{BaseURL: m.fake.BaseURL(v), APIKey: m.fake.APIKey(v)}
			}
		}
	}
	m.store, err = openStore(ctx, c.DatabaseURL)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, m.store.Close)

	card, err := loadCard(c.RateCardFile)
	if err != nil {
		return err
	}
	providers, err := buildProviders(*c, card)
	if err != nil {
		return err
	}
	biller := billing.New(card, billing.Options{})

	var limiter gw.Limiter
	if c.RedisURL != "" {
		client, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		m.closers = append(m.closers, client.Close)
		limiter = redis.New(client, redis.Options{FailOpen: c.RedisFailOpen})
	} else {
		mem := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		m.closers = append(m.closers, mem.Close)
		limiter = mem
	}

	var g proxy.Guard
	if c.Guard {
		gd, err := guard.New(guard.Config{Threshold: c.GuardThreshold})
		if err != nil {
			return fmt.Errorf("guard: %w", err)
		}
		second, err := newSecondStage(*c, providers, biller, m.store, m.Logger)
		if err != nil {
			return fmt.Errorf("guard second stage: %w", err)
		}
		g = newPolicyGuard(gd, m.store, second, m.Logger)
	}

	var pb proxy.Biller = billerAdapter{biller}
	if m.noBilling {
		pb = nil
	}
	var observe func(*gw.Record)
	if c.MetricsAddr != "" {
		mx, err := metrics.New()
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		observe = mx.Observe
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", mx.Handler())
		m.mln, err = net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listen: %w", err)
		}
		m.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}
	gwy, err := proxy.New(proxy.Config{
		Observe:         observe,
		Store:           m.store,
		Auth:            &auth.Authenticator{Keys: m.store},
		Providers:       providers,
		Limiter:         limiter,
		DefaultLimit:    gw.Limit{RPM: c.RPM, TPM: c.TPM},
		Biller:          pb,
		Guard:           g,
		GuardFailClosed: c.GuardFailClosed,
		Logger:          m.Logger,
	})
	if err != nil {
		return err
	}
	models, err := billing.ModelsJSON(card)
	if err != nil {
		return err
	}
	dash, err := newDashboard(m.store, c.AdminToken, m.Logger)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	m.server = server.New(server.Config{
		Gateway:      gwy,
		MaxBodyBytes: c.MaxBodyBytes,
		Models: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(models)
		}),
		Dashboard: dash,
		Ready:     m.store.Ping,
		Logger:    m.Logger,
	})
	m.ln, err = net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	m.http = &http.Server{
		Handler:           m.server,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	m.stop = make(chan struct{})
	m.wg.Add(1)
	go m.sweep()
	return nil
}

// sweep releases holds whose requests died with a crashed process, once
// at start and then every minute.
func (m *Main) sweep() {
	defer m.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if n, err := m.store.ExpireHolds(ctx, time.Now()); err != nil {
			m.Logger.Warn("expire holds", "err", err)
		} else if n > 0 {
			m.Logger.Info("released expired holds", "count", n)
		}
		cancel()
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// MetricsAddr returns the address of the metrics listener, or "".
func (m *Main) MetricsAddr() string {
	if m.mln == nil {
		return ""
	}
	return m.mln.Addr().String()
}

// Serve serves until Shutdown; it returns nil after a clean shutdown.
func (m *Main) Serve() error {
	if m.metrics != nil {
		go func() {
			if err := m.metrics.Serve(m.mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.Logger.Error("metrics server", "err", err)
			}
		}()
	}
	err := m.http.Serve(m.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests, lets running requests and streams
// finish within ctx, then closes what is left.
func (m *Main) Shutdown(ctx context.Context) error {
	m.server.SetDraining(true)
	err := m.http.Shutdown(ctx)
	if m.metrics != nil {
		_ = m.metrics.Shutdown(ctx)
	}
	if err != nil {
		_ = m.http.Close()
	}
	return err
}

// Close releases everything Open built.
func (m *Main) Close() error {
	if m.stop != nil {
		close(m.stop)
		m.wg.Wait()
		m.stop = nil
	}
	if m.http != nil {
		_ = m.http.Close()
	} else if m.ln != nil {
		_ = m.ln.Close()
	}
	if m.metrics != nil {
		_ = m.metrics.Close()
	} else if m.mln != nil {
		_ = m.mln.Close()
	}
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		if err := m.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	m.closers = nil
	return errors.Join(errs...)
}

// announce prints how to reach the gateway.
func (m *Main) announce() {
	fmt.Fprintf(m.Stdout, "gateway listening on http://%s\n", m.Addr())
	if m.fake != nil {
		fmt.Fprintf(m.Stdout, "fake vendors serving: %s\n", strings.Join(fakedVendors(m.Config), ", "))
	}
}

func fakedVendors(c Config) []string {
	var out []string
	for _, v := range route.Vendors() {
		if strings.HasPrefix(c.Vendors[v].APIKey, "fake-") {
			out = append(out, v)
		}
	}
	return out
}
