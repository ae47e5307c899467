package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/internal/app"
)

// exportRow is one row of `gateway incidents export --reviewed`, in the
// `gateway guard eval` format.
type exportRow struct {
	Text   string `json:"text"`
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
	Role   string `json:"role,omitempty"`
	Note   string `json:"note,omitempty"`
}

// incidentsExport implements `gateway incidents export --reviewed`: the
// reviewed incidents as JSONL rows for `gateway guard eval` (and
// training): a confirmed incident is an attack of its kind, a false
// positive a benign row.
func incidentsExport(ctx context.Context, cfg app.Config, w io.Writer) error {
	return withStoreCfg(ctx, cfg, false, func(st gw.Store) error {
		list, err := st.ReviewedIncidents(ctx)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		for _, ri := range list {
			r := exportRow{Text: ri.Text, Label: "benign", Kind: "benign", Source: "gateway/incidents:" + ri.ID, Role: roleOf(ri.Reason), Note: ri.Review.Note}
			if ri.Review.Verdict == gw.ReviewConfirmed {
				switch ri.Kind {
				case "extraction", "jailbreak", "injection":
				default:
					continue // a guard failure, not a text
				}
				r.Label, r.Kind = "attack", ri.Kind
			}
			if strings.TrimSpace(r.Text) == "" {
				continue
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// roleOf reads the role from a verdict's reason ("injection in tool
// text ...").
func roleOf(reason string) string {
	for _, r := range []string{"tool", "assistant"} {
		if strings.Contains(reason, " in "+r+" text") {
			return r
		}
	}
	return ""
}

// guardFlags are the guard policy flags of the keys commands, for kong.
type guardFlags struct {
	Guard                   string  `name:"guard" enum:"block,monitor,off," default:"" help:"Guard mode: block (refuse flagged requests), monitor (record an incident, block nothing) or off."`
	GuardScope              string  `name:"guard-scope" enum:"user,tools,all," default:"" help:"Text the guard scores: user (user text only), tools (and tool results) or all (and assistant turns)."`
	GuardUserThreshold      float64 `name:"guard-user-threshold" placeholder:"X" help:"Blocking threshold for user text (0: the guard's)."`
	GuardToolThreshold      float64 `name:"guard-tool-threshold" placeholder:"X" help:"Blocking threshold for tool results and documents (0: the guard's)."`
	GuardAssistantThreshold float64 `name:"guard-assistant-threshold" placeholder:"X" help:"Blocking threshold for assistant turns (0: the guard's)."`
}

func (g *guardFlags) set() bool {
	return g.Guard != "" || g.GuardScope != "" || g.GuardUserThreshold != 0 || g.GuardToolThreshold != 0 || g.GuardAssistantThreshold != 0
}

// policy is the set flags as a policy for the admin service (nil when
// none is set).
func (g *guardFlags) policy() *admin.GuardPolicy {
	if !g.set() {
		return nil
	}
	return &admin.GuardPolicy{Mode: g.Guard, Scope: g.GuardScope, UserThreshold: g.GuardUserThreshold,
		ToolThreshold: g.GuardToolThreshold, AssistantThreshold: g.GuardAssistantThreshold}
}

type incidentsReviewCmd struct {
	ID      string `arg:"" help:"The incident's id (inc_...)."`
	Verdict string `required:"" enum:"false-positive,confirmed" help:"false-positive (the same text then passes for this account) or confirmed."`
	Note    string `help:"A note for the record."`
	JSON    bool   `name:"json" help:"Print JSON (the incident with its review)."`
}

func (c *incidentsReviewCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		in, err := svc.ReviewIncident(rc.ctx, c.ID, admin.ReviewRequest{Verdict: c.Verdict, Note: c.Note})
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, in)
		}
		fmt.Fprintf(rc.stdout, "incident %s reviewed: %s\n", in.ID, c.Verdict)
		if c.Verdict == gw.ReviewFalsePositive {
			fmt.Fprintln(rc.stdout, "the same text now passes for this account")
		}
		return nil
	})
}

type incidentsExportCmd struct {
	Reviewed bool `required:"" help:"Export the reviewed incidents, as gateway guard eval rows (JSONL)."`
}

func (c *incidentsExportCmd) Run(rc *runCtx) error {
	if rc.server != "" {
		return usagef("incidents export reads the store; run it without --server")
	}
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	return incidentsExport(rc.ctx, cfg, rc.stdout)
}
