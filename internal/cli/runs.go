package cli

import (
	"fmt"
	"time"

	"github.com/gwlabs/gateway/admin"
)

// runsCmd keeps keys' run defaults: the caps of a run (X-Gateway-Run)
// that a key's requests start without caps of their own.
type runsCmd struct {
	SetDefaults runsSetDefaultsCmd `cmd:"" name:"set-defaults" help:"Set a key's run defaults (all zero removes them)."`
	Defaults    runsDefaultsCmd    `cmd:"" help:"Show a key's run defaults."`
}

type runsSetDefaultsCmd struct {
	Key         string        `arg:"" help:"The key's id (key_...)."`
	BudgetUSD   string        `name:"budget-usd" help:"A run's budget in US dollars (0: none)."`
	MaxRequests int64         `name:"max-requests" help:"A run's most steps: model calls and MCP tool calls (0: none)."`
	Idle        time.Duration `help:"A run expires after this long without a step, e.g. 30m (0: never)."`
	JSON        bool          `name:"json" help:"Print JSON."`
}

func (c *runsSetDefaultsCmd) Run(rc *runCtx) error {
	if c.Idle < 0 || c.Idle%time.Second != 0 {
		return usagef("--idle must be whole seconds, 0 or more")
	}
	return withService(rc, func(svc admin.Service) error {
		d, err := svc.SetRunDefaults(rc.ctx, c.Key, admin.RunDefaultsRequest{BudgetUSD: c.BudgetUSD, MaxRequests: c.MaxRequests, IdleSeconds: int64(c.Idle / time.Second)})
		if err != nil {
			return err
		}
		return printRunDefaults(rc, d, c.JSON)
	})
}

type runsDefaultsCmd struct {
	Key  string `arg:"" help:"The key's id (key_...)."`
	JSON bool   `name:"json" help:"Print JSON."`
}

func (c *runsDefaultsCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		d, err := svc.RunDefaults(rc.ctx, c.Key)
		if err != nil {
			return err
		}
		return printRunDefaults(rc, d, c.JSON)
	})
}

func printRunDefaults(rc *runCtx, d *admin.RunDefaults, asJSON bool) error {
	if asJSON {
		return printJSON(rc.stdout, d)
	}
	budget, steps, idle := "none", "none", "never"
	if d.BudgetUSD != nil {
		budget = "$" + *d.BudgetUSD
	}
	if d.MaxRequests > 0 {
		steps = fmt.Sprint(d.MaxRequests)
	}
	if d.IdleSeconds > 0 {
		idle = (time.Duration(d.IdleSeconds) * time.Second).String()
	}
	fmt.Fprintf(rc.stdout, "key %s: run budget %s; max requests %s; idle expiry %s\n", d.KeyID, budget, steps, idle)
	return nil
}
