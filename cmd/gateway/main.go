// Command gateway runs the model gateway and administers its store.
//
//	gateway serve [--addr A] [--fake-vendors]
//	gateway keys create [--account NAME] [--balance-usd N] [--rpm N] [--tpm N] [--json]
//	gateway keys list [--json]
//	gateway keys revoke KEY_ID [--json]
//	gateway balance add --account NAME --usd N [--create] [--json]
//	gateway balance show --account NAME [--json]
//	gateway models [--json]
//	gateway incidents list [--limit N] [--json]
//	gateway incidents show ID [--json]
//	gateway guard eval [--json] [--threshold X] FILE.jsonl
//	gateway config check [--json]
//	gateway version [--json]
//
// Every command takes --db (env GATEWAY_DATABASE_URL) and --config FILE
// (env GATEWAY_CONFIG), has --help, and takes its flags in any position;
// the grammar is in cli.go. The store is created and migrated when it does
// not exist yet. Configuration comes from flags, then GATEWAY_* variables,
// then the configuration file, then the defaults; see the README.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) && !errors.Is(err, errHelpShown) {
			fmt.Fprintln(os.Stderr, "gateway:", err)
		}
		os.Exit(2)
	}
}

// newLogger writes level and up as text or JSON lines (the level and
// format were validated with the configuration).
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

type serveCmd struct {
	Addr        string `help:"Listen address (default 127.0.0.1:8080; env GATEWAY_ADDR)." placeholder:"HOST:PORT"`
	FakeVendors bool   `name:"fake-vendors" help:"Serve all nine vendors from in-process fakes (no vendor keys needed)."`
}

func (c *serveCmd) Run(rc *runCtx) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	if c.Addr != "" {
		cfg.Addr = c.Addr
	}
	cfg.FakeVendors = c.FakeVendors
	return serve(rc.ctx, cfg, rc.stdout, rc.stderr)
}

func serve(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	m := &Main{Config: cfg, Stdout: stdout, Logger: newLogger(stderr, cfg.LogLevel, cfg.LogFormat)}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	if cfg.FakeVendors {
		if err := demoKey(ctx, m.store, stdout); err != nil {
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
