// Package app is the gateway's configuration and wiring: Config (from
// the defaults, a TOML file and GATEWAY_* variables), Main (the running
// gateway: Open, Serve, Shutdown, Close) and RunServer, the serve
// command. The command line is package cli; the end-to-end suites (e2e)
// drive the gateway through this package's exported API.
package app

import (
	"context"
	"io"
	"log/slog"
)

// Stamp sets the release version and the build time the gateway reports
// (the version command, /openapi.json, the banner), each when not empty,
// and returns what puts the previous ones back.
func Stamp(release, built string) (restore func()) {
	oldRelease, oldBuilt := version, buildTime
	if release != "" {
		version = release
	}
	if built != "" {
		buildTime = built
	}
	return func() { version, buildTime = oldRelease, oldBuilt }
}

// NewLogger is the gateway's logger: it writes level and up as text or
// JSON lines (the level and format were validated with the
// configuration). In JSON, durations are seconds (a float), as log
// pipelines expect.
func NewLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		opts.ReplaceAttr = secondsAttr
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// secondsAttr writes a duration as seconds.
func secondsAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key, a.Value.Duration().Seconds())
	}
	return a
}

// RunServer opens the gateway cfg describes and serves until ctx is done,
// then shuts it down within cfg.ShutdownGrace: the serve command, with the
// banner on stdout and the logs on stderr.
func RunServer(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	m := &Main{Config: cfg, Stdout: stdout, Logger: NewLogger(stderr, cfg.LogLevel, cfg.LogFormat)}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	if cfg.FakeVendors {
		if err := demoKey(ctx, m.store, newConsole(stdout, cfg.LogFormat)); err != nil {
			return err
		}
	}
	m.announce()
	errc := make(chan error, 1)
	go func() { errc <- m.Serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	m.Logger.Info("shutting down", "grace", cfg.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := m.Shutdown(sctx); err != nil {
		m.Logger.Warn("shutdown grace ran out; remaining connections closed", "err", err)
	}
	return <-errc
}
