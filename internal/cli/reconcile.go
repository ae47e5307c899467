package cli

import (
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/reconcile"
)

// reconcileCmd runs reconciliation by hand: the ledger of one UTC day
// against the vendors' reports, read with the admin credentials of the
// configuration (GATEWAY_<VENDOR>_ADMIN_KEY). Its lines are stored like
// the job's.
type reconcileCmd struct {
	Day    string `help:"The UTC day, YYYY-MM-DD (default yesterday)." placeholder:"YYYY-MM-DD"`
	Vendor string `help:"Only this vendor (default every vendor)."`
	JSON   bool   `name:"json" help:"Print JSON."`
}

// reconcileResult is the JSON output.
type reconcileResult struct {
	Day    string            `json:"day"`
	Final  bool              `json:"final"`
	Alerts int               `json:"alerts"`
	Lines  []admin.ReconLine `json:"lines"`
	Errors []string          `json:"errors,omitempty"`
}

func (c *reconcileCmd) Run(rc *runCtx) error {
	if rc.server != "" {
		return usagef("reconcile runs on the store with the configuration's admin credentials, not through --server")
	}
	now := time.Now()
	day := reconcile.Day(now).Add(-24 * time.Hour)
	if c.Day != "" {
		d, err := time.Parse(time.DateOnly, c.Day)
		if err != nil {
			return usagef("--day must be a day, YYYY-MM-DD, not %q", c.Day)
		}
		day = d
	}
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	return withStore(rc, func(st gw.Store) error {
		j, err := app.ReconcileJob(cfg, st, "", slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		// A day whose final run is due is reconciled as final.
		final := !now.Before(day.Add(reconcile.DefaultFinalAfter))
		lines, runErr := j.Reconcile(rc.ctx, day, c.Vendor, final)
		out := reconcileResult{Day: day.Format(time.DateOnly), Final: final, Lines: []admin.ReconLine{}}
		for _, l := range lines {
			out.Lines = append(out.Lines, admin.ReconLineOf(l))
			if l.Alert != "" {
				out.Alerts++
			}
		}
		if runErr != nil {
			for _, e := range unwrapAll(runErr) {
				out.Errors = append(out.Errors, e.Error())
			}
		}
		if c.JSON {
			if err := printJSON(rc.stdout, out); err != nil {
				return err
			}
		} else {
			printReconcile(rc, out)
		}
		return runErr
	})
}

// unwrapAll lists the errors joined in err.
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func printReconcile(rc *runCtx, r reconcileResult) {
	kind := "provisional"
	if r.Final {
		kind = "final"
	}
	fmt.Fprintf(rc.stdout, "reconciliation of %s (%s): %d lines, %d alerts\n", r.Day, kind, len(r.Lines), r.Alerts)
	tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VENDOR\tLEVEL\tMODEL\tCLASS\tLEDGER\tVENDOR'S\tDRIFT\tSTATUS\tALERT\tNOTE")
	for _, l := range r.Lines {
		led, rep := "$"+l.LedgerUSD, "$"+l.ReportedUSD
		if l.Unit == "tokens" {
			led, rep = fmt.Sprint(*l.LedgerTokens), fmt.Sprint(*l.ReportedTokens)
		}
		if l.Status == gw.ReconUnreconcilable {
			rep = "-"
		}
		alert := l.Alert
		if l.Alert == gw.AlertPriceStale {
			alert += fmt.Sprintf(" (ours $%s/Mtok, implied $%s/Mtok)", l.OurPriceUSD, l.ImpliedPriceUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Vendor, l.Level, dash(l.Model), dash(l.Class), led, rep, l.Drift, l.Status, dash(alert), l.Note)
	}
	tw.Flush()
	for _, e := range r.Errors {
		fmt.Fprintln(rc.stderr, "error:", e)
	}
}
