package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
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
	MCP       mcpCmd       `cmd:"" name:"mcp" help:"Allow keys and accounts MCP servers and tools."`
	Runs      runsCmd      `cmd:"" help:"Set keys' run defaults (budget, max requests, idle expiry)."`
	Reconcile reconcileCmd `cmd:"" help:"Check one day of the ledger against the vendors' reports."`
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
	return Run(rc.ctx, append(h.Command, "--help"), rc.stdout, rc.stderr)
}

// runCtx is what every command's Run receives.
type runCtx struct {
	ctx            context.Context
	stdout, stderr io.Writer
	configFile     string // --config
	server         string // --server: the admin API to use instead of the store
	// creates: the command creates (a key, an account), and may create
	// the store for it; the others refuse a store that is not there.
	creates bool
	// config loads the configuration: defaults, then the file, then the
	// environment, then the global flags.
	config func() (app.Config, error)
}

// exitCode carries kong's exit (after --help) out of the parser.
type exitCode int

// Run executes one command line (args without the program name),
// writing to stdout and stderr; Execute is Run on os.Args with the exit
// status its error calls for.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("gateway"),
		kong.Description("A model gateway: one HTTP service in front of nine model vendors."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitCode(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": app.VersionString()},
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
	kctx, err := parser.Parse(joinNegative(args))
	if err != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil {
			fmt.Fprintln(stderr, "gateway:", err)
			parser.Stdout = stderr // usage on an error goes with the error
			_ = pe.Context.PrintUsage(true)
			return usageError{err.Error()}
		}
		return err
	}
	rc := &runCtx{ctx: ctx, stdout: stdout, stderr: stderr, configFile: c.Config, server: c.Server, config: func() (app.Config, error) {
		cfg, err := app.ConfigFromFile(c.Config, os.Getenv)
		if err != nil {
			return cfg, err
		}
		if c.DB != "" {
			cfg.DatabaseURL = c.DB
		}
		return cfg, nil
	}}
	err = kctx.Run(rc)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "gateway:", ue.msg)
		parser.Stdout = stderr
		_ = kctx.PrintUsage(true)
	}
	return err
}

// errUsage and errHelpShown end the process with status 2 after the
// parser printed what was wrong.
var (
	errUsage     = errors.New("usage")
	errHelpShown = errors.New("help")
)

// usageError is a command line that cannot run as given: run prints it
// with the command's usage on stderr, and the process exits with status
// 2.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == errUsage }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// joinNegative writes "--flag -5" as "--flag=-5", so that a negative
// number reaches the flag's own check ("negative amounts are not
// allowed") instead of being taken for a short flag.
func joinNegative(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "--") && !strings.Contains(a, "=") && i+1 < len(args) && len(args[i+1]) > 1 &&
			args[i+1][0] == '-' && (args[i+1][1] >= '0' && args[i+1][1] <= '9' || args[i+1][1] == '.') {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// usd is a non-negative dollar amount flag ("12.5"), exact to the
// gateway's unit (1e-8 US dollars).
type usd gw.Money

func (u *usd) UnmarshalText(b []byte) error {
	m, err := parseUSDFlag(string(b))
	if err != nil {
		return err
	}
	*u = usd(m)
	return nil
}

func (u usd) String() string { return gw.Money(u).USDString() }

// parseUSDFlag reads a dollar amount and says what is wrong with a bad
// one: not a number, negative, or finer than 8 decimals.
func parseUSDFlag(s string) (gw.Money, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("negative amounts are not allowed (%s)", s)
	}
	if _, ok := new(big.Rat).SetString(s); !ok || strings.ContainsAny(s, "/eE") {
		return 0, fmt.Errorf("%q is not an amount of US dollars (write it like 12.50)", s)
	}
	if _, frac, ok := strings.Cut(s, "."); ok && len(frac) > usdDecimals {
		return 0, fmt.Errorf("%s has %d decimals; amounts have at most %d (the gateway counts in 1e-8 US dollars)", s, len(frac), usdDecimals)
	}
	m, err := gw.ParseUSD(s)
	if err != nil {
		return 0, fmt.Errorf("%s is too large an amount", s)
	}
	return m, nil
}

// usdDecimals is the precision of amounts: gw.Money is 1e-8 US dollars.
const usdDecimals = 8

// duration is a duration flag that also takes days ("30d") and weeks
// ("2w"), alone or before smaller units ("1d12h").
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func (d duration) String() string { return time.Duration(d).String() }

func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration: write a number and a unit, s, m, h, d (days) or w (weeks), e.g. 90m, 30d or 2w", s)
	in := strings.TrimSpace(s)
	var total time.Duration
	// Leading day and week terms; the rest is Go's syntax.
	for in != "" {
		i := 0
		for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
			i++
		}
		if i == 0 || i == len(in) || in[i] != 'd' && in[i] != 'w' {
			break
		}
		n, err := strconv.ParseFloat(in[:i], 64)
		if err != nil {
			return 0, bad
		}
		unit := 24 * time.Hour
		if in[i] == 'w' {
			unit *= 7
		}
		if n*float64(unit) > float64(math.MaxInt64/2) {
			return 0, fmt.Errorf("%q is too long", s)
		}
		total += time.Duration(n * float64(unit))
		if total > math.MaxInt64/2 {
			return 0, fmt.Errorf("%q is too long", s)
		}
		in = in[i+1:]
	}
	if in == "" {
		if s == "" {
			return 0, bad
		}
		return total, nil
	}
	d, err := time.ParseDuration(in)
	if err != nil {
		return 0, bad
	}
	if d > 0 && total > math.MaxInt64-d {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return total + d, nil
}

type versionCmd struct {
	JSON bool `name:"json" help:"Print JSON: version, revision, modified, commit_time, build_time, go_version."`
}

func (v *versionCmd) Run(rc *runCtx) error {
	if v.JSON {
		return printJSON(rc.stdout, app.CurrentBuild())
	}
	fmt.Fprintln(rc.stdout, app.VersionString())
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
