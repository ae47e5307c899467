package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// policyFlags are the guard policy flags of `keys create` and `keys
// update`.
type policyFlags struct {
	mode, scope           *string
	user, tool, assistant *float64
}

func addPolicyFlags(fs *flag.FlagSet) *policyFlags {
	return &policyFlags{
		mode:      fs.String("guard", "", "guard mode: block (refuse flagged requests), monitor (record an incident, block nothing) or off"),
		scope:     fs.String("guard-scope", "", "text the guard scores: user (user text only), tools (and tool results) or all (and assistant turns)"),
		user:      fs.Float64("guard-user-threshold", 0, "blocking threshold for user text (0: the guard's)"),
		tool:      fs.Float64("guard-tool-threshold", 0, "blocking threshold for tool results and documents (0: the guard's)"),
		assistant: fs.Float64("guard-assistant-threshold", 0, "blocking threshold for assistant turns (0: the guard's)"),
	}
}

func (f *policyFlags) set() bool {
	return *f.mode != "" || *f.scope != "" || *f.user != 0 || *f.tool != 0 || *f.assistant != 0
}

func (f *policyFlags) policy() (gw.GuardPolicy, error) {
	p := gw.GuardPolicy{Mode: *f.mode, Scope: *f.scope, UserThreshold: *f.user, ToolThreshold: *f.tool, AssistantThreshold: *f.assistant}
	return p, validatePolicy(p)
}

// apply lays the flags over the stored policy of a key or account.
func (f *policyFlags) apply(ctx context.Context, st gw.Store, subject, id string) error {
	gs, ok := st.(gw.GuardStore)
	if !ok {
		return errNoGuardStore
	}
	p, err := f.policy()
	if err != nil {
		return err
	}
	var cur *gw.GuardPolicy
	if subject == "key" {
		cur, _, err = gs.GuardPolicies(ctx, id, "")
	} else {
		_, cur, err = gs.GuardPolicies(ctx, "", id)
	}
	if err != nil {
		return err
	}
	return gs.SetGuardPolicy(ctx, subject, id, mergePolicy(derefPolicy(cur), &p))
}

func derefPolicy(p *gw.GuardPolicy) gw.GuardPolicy {
	if p == nil {
		return gw.GuardPolicy{}
	}
	return *p
}

// parseArgs parses flags and positional arguments in any order.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// keysUpdate implements `gateway keys update KEY_ID | --account NAME`
// with the guard policy flags.
func keysUpdate(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("keys update", flag.ContinueOnError)
	account := fs.String("account", "", "update this account's policy (its keys' default) instead of one key's")
	pf := addPolicyFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && *account == "" || len(pos) > 0 && *account != "" || !pf.set() {
		return errors.New("usage: gateway keys update KEY_ID|--account NAME [--guard block|monitor|off] [--guard-scope user|tools|all] [--guard-user-threshold X] [--guard-tool-threshold X] [--guard-assistant-threshold X]")
	}
	return withStoreCfg(ctx, cfg, func(st gw.Store) error {
		if *account != "" {
			a, err := st.AccountByName(ctx, *account)
			if err != nil {
				if errors.Is(err, gw.ErrNotFound) {
					return fmt.Errorf("no account %s", *account)
				}
				return err
			}
			if err := pf.apply(ctx, st, "account", a.ID); err != nil {
				return err
			}
			fmt.Fprintf(w, "account %s: guard policy updated\n", a.Name)
			return nil
		}
		keyID := pos[0]
		var key *gw.Key
		keys, err := st.Keys(ctx)
		if err != nil {
			return err
		}
		for i := range keys {
			if keys[i].ID == keyID {
				key = &keys[i]
			}
		}
		if key == nil {
			return fmt.Errorf("no key %s", keyID)
		}
		if err := pf.apply(ctx, st, "key", keyID); err != nil {
			return err
		}
		eff, err := effectivePolicy(ctx, st, key.ID, key.AccountID)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "key %s: guard %s\n", keyID, describePolicy(eff))
		return nil
	})
}

// describePolicy is a policy in one line.
func describePolicy(p gw.GuardPolicy) string {
	thr := func(name string, x float64) string {
		if x == 0 {
			return ""
		}
		return fmt.Sprintf(", %s threshold %.2f", name, x)
	}
	return fmt.Sprintf("%s, scope %s%s%s%s", p.Mode, p.Scope, thr("user", p.UserThreshold), thr("tool", p.ToolThreshold), thr("assistant", p.AssistantThreshold))
}

// incidentsReview implements `gateway incidents review ID --verdict
// false-positive|confirmed [--note T]`.
func incidentsReview(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("incidents review", flag.ContinueOnError)
	verdict := fs.String("verdict", "", "false-positive (the text passes next time for this account) or confirmed")
	note := fs.String("note", "", "a note for the record")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *verdict != gw.ReviewFalsePositive && *verdict != gw.ReviewConfirmed {
		return errors.New("usage: gateway incidents review ID --verdict false-positive|confirmed [--note T]")
	}
	return withStoreCfg(ctx, cfg, func(st gw.Store) error {
		gs, ok := st.(gw.GuardStore)
		if !ok {
			return errNoGuardStore
		}
		if err := gs.ReviewIncident(ctx, gw.IncidentReview{IncidentID: pos[0], Verdict: *verdict, Note: *note}); err != nil {
			if errors.Is(err, gw.ErrNotFound) {
				return fmt.Errorf("no incident %s", pos[0])
			}
			return err
		}
		fmt.Fprintf(w, "incident %s reviewed: %s\n", pos[0], *verdict)
		if *verdict == gw.ReviewFalsePositive {
			fmt.Fprintln(w, "the same text now passes for this account")
		}
		return nil
	})
}

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
func incidentsExport(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("incidents export", flag.ContinueOnError)
	reviewed := fs.Bool("reviewed", false, "export the reviewed incidents (required)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if !*reviewed || len(pos) != 0 {
		return errors.New("usage: gateway incidents export --reviewed > FILE.jsonl")
	}
	return withStoreCfg(ctx, cfg, func(st gw.Store) error {
		gs, ok := st.(gw.GuardStore)
		if !ok {
			return errNoGuardStore
		}
		list, err := gs.ReviewedIncidents(ctx)
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

// args writes the set flags back as arguments for keysUpdate.
func (g *guardFlags) args() []string {
	var a []string
	str := func(name, v string) {
		if v != "" {
			a = append(a, "--"+name, v)
		}
	}
	num := func(name string, v float64) {
		if v != 0 {
			a = append(a, "--"+name, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	str("guard", g.Guard)
	str("guard-scope", g.GuardScope)
	num("guard-user-threshold", g.GuardUserThreshold)
	num("guard-tool-threshold", g.GuardToolThreshold)
	num("guard-assistant-threshold", g.GuardAssistantThreshold)
	return a
}

type incidentsReviewCmd struct {
	ID      string `arg:"" help:"The incident's id (inc_...)."`
	Verdict string `required:"" enum:"false-positive,confirmed" help:"false-positive (the same text then passes for this account) or confirmed."`
	Note    string `help:"A note for the record."`
}

func (c *incidentsReviewCmd) Run(rc *runCtx) error {
	if rc.server != "" {
		return errors.New("incidents review works on the store; run it without --server")
	}
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	args := []string{c.ID, "--verdict", c.Verdict}
	if c.Note != "" {
		args = append(args, "--note", c.Note)
	}
	return incidentsReview(rc.ctx, cfg, args, rc.stdout)
}

type incidentsExportCmd struct {
	Reviewed bool `required:"" help:"Export the reviewed incidents, as gateway guard eval rows (JSONL)."`
}

func (c *incidentsExportCmd) Run(rc *runCtx) error {
	if rc.server != "" {
		return errors.New("incidents export works on the store; run it without --server")
	}
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	return incidentsExport(rc.ctx, cfg, []string{"--reviewed"}, rc.stdout)
}
