package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/alecthomas/kong"

	gw "github.com/gwlabs/gateway"
)

// cli is the command line's grammar (kong): every command and subcommand
// has --help, flags go anywhere on the line, and an unknown flag or an
// extra argument is an error.
type cli struct {
	Config string `help:"Configuration file (TOML; see the README). Environment variables and flags override it." env:"GATEWAY_CONFIG" placeholder:"FILE"`
	DB     string `name:"db" help:"SQLite file or postgres:// URL (default ./gateway.db; env GATEWAY_DATABASE_URL)." placeholder:"URL"`
	Server string `help:"Administer through this gateway's admin API (e.g. http://127.0.0.1:8080) instead of the store; needs the admin token." env:"GATEWAY_ADMIN_URL" placeholder:"URL"`
	// VersionFlag is --version, the same as the version command.
	VersionFlag kong.VersionFlag `name:"version" help:"Print the version and exit."`

	Serve     serveCmd     `cmd:"" help:"Run the gateway."`
	Accounts  accountsCmd  `cmd:"" help:"Create, list and show accounts."`
	Keys      keysCmd      `cmd:"" help:"Create, list, rotate and revoke API keys."`
	Balance   balanceCmd   `cmd:"" help:"Top up and show an account's balance."`
	Models    modelsCmd    `cmd:"" help:"Print the rate card (vendor prices)."`
	Ratecard  ratecardCmd  `cmd:"" help:"Check a rate-card file against the embedded card."`
	Optimize  optimizeCmd  `cmd:"" help:"Measure the optimization layer on a real vendor."`
	Incidents incidentsCmd `cmd:"" help:"List and show requests the guard blocked."`
	Guard     guardCmd     `cmd:"" help:"Evaluate the prompt-extraction guard."`
	ConfigCmd configCmd    `cmd:"" name:"config" help:"Check the configuration."`
	Version   versionCmd   `cmd:"" help:"Print the module version and the VCS revision."`
	Help      helpCmd      `cmd:"" hidden:"" help:"Show the help of a command."`
}

// helpCmd is "gateway help [COMMAND...]", the same as --help.
type helpCmd struct {
	Command []string `arg:"" optional:""`
}

func (h *helpCmd) Run(rc *runCtx) error {
	return run(rc.ctx, append(h.Command, "--help"), rc.stdout, rc.stderr)
}

// runCtx is what every command's Run receives.
type runCtx struct {
	ctx            context.Context
	stdout, stderr io.Writer
	configFile     string // --config
	server         string // --server: the admin API to use instead of the store
	// config loads the configuration: defaults, then the file, then the
	// environment, then the global flags.
	config func() (Config, error)
}

// exitCode carries kong's exit (after --help) out of the parser.
type exitCode int

// run executes one command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("gateway"),
		kong.Description("A model gateway: one HTTP service in front of nine model vendors."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitCode(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": versionString()},
	)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			code, ok := r.(exitCode)
			if !ok {
				panic(r)
			}
			if code != 0 {
				err = errHelpShown
			}
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil {
			fmt.Fprintln(stderr, "gateway:", err)
			_ = pe.Context.PrintUsage(true)
			return errUsage
		}
		return err
	}
	rc := &runCtx{ctx: ctx, stdout: stdout, stderr: stderr, configFile: c.Config, server: c.Server, config: func() (Config, error) {
		cfg, err := loadConfigFile(c.Config, os.Getenv)
		if err != nil {
			return cfg, err
		}
		if c.DB != "" {
			cfg.DatabaseURL = c.DB
		}
		return cfg, nil
	}}
	return kctx.Run(rc)
}

// errUsage and errHelpShown end the process with status 2 after the
// parser printed what was wrong.
var (
	errUsage     = errors.New("usage")
	errHelpShown = errors.New("help")
)

// usd is a non-negative dollar amount flag ("12.5").
type usd gw.Money

func (u *usd) UnmarshalText(b []byte) error {
	m, err := gw.ParseUSD(string(b))
	if err != nil || m < 0 {
		return fmt.Errorf("%q is not a non-negative amount of US dollars", string(b))
	}
	*u = usd(m)
	return nil
}

func (u usd) String() string { return gw.Money(u).USDString() }

type versionCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (v *versionCmd) Run(rc *runCtx) error {
	if v.JSON {
		return printJSON(rc.stdout, map[string]string{"version": versionString()})
	}
	fmt.Fprintln(rc.stdout, versionString())
	return nil
}

type guardCmd struct {
	Eval guardEvalCmd `cmd:"" help:"Score a labelled JSONL file and print precision, recall and false-positive rates."`
}

type guardEvalCmd struct {
	JSON      bool    `name:"json" help:"Print one JSON object."`
	Threshold float64 `placeholder:"X" help:"Decision threshold in (0, 1); 0: the model's own."`
	File      string  `arg:"" help:"Labelled rows, one JSON object a line." type:"existingfile"`
}

func (g *guardEvalCmd) Run(rc *runCtx) error {
	args := []string{"--threshold", strconv.FormatFloat(g.Threshold, 'g', -1, 64)}
	if g.JSON {
		args = append(args, "--json")
	}
	return guardEval(append(args, g.File), rc.stdout)
}
