package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize/eval"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
)

const optimizeUsage = "usage: gateway optimize eval --model PREFIX/MODEL [--n N] [--json]"

// optimizeCmd runs "gateway optimize eval": the committed workload sent
// to one model with and without the optimizer's directive (package
// optimize/eval), through the vendor's adapter with the configured key.
func optimizeEval(ctx context.Context, cfg app.Config, args []string, w io.Writer) error {
	if len(args) == 0 || args[0] != "eval" {
		return errors.New(optimizeUsage)
	}
	fs := flag.NewFlagSet("optimize eval", flag.ContinueOnError)
	model := fs.String("model", "", "the model to measure, PREFIX/MODEL (e.g. openai/gpt-6-sol)")
	n := fs.Int("n", 1, "runs of each prompt with and without the directive")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *model == "" || *n < 1 {
		return errors.New(optimizeUsage)
	}
	target, err := route.Parse(*model)
	if err != nil {
		return err
	}
	card, err := app.LoadCard(cfg.RateCardFile)
	if err != nil {
		return err
	}
	providers, err := app.BuildProviders(cfg, card)
	if err != nil {
		return err
	}
	p, ok := providers[target.Vendor]
	if !ok {
		return fmt.Errorf("unknown vendor %q", target.Vendor)
	}
	if a, ok := p.(proxy.Availability); ok {
		if err := a.Unavailable(); err != nil {
			return err
		}
	}
	rep, err := eval.Run(ctx, eval.Config{Vendor: target.Vendor, Model: target.Model, Provider: p, N: *n})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(w, rep)
	}
	fmt.Fprintf(w, "%s, directive v%d, %d run(s) per prompt with and without it\n", rep.Model, rep.DirectiveVersion, rep.N)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CATEGORY\tRUNS\tOUT WITHOUT\tOUT WITH\tCHANGE\tMS WITHOUT\tMS WITH\tFORMAT OK WITHOUT\tFORMAT OK WITH\tERRORS\t")
	for _, r := range append(rep.Categories, rep.Overall) {
		name := r.Category
		if name == "" {
			name = "overall"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%+.1f%%\t%.0f\t%.0f\t%d/%d\t%d/%d\t%d\t\n", name, r.Runs,
			r.Without.OutputTokens, r.With.OutputTokens, 100*r.OutputTokenChange,
			r.Without.MeanLatencyMS, r.With.MeanLatencyMS,
			r.Without.FormatOK, r.Without.FormatChecked, r.With.FormatOK, r.With.FormatChecked,
			r.Without.Errors+r.With.Errors)
	}
	return tw.Flush()
}

type optimizeCmd struct {
	Eval optimizeEvalCmd `cmd:"" help:"Send a fixed workload with and without the directive to a real vendor and compare output tokens, latency and format checks."`
}

type optimizeEvalCmd struct {
	Model string `required:"" help:"The model to measure, PREFIX/MODEL (e.g. openai/gpt-6-sol)."`
	N     int    `name:"n" default:"1" help:"Runs of each prompt with and without the directive."`
	JSON  bool   `name:"json" help:"Print the report as JSON."`
}

func (c *optimizeEvalCmd) Run(rc *runCtx) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	args := []string{"eval", "--model", c.Model, "--n", strconv.Itoa(c.N)}
	if c.JSON {
		args = append(args, "--json")
	}
	return optimizeEval(rc.ctx, cfg, args, rc.stdout)
}
