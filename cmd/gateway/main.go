// Command gateway runs the model gateway and administers its store.
//
//	gateway serve [--addr A] [--db D] [--fake-vendors]
//	gateway keys create [--account NAME] [--balance-usd N] [--rpm N] [--tpm N] [--json]
//	gateway keys list [--json]
//	gateway keys revoke KEY_ID
//	gateway keys update KEY_ID|--account NAME [--guard block|monitor|off] [--guard-scope user|tools|all] [--guard-user-threshold X] [--guard-tool-threshold X] [--guard-assistant-threshold X]
//	gateway balance add --account NAME --usd N
//	gateway balance show --account NAME [--json]
//	gateway models
//	gateway incidents list [--json]
//	gateway incidents show ID
//	gateway incidents review ID --verdict false-positive|confirmed [--note T]
//	gateway incidents export --reviewed
//	gateway guard eval [--json] [--threshold X] FILE.jsonl
//	gateway version
//
// Every command takes --db (env GATEWAY_DATABASE_URL) and creates the
// store when it does not exist yet. Configuration is read from GATEWAY_*
// variables; see the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `usage: gateway <command> [flags]

commands:
  serve       run the gateway (--fake-vendors: all nine vendors faked in-process)
  keys        create, list, revoke and update API keys (update: guard policy)
  balance     top up and show an account's balance
  models      print the rate card
  incidents   list, show, review and export requests the guard flagged
  guard       evaluate the prompt-extraction guard on labelled data
  version     print the module version and the VCS revision it was built from
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gateway:", err)
		}
		os.Exit(2)
	}
}

// run executes one command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
		return nil
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, args[1:], stdout, stderr)
	case "keys":
		return keysCmd(ctx, cfg, args[1:], stdout)
	case "balance":
		return balanceCmd(ctx, cfg, args[1:], stdout)
	case "models":
		return modelsCmd(cfg, stdout)
	case "incidents":
		return incidentsCmd(ctx, cfg, args[1:], stdout)
	case "guard":
		if len(args) < 2 || args[1] != "eval" {
			return fmt.Errorf("usage: gateway guard eval [--json] [--threshold X] FILE.jsonl")
		}
		return guardEval(args[2:], stdout)
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func serve(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (env GATEWAY_ADDR)")
	dbFlag(fs, &cfg)
	fs.BoolVar(&cfg.FakeVendors, "fake-vendors", false, "serve all nine vendors from in-process fakes (no vendor keys needed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m := &Main{Config: cfg, Stdout: stdout, Logger: newLogger(stderr, cfg.LogLevel)}
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
