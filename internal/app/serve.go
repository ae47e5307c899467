package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/guard"
	"github.com/gwlabs/gateway/guard/leak"
	"github.com/gwlabs/gateway/guard/policy"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/metrics"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/optimize/calibrate"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/ratelimit"
	"github.com/gwlabs/gateway/redis"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/server"
	"github.com/gwlabs/gateway/tracing"
)

// Main is the running gateway: Open builds it from Config and starts
// listening, Serve serves until Shutdown, Close releases everything. Tests
// run it on 127.0.0.1:0 with a temporary SQLite file.
type Main struct {
	Config Config
	Stdout io.Writer
	Logger *slog.Logger

	// NoBilling turns holds and charges off (requests are still logged):
	// the baseline of the billing benchmark, no setting.
	NoBilling bool

	store   gw.Store
	gateway *proxy.Gateway
	keys    *auth.Cache
	mcp     *mcp.Endpoint
	// tracer exports spans; nil: not tracing.
	tracer *tracing.Tracer
	state  *convstate.Keeper
	// optimizer's kept counts are swept with the store.
	optimizer *optimize.Optimizer
	fake      *fakevendor.Server
	closers   []func() error
	server    *server.Server
	http      *http.Server
	ln        net.Listener
	metrics   *http.Server // nil unless GATEWAY_METRICS_ADDR is set
	mln       net.Listener
	stop      chan struct{}
	wg        sync.WaitGroup
	// base is every request's parent context; hardStop cancels it with
	// server.ErrShutdown when the shutdown grace runs out.
	base     context.Context
	hardStop context.CancelCauseFunc
	// degraded says what runs in a degraded mode ("" when nothing), for
	// /readyz.
	degraded func() string
}

// readHeaderTimeout bounds the reading of a request's headers (the body
// has server.Config.BodyReadTimeout).
const readHeaderTimeout = 10 * time.Second

// adjustDelay is how long the Redis limiter keeps a key's token
// corrections for its next check before it sends them on their own: the
// most other instances see them late.
const adjustDelay = 50 * time.Millisecond

// finishGrace bounds how long requests cut at the end of the shutdown
// grace get to record their outcome before the store closes (a settle
// waits at most 15 s).
const finishGrace = 20 * time.Second

// Addr returns the address the gateway listens on.
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Store returns the gateway's store.
func (m *Main) Store() gw.Store { return m.store }

// Fake returns the in-process fake vendors, when --fake-vendors is on.
func (m *Main) Fake() *fakevendor.Server { return m.fake }

// Handler returns the gateway's HTTP handler (what Serve serves), for
// driving it in process without the network.
func (m *Main) Handler() http.Handler { return m.server }

// SetDraining turns /readyz's draining answer on or off, as Shutdown
// does at its start.
func (m *Main) SetDraining(on bool) {
	m.server.SetDraining(on)
	if m.mcp != nil {
		m.mcp.SetDraining(on)
	}
}

// Provider returns the adapter the gateway calls a vendor through.
func (m *Main) Provider(vendor string) (gw.Provider, bool) { return m.gateway.Provider(vendor) }

// State returns the keeper of client state (threads and reasoning).
func (m *Main) State() *convstate.Keeper { return m.state }

// Tracer returns the span exporter; nil when not tracing.
func (m *Main) Tracer() *tracing.Tracer { return m.tracer }

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
	if err := m.startFakeVendors(); err != nil {
		return err
	}
	if m.store, err = OpenStore(ctx, c.DatabaseURL, !c.SQLiteShared); err != nil {
		return err
	}
	m.closers = append(m.closers, m.store.Close)
	if err := m.releaseEarlierIncarnations(ctx); err != nil {
		return err
	}
	card, err := LoadCard(c.RateCardFile)
	if err != nil {
		return err
	}
	c.HTTP.Logger = m.Logger
	providers, err := BuildProviders(*c, card)
	if err != nil {
		return err
	}
	orPrices := openRouterPrices(*c, m.store, m.Logger)
	m.closers = append(m.closers, orPrices.Stop)
	biller := billing.New(card, billing.Options{OpenRouter: orPrices})
	limiter, err := m.openLimiter()
	if err != nil {
		return err
	}
	g, err := m.openGuard(providers, biller)
	if err != nil {
		return err
	}
	var pb proxy.Biller = biller
	if m.NoBilling {
		pb = nil
	}
	if err := m.openPprof(); err != nil {
		return err
	}
	observe, err := m.openMetrics(providers)
	if err != nil {
		return err
	}
	// Keys are looked up through a short cache; keys revoked or rotated
	// here are forgotten at once, and changes made elsewhere (another
	// instance, the CLI on the store) within the watch interval.
	keys := auth.NewCache(m.store, c.KeyCacheTTL)
	m.keys = keys
	tracer, err := m.openTracer(ctx)
	if err != nil {
		return err
	}
	gwy, err := proxy.New(proxy.Config{
		Tracer:              tracer,
		Observe:             observe,
		Store:               m.store,
		Auth:                &auth.Authenticator{Keys: keys},
		Providers:           providers,
		Limiter:             limiter,
		DefaultLimit:        gw.Limit{RPM: c.RPM, TPM: c.TPM},
		Biller:              pb,
		Guard:               g,
		GuardFailClosed:     c.GuardFailClosed,
		Answer:              proxy.AnswerConfig{Off: !c.GuardAnswer, WaiveCharge: c.GuardAnswerWaive, Cache: leak.NewCache(512), Canary: c.GuardCanary},
		GuardTimeout:        c.GuardTimeout,
		GuardCooldown:       c.GuardCooldown,
		AllowUnpriced:       allowSet(c.AllowUnpriced),
		CountTokensRPM:      c.CountTokensRPM,
		CountBytesPerMinute: c.CountBytesPerMinute,
		MaxAttempts:         c.MaxAttempts,
		AttemptTimeout:      c.AttemptTimeout,
		RefusedPerMinute:    c.RefusedPerMinute,
		BlocksPerMinute:     c.BlocksPerMinute,
		HoldTTL:             c.HoldTTL,
		IncidentsPerMinute:  c.IncidentTextsPerMinute,
		Optimizer:           m.newOptimizer(*c, providers, pb),
		Logger:              m.Logger,
	})
	if err != nil {
		return err
	}
	m.gateway = gwy
	if m.mcp, err = m.openMCP(gwy); err != nil {
		return err
	}
	adminAPI, adminSvc, err := m.openAdmin(keys, g)
	if err != nil {
		return err
	}
	dash, err := newDashboard(m.store, c, limiter, adminSvc, m.Logger, m.withMCPHealth(vendorHealth(providers, time.Now)))
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if m.state, err = newKeeper(m.store, *c, m.Logger); err != nil {
		return err
	}
	m.server = server.New(server.Config{
		State:             m.state,
		Gateway:           gwy,
		TrustedProxies:    c.TrustedProxies,
		MaxBodyBytes:      c.MaxBodyBytes,
		MaxCountBodyBytes: c.MaxCountBodyBytes,
		MaxInflightBytes:  c.MaxInflightBytes,
		// One account's and one key's share of it.
		MaxInflightBytesPerAccount: c.MaxInflightBytesPerAccount,
		MaxInflightBytesPerKey:     c.MaxInflightBytesPerKey,
		BodyReadTimeout:            c.BodyReadTimeout,
		MaxResponseBytes:           c.MaxResponseBytes,
		MaxEventBytes:              int(min(c.MaxEventBytes, 1<<30)),
		// A caller gets as long to take a stream event as the vendor
		// gets to send one.
		StreamWriteTimeout: c.HTTP.IdleTimeout,
		WriteTimeout:       c.WriteTimeout,
		Catalog: newCatalog(card, providers,
			c.Routes, orPrices),
		Dashboard:   dash,
		Admin:       adminAPI,
		Ready:       m.ready,
		Degraded:    m.degraded,
		Routes:      c.Routes,
		Version:     openAPIVersion(),
		Health:      m.withMCPHealth(vendorHealth(providers, time.Now)),
		ReadyDetail: adminBearer(c.AdminToken),
		MCP:         m.mcpHandler(),
		Logger:      m.Logger,
	})
	return m.listen(g)
}

// startFakeVendors starts the built-in fake vendors when configured, and
// points every vendor without a key of its own at them.
func (m *Main) startFakeVendors() (err error) {
	c := &m.Config
	if !c.FakeVendors {
		return nil
	}
	m.fake, err = fakevendor.Start()
	if err != nil {
		return fmt.Errorf("start fake vendors: %w", err)
	}
	m.closers = append(m.closers, m.fake.Close)
	// Model prompt caching and the optimizer's shorter answers, so
	// both can be seen without vendor keys.
	m.fake.EnablePrefixCache(0)
	m.fake.EnableReplyModel(optimize.Text)
	for _, v := range route.Vendors() {
		vc := c.Vendors[v]
		if vc.APIKey == "" {
			// Real keys win: a vendor with a configured key is
			// the real one, the others are faked.
			fc := VendorConfig{BaseURL: m.fake.BaseURL(v), APIKey: m.fake.APIKey(v)}
			if slices.Contains(AdminKeyVendors, v) {
				// The fake's reports are read with its admin key,
				// so reconciliation runs without vendor keys too.
				fc.AdminKey = fakevendor.AdminKey(v)
			}
			c.Vendors[v] = fc
		}
	}
	return nil
}

// openLimiter returns the rate limiter: Redis when configured (with its
// degraded report for /readyz), else one in memory.
func (m *Main) openLimiter() (gw.Limiter, error) {
	c := &m.Config
	if c.RedisURL == "" {
		mem := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		m.closers = append(m.closers, mem.Close)
		return mem, nil
	}
	client, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	m.closers = append(m.closers, client.Close)
	opts := redis.Options{FailOpen: c.RedisFailOpen, Instances: c.Instances, Logger: m.Logger, Timeout: c.RedisTimeout}
	if c.RedisFailLocal {
		mem := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		m.closers = append(m.closers, mem.Close)
		opts.Fallback = mem
	}
	// A request's token correction rides on the key's next check
	// (or is sent within 50 ms): one Redis round trip a request.
	opts.AdjustDelay = adjustDelay
	rl := redis.New(client, opts)
	m.closers = append(m.closers, rl.Close) // before the client's
	mode := "refusing requests (503)"
	switch {
	case c.RedisFailLocal:
		mode = "limiting in memory, each limit divided by the instance count"
	case c.RedisFailOpen:
		mode = "admitting requests without limits"
	}
	// The detail is public (/readyz): no address or error text.
	m.degraded = func() string {
		if down, _ := rl.Degraded(); down {
			return "rate limits: redis unreachable; " + mode
		}
		return ""
	}
	return rl, nil
}

// openGuard returns the guard under the callers' policies with its
// second stage, nil when the guard is off.
func (m *Main) openGuard(providers map[string]gw.Provider, biller *billing.Biller) (proxy.Guard, error) {
	c := &m.Config
	if !c.Guard {
		return nil, nil
	}
	gd, err := guard.New(guard.Config{Threshold: c.GuardThreshold})
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	second, err := newSecondStage(*c, providers, biller, m.store, m.Logger)
	if err != nil {
		return nil, fmt.Errorf("guard second stage: %w", err)
	}
	return policy.New(gd, m.store, second, m.Logger), nil
}

// openPprof starts the profiling listener when configured.
func (m *Main) openPprof() error {
	if m.Config.PprofAddr == "" {
		return nil
	}
	_, stop, err := startPprof(m.Config.PprofAddr, m.Logger)
	if err != nil {
		return err
	}
	m.closers = append(m.closers, stop)
	return nil
}

// openMetrics listens for Prometheus scrapes when configured and returns
// the records' observer (nil when off).
func (m *Main) openMetrics(providers map[string]gw.Provider) (func(*gw.Record), error) {
	c := &m.Config
	if c.MetricsAddr == "" {
		return nil, nil
	}
	mx, err := metrics.New()
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := mx.WatchVendors(vendorHealth(providers, time.Now)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", mx.Handler())
	m.mln, err = net.Listen("tcp", c.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	m.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return mx.Observe, nil
}

// openTracer exports spans over OTLP when the environment asks for it
// (nil: no tracing).
func (m *Main) openTracer(ctx context.Context) (proxy.Tracer, error) {
	getenv := m.Config.OTelEnv
	if getenv == nil {
		getenv = os.Getenv
	}
	tr, err := tracing.FromEnv(ctx, getenv, CurrentBuild().Version)
	if err != nil || tr == nil {
		return nil, err
	}
	m.tracer = tr
	m.closers = append(m.closers, func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return tr.Shutdown(sctx)
	})
	m.Logger.Info("tracing: exporting spans over OTLP/HTTP")
	return tr, nil
}

// openAdmin returns the admin API and the service behind it when an
// admin token is configured (else nil, nil).
func (m *Main) openAdmin(keys *auth.Cache, g proxy.Guard) (http.Handler, admin.Service, error) {
	c := &m.Config
	if c.AdminToken == "" {
		return nil, nil, nil
	}
	as, ok := m.store.(admin.Store)
	if !ok {
		return nil, nil, fmt.Errorf("admin API: the store %T lacks the admin methods", m.store)
	}
	local := &admin.Local{Store: as, OnRevoke: keys.Forget}
	local.MCPConfigServers, local.MCPAdminStdio = MCPAdmin(c.MCP)
	if pg, ok := g.(*policy.Guard); ok {
		// A policy changed here applies to the next request here.
		local.OnPolicy = func(string) { pg.ForgetAll() }
	}
	h, err := admin.NewHandler(local, c.AdminToken, m.Logger)
	if err != nil {
		return nil, nil, err
	}
	return h, local, nil
}

// listen opens the API listener and starts the store sweep and the key
// watch.
func (m *Main) listen(g proxy.Guard) (err error) {
	m.ln, err = net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	m.base, m.hardStop = context.WithCancelCause(context.Background())
	m.http = &http.Server{
		Handler:           m.server,
		BaseContext:       func(net.Listener) context.Context { return m.base },
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	m.stop = make(chan struct{})
	m.wg.Add(3)
	go m.sweep()
	go m.watchKeys(g)
	go m.renewLeases()
	return nil
}

// watchKeys empties the key cache (and the guard's policy cache) when
// the store's key generation moves, until Close.
func (m *Main) watchKeys(g proxy.Guard) {
	defer m.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-m.stop
		cancel()
	}()
	onChange := m.mcpRecheck
	if pg, ok := g.(*policy.Guard); ok {
		onChange = func() { pg.ForgetAll(); m.mcpRecheck() }
	}
	m.keys.Watch(ctx, 0, onChange)
	cancel()
}

// ready is /readyz's check: the store answers, and requests are not all
// refused because Redis is down in the fail-closed mode.
func (m *Main) ready(ctx context.Context) error {
	if err := m.store.Ping(ctx); err != nil {
		return err
	}
	if m.degraded != nil && !m.Config.RedisFailOpen && !m.Config.RedisFailLocal {
		if d := m.degraded(); d != "" {
			return errors.New(d)
		}
	}
	return nil
}

// sweep releases holds whose requests died with a crashed process and
// deletes expired client state (threads, reasoning), once at start and
// then every minute.
func (m *Main) sweep() {
	defer m.wg.Done()
	// At least twice a hold's lease: a killed process's holds are
	// deleted soon after they lapse.
	t := time.NewTicker(sweepEvery(m.Config.HoldTTL))
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if n, err := m.store.ExpireHolds(ctx, time.Now()); err != nil {
			m.Logger.Warn("expire holds", "err", err)
		} else if n > 0 {
			m.Logger.Info("released expired holds", "count", n)
		}
		if n, err := m.state.Sweep(ctx); err != nil {
			m.Logger.Warn("sweep client state", "err", err)
		} else if n > 0 {
			m.Logger.Info("deleted expired client state", "count", n)
		}
		m.sweepRefused(ctx)
		m.sweepCounts(ctx)
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

// Shutdown stops accepting requests and lets running requests and
// streams finish within ctx. When ctx ends first, the remaining requests
// are cancelled (server.ErrShutdown): each records its outcome (a stream
// is billed for what was delivered and ends with an error event and its
// terminator; an unanswered request's hold is released) within
// finishGrace, and only then may Close close the store. It returns ctx's
// error when the grace ran out.
func (m *Main) Shutdown(ctx context.Context) error {
	m.SetDraining(true)
	err := m.http.Shutdown(ctx)
	// The minute's aggregate records of refused requests.
	if m.gateway != nil {
		defer m.gateway.FlushRefusals(context.WithoutCancel(ctx))
	}
	if m.metrics != nil {
		_ = m.metrics.Shutdown(ctx)
	}
	if err == nil {
		return nil
	}
	m.hardStop(server.ErrShutdown)
	fctx, cancel := context.WithTimeout(context.Background(), finishGrace)
	defer cancel()
	// The cut requests write their last bytes; their connections then
	// go idle and close.
	if m.http.Shutdown(fctx) != nil {
		_ = m.http.Close()
	}
	if werr := m.server.Wait(fctx); werr != nil {
		m.Logger.Error("requests still running after the shutdown grace and the finish grace", "err", werr)
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
	if m.hardStop != nil {
		m.hardStop(server.ErrShutdown)
	}
	if m.http != nil {
		_ = m.http.Close()
		if m.server != nil {
			wctx, cancel := context.WithTimeout(context.Background(), finishGrace)
			_ = m.server.Wait(wctx)
			cancel()
		}
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
	out := newConsole(m.Stdout, m.Config.LogFormat)
	url := "http://" + m.Addr()
	out.say(fmt.Sprintf("gateway listening on %s\n", url), "gateway listening", "url", url)
	if m.fake != nil {
		vendors := fakedVendors(m.Config)
		out.say(fmt.Sprintf("fake vendors serving: %s\n", strings.Join(vendors, ", ")), "fake vendors serving", "vendors", vendors)
	}
	var text strings.Builder
	var fields []any
	for _, s := range m.settings() {
		fmt.Fprintf(&text, "  %-10s %s\n", s[0]+":", s[1])
		fields = append(fields, strings.ReplaceAll(s[0], " ", "_"), s[1])
	}
	out.say("settings in force:\n"+text.String(), "settings in force", fields...)
}

// settings names what runs, for the start-up banner: the store, Redis,
// the admin API, metrics, tracing, the optimizer and the guard. Secrets
// in URLs are hidden.
func (m *Main) settings() [][2]string {
	c := &m.Config
	store := "SQLite " + strings.TrimPrefix(c.DatabaseURL, "sqlite:")
	switch {
	case strings.HasPrefix(c.DatabaseURL, "postgres://"), strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		store = "PostgreSQL " + redactURL(c.DatabaseURL)
	case c.SQLiteShared:
		store += " (shared: holds on the file, for several processes)"
	default:
		store += " (this process alone; holds in memory)"
	}
	redis := "off (rate limits in this process's memory)"
	if c.RedisURL != "" {
		mode := "refuse requests (503) while it is down"
		switch {
		case c.RedisFailLocal:
			mode = "limit in memory while it is down"
		case c.RedisFailOpen:
			mode = "admit without limits while it is down"
		}
		redis = redactURL(c.RedisURL) + "; " + mode
	}
	adminAPI := "off (set GATEWAY_ADMIN_TOKEN to turn on /admin/v1/ and the dashboard's admin pages)"
	if c.AdminToken != "" {
		adminAPI = "on, /admin/v1/ (admin token set)"
	}
	metrics := "off (GATEWAY_METRICS_ADDR)"
	if m.mln != nil {
		metrics = "http://" + m.mln.Addr().String() + "/metrics"
	}
	tracing := "off (OTEL_EXPORTER_OTLP_ENDPOINT)"
	if m.tracer != nil {
		getenv := c.OTelEnv
		if getenv == nil {
			getenv = os.Getenv
		}
		to := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		if to == "" {
			to = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		tracing = "OTLP/HTTP to " + redactURL(to)
	}
	optimizer := "off (GATEWAY_OPTIMIZE)"
	if c.Optimize {
		optimizer = "on (GATEWAY_OPTIMIZE=off, or keys update --optimize off for one key)"
	}
	guard := "off (GATEWAY_GUARD)"
	if c.Guard {
		guard = "on"
	}
	return [][2]string{{"store", store}, {"redis", redis}, {"admin API", adminAPI}, {"metrics", metrics},
		{"tracing", tracing}, {"optimizer", optimizer}, {"guard", guard}}
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

// newOptimizer builds the optimization layer: on unless GATEWAY_OPTIMIZE
// is off, counting the directive with the vendors' own counts (their
// count endpoints, else two minimal requests per model and day, recorded
// at the operator's cost), kept in the store so a restart does not count
// again the same day.
func newOptimizer(c Config, providers map[string]gw.Provider, store gw.Store, biller proxy.Biller, logger *slog.Logger) *optimize.Optimizer {
	kept, _ := store.(optimize.CountStore)
	cfg := optimize.Config{Off: !c.Optimize, Counters: calibrate.Counters(providers, store, biller, logger), Logger: logger, Store: kept}
	if cm, ok := biller.(interface {
		CanonicalModel(vendor, model string) (string, bool)
	}); ok {
		// Counts are kept under the rate card's id: no spelling of a
		// model starts a count of its own, and a model off the card is
		// never counted.
		cfg.Canonical = cm.CanonicalModel
	}
	return optimize.New(cfg)
}

// allowSet is a list as a set.
func allowSet(units []string) map[string]bool {
	m := map[string]bool{}
	for _, u := range units {
		m[u] = true
	}
	return m
}

// adminBearer reports whether a request carries the admin token
// (Authorization: Bearer), for /readyz's detail; nobody without a token
// configured.
func adminBearer(token string) func(r *http.Request) bool {
	if token == "" {
		return nil
	}
	want := sha256.Sum256([]byte(token))
	return func(r *http.Request) bool {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(tok))
		return ok && subtle.ConstantTimeCompare(got[:], want[:]) == 1
	}
}
