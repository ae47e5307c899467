// Package cli is the gateway's command line: it runs the model gateway
// and administers its store; cmd/gateway only calls Execute, and the
// configuration and wiring it runs are package app.
//
//	gateway serve [--addr A] [--fake-vendors]
//	gateway accounts create NAME | list | show NAME [--json]
//	gateway keys create --account NAME [--name N] [--balance-usd N] [--rpm N] [--tpm N] [--expires-in D] [--optimize on|off] [--models LIST] [--daily-budget-usd X] [--monthly-budget-usd Y] [GUARD POLICY] [--json]
//	gateway keys list | show KEY_ID | rotate KEY_ID [--grace D] | revoke KEY_ID [--json]
//	gateway keys update KEY_ID|--account NAME [--optimize on|off] [--models LIST | --any-model] [--daily-budget-usd X] [--monthly-budget-usd Y] [GUARD POLICY] [--json]
//	gateway balance add --account NAME --usd N [--reference R] [--note T] [--create] [--json]
//	gateway balance show | history --account NAME [--json]
//	gateway models [--json]
//	gateway ratecard check FILE [--json]
//	gateway incidents list [--limit N] | show ID | review ID --verdict V [--note T] [--json]
//	gateway incidents export --reviewed
//	gateway guard eval [--json] [--threshold X] FILE.jsonl
//	gateway optimize eval --model PREFIX/MODEL [--n N] [--json]
//	gateway config check [--json]
//	gateway version [--json]
//
// Every command takes --db (env GATEWAY_DATABASE_URL), --config FILE
// (env GATEWAY_CONFIG) and --server URL (env GATEWAY_ADMIN_URL: the admin
// API instead of the store), has --help, and takes its flags in any
// position; the grammar is in cli.go. With --json a command prints one
// JSON document on stdout (lists as {"data": [...]}, the admin API's
// shapes) and nothing else; messages and usage go to stderr. The exit
// status says what went wrong: 1 a failure of the store or server, 2 a
// usage error, 3 not found, 4 refused (a conflict, the admin token, the
// balance). The store is created and migrated when it does
// not exist yet. Configuration comes from flags, then GATEWAY_* variables,
// then the configuration file, then the defaults; see docs/OPERATIONS.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// Exit statuses by kind of failure, for scripts.
const (
	ExitFailure  = 1 // the store, the server or the gateway failed
	ExitUsage    = 2 // the command line or its input is wrong
	ExitNotFound = 3 // no such account, key or incident
	ExitRefused  = 4 // refused: a conflict, the admin token, the balance, a limit
)

// Execute runs the gateway command line (os.Args) until it is done or
// the process is interrupted, and returns the exit status. release and
// built are the version and build time stamped into the binary by
// scripts/build ("" when none was).
func Execute(release, built string) int {
	app.Stamp(release, built)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Command(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// Command runs one command line (args without the program name) as the
// process does: Run, then its error on stderr ("gateway: ...", unless
// usage was already shown) and the exit status it calls for.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := Run(ctx, args, stdout, stderr); err != nil {
		if !errors.Is(err, errUsage) && !errors.Is(err, errHelpShown) {
			fmt.Fprintln(stderr, "gateway:", errorText(err))
		}
		return exitStatus(err)
	}
	return 0
}

// errorText is an error as the operator reads it: a service error's
// message without its code (the exit status carries the kind).
func errorText(err error) string {
	var e *gw.Error
	if errors.As(err, &e) && e.Err == nil {
		if s, ok := strings.CutSuffix(err.Error(), e.Error()); ok {
			return s + e.Message
		}
	}
	return err.Error()
}

// exitStatus is the process's exit status for a command's error.
func exitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, errHelpShown):
		return ExitUsage
	}
	var e *gw.Error
	if !errors.As(err, &e) {
		return ExitFailure
	}
	switch e.Code {
	case gw.CodeInvalidRequest, gw.CodeRequestTooLarge, gw.CodeMethodNotAllowed:
		return ExitUsage
	case gw.CodeNotFound:
		return ExitNotFound
	case gw.CodeConflict, gw.CodeAuthentication, gw.CodeInsufficientBalance, gw.CodeRequestBlocked, gw.CodeRateLimited:
		return ExitRefused
	}
	return ExitFailure
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
	return app.RunServer(rc.ctx, cfg, rc.stdout, rc.stderr)
}
