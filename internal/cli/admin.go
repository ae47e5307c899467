package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/billing"
	guardeval "github.com/gwlabs/gateway/guard/eval"
	"github.com/gwlabs/gateway/internal/app"
)

// withStore opens the configured store for one command: a command that
// creates (rc.creates) may create the store too, the others need it
// there.
func withStore(rc *runCtx, f func(gw.Store) error) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	return withStoreCfg(rc.ctx, cfg, rc.creates, f)
}

// withStoreCfg opens cfg's store for f; unless create, a store that is
// not there is an error, not a new empty one.
func withStoreCfg(ctx context.Context, cfg app.Config, create bool, f func(gw.Store) error) error {
	if err := app.CheckStoreURL(cfg.DatabaseURL); err != nil {
		return err
	}
	if !create {
		if err := app.StoreExists(cfg.DatabaseURL); err != nil {
			return err
		}
	}
	st, err := app.OpenStore(ctx, cfg.DatabaseURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// withService runs f on the admin service: the admin API at --server when
// given (with the admin token of the configuration), the store otherwise.
func withService(rc *runCtx, f func(admin.Service) error) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	if rc.server != "" {
		if cfg.AdminToken == "" {
			return errors.New("--server needs the admin token (GATEWAY_ADMIN_TOKEN or admin_token in the configuration file)")
		}
		return f(&admin.Client{BaseURL: rc.server, Token: cfg.AdminToken})
	}
	return withStore(rc, func(st gw.Store) error {
		as, ok := st.(admin.Store)
		if !ok {
			return fmt.Errorf("the store %T lacks the admin methods", st)
		}
		local := &admin.Local{Store: as}
		local.MCPConfigServers, local.MCPAdminStdio = app.MCPAdmin(cfg.MCP)
		return f(local)
	})
}

type keysCmd struct {
	Create keysCreateCmd `cmd:"" help:"Issue a key (the secret is shown once)."`
	List   keysListCmd   `cmd:"" help:"List keys, newest first, with their use and spend."`
	Show   keysShowCmd   `cmd:"" help:"Show one key with its use, spend and guard policy."`
	Rotate keysRotateCmd `cmd:"" help:"Issue a new secret for a key; the old one keeps working for a grace period."`
	Update keysUpdateCmd `cmd:"" help:"Change a key's settings."`
	Revoke keysRevokeCmd `cmd:"" help:"Revoke a key at once."`
}

type keysCreateCmd struct {
	Account    string   `required:"" help:"Account name or id; created when new (and said so)."`
	Name       string   `help:"A label for the key."`
	BalanceUSD usd      `name:"balance-usd" default:"0" help:"Top the account up by this many US dollars first."`
	RPM        int64    `name:"rpm" help:"This key's requests per minute (0: the configured default)."`
	TPM        int64    `name:"tpm" help:"This key's tokens per minute (0: the configured default)."`
	ExpiresIn  duration `name:"expires-in" placeholder:"D" help:"End the key after this long (e.g. 30d, 2w, 12h; 0: never)."`
	Optimize   string   `enum:"on,off" default:"on" help:"The optimization layer for this key's requests: on or off."`
	Models     []string `sep:"," placeholder:"LIST" help:"The only models the key may call, comma-separated: prefixed ids (openai/gpt-6-sol) or patterns ending in * (openai/*); default every model."`
	DailyUSD   usd      `name:"daily-budget-usd" default:"0" placeholder:"X" help:"Cap the key's spend per UTC day at X US dollars (0: no cap)."`
	MonthlyUSD usd      `name:"monthly-budget-usd" default:"0" placeholder:"Y" help:"Cap the key's spend per UTC calendar month at Y US dollars (0: no cap)."`
	guardFlags
	JSON bool `name:"json" help:"Print JSON."`
}

// CreatedKeyJSON is keys create's JSON: the key, its secret under "key",
// and whether the account was created for it.
type CreatedKeyJSON struct {
	admin.CreatedKey
	AccountCreated bool `json:"account_created,omitempty"`
}

func (c *keysCreateCmd) Run(rc *runCtx) error {
	rc.creates = true
	if c.ExpiresIn < 0 {
		return usagef("--expires-in must not be negative")
	}
	if strings.TrimSpace(c.Account) == "" {
		return usagef("--account names the key's account")
	}
	return withService(rc, func(svc admin.Service) error {
		out, err := createKeyVia(rc.ctx, svc, c)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, out)
		}
		if out.AccountCreated {
			fmt.Fprintf(rc.stdout, "created account %s\n", out.Account)
		}
		fmt.Fprintf(rc.stdout, "key %s for account %s (shown once, keep it safe):\n%s\n", out.ID, out.Account, out.Secret)
		return nil
	})
}

func createKeyVia(ctx context.Context, svc admin.Service, c *keysCreateCmd) (*CreatedKeyJSON, error) {
	out := &CreatedKeyJSON{}
	acct, err := svc.Account(ctx, c.Account)
	if gw.ErrorCode(err) == gw.CodeNotFound {
		acct, err = svc.CreateAccount(ctx, c.Account)
		out.AccountCreated = true
	}
	if err != nil {
		return nil, err
	}
	if c.BalanceUSD > 0 {
		if _, err := svc.TopUp(ctx, acct.ID, admin.TopUpRequest{AmountUSD: gw.Money(c.BalanceUSD).USDString(), Note: "top-up at key creation"}); err != nil {
			return nil, err
		}
	}
	req := admin.KeyRequest{Account: acct.ID, Name: c.Name, RPM: c.RPM, TPM: c.TPM, Optimize: c.Optimize, Models: c.Models, Guard: c.guardFlags.policy()}
	if c.DailyUSD > 0 {
		req.DailyBudgetUSD = gw.Money(c.DailyUSD).USDString()
	}
	if c.MonthlyUSD > 0 {
		req.MonthlyBudgetUSD = gw.Money(c.MonthlyUSD).USDString()
	}
	if c.ExpiresIn > 0 {
		at := time.Now().Add(time.Duration(c.ExpiresIn))
		req.ExpiresAt = &at
	}
	k, err := svc.CreateKey(ctx, req)
	if err != nil {
		return nil, err
	}
	out.CreatedKey = *k
	return out, nil
}

type keysListCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *keysListCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		keys, err := svc.Keys(rc.ctx)
		if err != nil {
			return err
		}
		if c.JSON {
			return printList(rc.stdout, keys)
		}
		tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY ID\tNAME\tACCOUNT\tKEY\tRPM\tTPM\tOPTIMIZE\tSTATUS\tLAST USED\tREQUESTS\tSPEND")
		for _, k := range keys {
			status := k.Status
			if k.EndsAt != nil {
				status += " " + k.EndsAt.UTC().Format(time.RFC3339)
			}
			last := "never"
			if k.LastUsedAt != nil {
				last = k.LastUsedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", k.ID, dash(k.Name), k.Account, k.Hint,
				limitText(k.RPM), limitText(k.TPM), k.Optimize, status, last, k.Requests, dollars(k.SpendUSD))
		}
		return tw.Flush()
	})
}

type keysShowCmd struct {
	KeyID string `arg:"" name:"key-id" help:"The key's id (key_...)."`
	JSON  bool   `name:"json" help:"Print JSON."`
}

func (c *keysShowCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		k, err := svc.Key(rc.ctx, c.KeyID)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, k)
		}
		return printKey(rc.stdout, k)
	})
}

// printKey writes one key as text.
func printKey(w io.Writer, k *admin.Key) error {
	status := k.Status
	if k.EndsAt != nil {
		status += " (ends " + k.EndsAt.UTC().Format(time.RFC3339) + ")"
	}
	last := "never"
	if k.LastUsedAt != nil {
		last = k.LastUsedAt.UTC().Format(time.RFC3339)
	}
	models := "every model"
	if len(k.Models) > 0 {
		models = strings.Join(k.Models, ", ")
	}
	guard := "-"
	if k.Guard != nil {
		guard = describeGuard(k.Guard)
	}
	_, err := fmt.Fprintf(w, "key       %s\nname      %s\naccount   %s (%s)\nhint      %s\nstatus    %s\ncreated   %s\nlast used %s\nrequests  %d\nspend     %s\nrpm       %s\ntpm       %s\noptimize  %s\nmodels    %s\nguard     %s\n",
		k.ID, dash(k.Name), k.Account, k.AccountID, k.Hint, status, k.CreatedAt.UTC().Format(time.RFC3339), last, k.Requests, dollars(k.SpendUSD),
		limitText(k.RPM), limitText(k.TPM), k.Optimize, models, guard)
	if err == nil {
		err = printBudgets(w, k.Budgets)
	}
	return err
}

// printBudgets writes a key's or an account's budgets as text lines:
// "daily     $0.01 (spent $0.003, held $0.002, remaining $0.005; resets 2026-11-27T00:00:00Z)".
func printBudgets(w io.Writer, b *admin.Budgets) error {
	var daily, monthly *admin.BudgetStatus
	if b != nil {
		daily, monthly = b.Daily, b.Monthly
	}
	for _, c := range []struct {
		name string
		s    *admin.BudgetStatus
	}{{"daily", daily}, {"monthly", monthly}} {
		text := "no budget"
		if c.s != nil {
			text = fmt.Sprintf("%s (spent %s, held %s, remaining %s; resets %s)", dollars(c.s.BudgetUSD), dollars(c.s.SpentUSD),
				dollars(c.s.HeldUSD), dollars(c.s.RemainingUSD), c.s.ResetsAt.UTC().Format(time.RFC3339))
		}
		if _, err := fmt.Fprintf(w, "%-9s %s\n", c.name, text); err != nil {
			return err
		}
	}
	return nil
}

// describeGuard is a guard policy in one line.
func describeGuard(p *admin.GuardPolicy) string {
	thr := func(name string, x float64) string {
		if x == 0 {
			return ""
		}
		return fmt.Sprintf(", %s threshold %.2f", name, x)
	}
	mode, scope := p.Mode, p.Scope
	if mode == "" {
		mode = "default mode"
	}
	if scope == "" {
		scope = "default"
	}
	return fmt.Sprintf("%s, scope %s%s%s%s", mode, scope, thr("user", p.UserThreshold), thr("tool", p.ToolThreshold), thr("assistant", p.AssistantThreshold))
}

// dollars writes a decimal amount of US dollars with its sign before the
// dollar sign: $1.50000000, -$0.00000035.
func dollars(amount string) string {
	if rest, neg := strings.CutPrefix(amount, "-"); neg {
		return "-$" + rest
	}
	return "$" + amount
}

// printList writes a list as the admin API answers it: {"data": [...]}.
func printList[T any](w io.Writer, list []T) error {
	return printJSON(w, struct {
		Data []T `json:"data"`
	}{nonNil(list)})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nonNil makes an empty list print as [] in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func limitText(n int64) string {
	if n == 0 {
		return "default"
	}
	return strconv.FormatInt(n, 10)
}

type keysRotateCmd struct {
	KeyID string   `arg:"" name:"key-id" help:"The key's id (key_...)."`
	Grace duration `default:"1h" placeholder:"D" help:"How long the old secret keeps working (e.g. 1h, 2d)."`
	JSON  bool     `name:"json" help:"Print JSON."`
}

func (c *keysRotateCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		k, err := svc.RotateKey(rc.ctx, c.KeyID, time.Duration(c.Grace))
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, k)
		}
		fmt.Fprintf(rc.stdout, "key %s replaces %s, which works until %s; new secret (shown once):\n%s\n",
			k.ID, c.KeyID, k.Replaces.EndsAt.UTC().Format(time.RFC3339), k.Secret)
		return nil
	})
}

type keysUpdateCmd struct {
	KeyID      string   `arg:"" optional:"" name:"key-id" help:"The key's id (key_...)."`
	Account    string   `help:"Update this account's guard policy (its keys' default) or budgets instead of one key's."`
	Optimize   string   `enum:"on,off," default:"" help:"The optimization layer for this key's requests: on or off."`
	Models     []string `sep:"," placeholder:"LIST" help:"Replace the key's model allow list (comma-separated prefixed ids or patterns ending in *)."`
	AnyModel   bool     `name:"any-model" help:"Clear the key's model allow list: every model."`
	DailyUSD   string   `name:"daily-budget-usd" placeholder:"X" help:"Cap the key's (or with --account the account's) spend per UTC day at X US dollars; 0 clears the cap."`
	MonthlyUSD string   `name:"monthly-budget-usd" placeholder:"Y" help:"Cap the key's (or with --account the account's) spend per UTC calendar month at Y US dollars; 0 clears the cap."`
	RPM        string   `name:"rpm" placeholder:"N" help:"The key's requests per minute (0: the configured default)."`
	TPM        string   `name:"tpm" placeholder:"N" help:"The key's tokens per minute (0: the configured default)."`
	guardFlags
	JSON bool `name:"json" help:"Print JSON."`
}

// limitFlag reads an update's --rpm or --tpm: nil when not given.
func limitFlag(name, s string) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return nil, usagef("--%s: %q is not a whole number of 0 or more (0: the configured default)", name, s)
	}
	return &n, nil
}

// budgetFlag reads an update's budget flag: nil when not given.
func budgetFlag(name, s string) (*string, error) {
	if s == "" {
		return nil, nil
	}
	m, err := parseUSDFlag(s)
	if err != nil {
		return nil, usagef("--%s: %v", name, err)
	}
	v := m.USDString()
	return &v, nil
}

func (c *keysUpdateCmd) Run(rc *runCtx) error {
	rpm, err := limitFlag("rpm", c.RPM)
	if err != nil {
		return err
	}
	tpm, err := limitFlag("tpm", c.TPM)
	if err != nil {
		return err
	}
	keySettings := c.Optimize != "" || len(c.Models) > 0 || c.AnyModel || rpm != nil || tpm != nil
	daily, err := budgetFlag("daily-budget-usd", c.DailyUSD)
	if err != nil {
		return err
	}
	monthly, err := budgetFlag("monthly-budget-usd", c.MonthlyUSD)
	if err != nil {
		return err
	}
	budgets := daily != nil || monthly != nil
	switch {
	case !keySettings && !c.guardFlags.set() && !budgets:
		return usagef("nothing to change: give --optimize on|off, --models LIST, --any-model, --rpm, --tpm, --daily-budget-usd, --monthly-budget-usd or guard policy flags")
	case len(c.Models) > 0 && c.AnyModel:
		return usagef("--models and --any-model contradict each other")
	case (c.KeyID == "") == (c.Account == ""):
		return usagef("name one key (KEY_ID) or --account NAME")
	case c.Account != "" && keySettings:
		return usagef("--optimize, --models, --any-model, --rpm and --tpm are a key's settings; name the key")
	}
	return withService(rc, func(svc admin.Service) error {
		if c.Account != "" {
			a, err := svc.UpdateAccount(rc.ctx, c.Account, admin.AccountUpdate{Guard: c.guardFlags.policy(), DailyBudgetUSD: daily, MonthlyBudgetUSD: monthly})
			if err != nil {
				return err
			}
			if c.JSON {
				return printJSON(rc.stdout, a)
			}
			if a.Guard != nil {
				fmt.Fprintf(rc.stdout, "account %s: guard policy %s\n", a.Name, describeGuard(a.Guard))
			}
			if budgets {
				fmt.Fprintf(rc.stdout, "account %s budgets:\n", a.Name)
				return printBudgets(rc.stdout, a.Budgets)
			}
			return nil
		}
		u := admin.KeyUpdate{Optimize: c.Optimize, Guard: c.guardFlags.policy(), DailyBudgetUSD: daily, MonthlyBudgetUSD: monthly, RPM: rpm, TPM: tpm}
		switch {
		case c.AnyModel:
			u.Models = &[]string{}
		case len(c.Models) > 0:
			u.Models = &c.Models
		}
		k, err := svc.UpdateKey(rc.ctx, c.KeyID, u)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, k)
		}
		models := "every model"
		if len(k.Models) > 0 {
			models = strings.Join(k.Models, ", ")
		}
		guard := "-"
		if k.Guard != nil {
			guard = describeGuard(k.Guard)
		}
		fmt.Fprintf(rc.stdout, "key %s: optimize %s; models: %s; guard %s; rpm %s, tpm %s\n", k.ID, k.Optimize, models, guard, limitText(k.RPM), limitText(k.TPM))
		if budgets {
			return printBudgets(rc.stdout, k.Budgets)
		}
		return nil
	})
}

type keysRevokeCmd struct {
	KeyID string `arg:"" name:"key-id" help:"The key's id (key_...)."`
	JSON  bool   `name:"json" help:"Print JSON."`
}

func (c *keysRevokeCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		k, err := svc.RevokeKey(rc.ctx, c.KeyID)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, k)
		}
		fmt.Fprintf(rc.stdout, "revoked %s\n", k.ID)
		return nil
	})
}

type accountsCmd struct {
	Create accountsCreateCmd `cmd:"" help:"Create an account."`
	List   accountsListCmd   `cmd:"" help:"List accounts with their balances."`
	Show   accountsShowCmd   `cmd:"" help:"Show an account and its balance."`
}

type accountsCreateCmd struct {
	Name string `arg:"" help:"The account's name."`
	JSON bool   `name:"json" help:"Print JSON."`
}

func (c *accountsCreateCmd) Run(rc *runCtx) error {
	rc.creates = true
	return withService(rc, func(svc admin.Service) error {
		a, err := svc.CreateAccount(rc.ctx, c.Name)
		if err != nil {
			return err
		}
		return printAccount(rc.stdout, a, c.JSON)
	})
}

type accountsListCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *accountsListCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		list, err := svc.Accounts(rc.ctx)
		if err != nil {
			return err
		}
		if c.JSON {
			return printList(rc.stdout, list)
		}
		tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACCOUNT ID\tNAME\tBALANCE\tHELD\tAVAILABLE\tCHARGED\tCREATED")
		for _, a := range list {
			b := a.Balance
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, dollars(b.Balance), dollars(b.Held), dollars(b.Available), dollars(b.Charged), a.CreatedAt.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

type accountsShowCmd struct {
	Account string `arg:"" help:"The account's name or id."`
	JSON    bool   `name:"json" help:"Print JSON."`
}

func (c *accountsShowCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		a, err := svc.Account(rc.ctx, c.Account)
		if err != nil {
			return err
		}
		return printAccount(rc.stdout, a, c.JSON)
	})
}

func printAccount(w io.Writer, a *admin.Account, asJSON bool) error {
	if asJSON {
		return printJSON(w, a)
	}
	b := a.Balance
	fmt.Fprintf(w, "account %s (%s)\nbalance   %s\nheld      %s\navailable %s\ncharged   %s\ntop-ups   %s\n",
		a.Name, a.ID, dollars(b.Balance), dollars(b.Held), dollars(b.Available), dollars(b.Charged), dollars(b.TopUps))
	return printBudgets(w, a.Budgets)
}

type balanceCmd struct {
	Add     balanceAddCmd     `cmd:"" help:"Top an account up."`
	Show    balanceShowCmd    `cmd:"" help:"Show an account's balance."`
	History balanceHistoryCmd `cmd:"" help:"An account's top-ups and charges, newest first."`
}

type balanceAddCmd struct {
	Account   string `required:"" help:"Account name or id."`
	USD       usd    `name:"usd" required:"" help:"Amount in US dollars, more than 0."`
	Reference string `help:"An invoice or payment id: a top-up with a reference already used on the account is not counted again."`
	Note      string `help:"A note for the ledger."`
	Create    bool   `help:"Create the account when it does not exist (otherwise an unknown name is an error, to catch typos)."`
	JSON      bool   `name:"json" help:"Print JSON."`
}

func (c *balanceAddCmd) Run(rc *runCtx) error {
	rc.creates = c.Create // --create makes the account, and the store with it
	if c.USD <= 0 {
		return usagef("--usd must be more than 0")
	}
	return withService(rc, func(svc admin.Service) error {
		if _, err := svc.Account(rc.ctx, c.Account); gw.ErrorCode(err) == gw.CodeNotFound {
			if !c.Create {
				return gw.Errorf(gw.CodeNotFound, "no account %q (check the name, or add --create to make it)", c.Account)
			}
			if _, err := svc.CreateAccount(rc.ctx, c.Account); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		note := c.Note
		if note == "" {
			note = "top-up"
		}
		res, err := svc.TopUp(rc.ctx, c.Account, admin.TopUpRequest{AmountUSD: gw.Money(c.USD).USDString(), Reference: c.Reference, Note: note})
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, res)
		}
		if res.Duplicate {
			fmt.Fprintf(rc.stdout, "reference %s was already credited (entry %d); nothing added\n", c.Reference, res.Entry.ID)
		} else {
			fmt.Fprintf(rc.stdout, "added %s to %s\n", dollars(res.Entry.AmountUSD), res.Account.Name)
		}
		return printAccount(rc.stdout, &res.Account, false)
	})
}

type balanceShowCmd struct {
	Account string `required:"" help:"Account name or id."`
	JSON    bool   `name:"json" help:"Print JSON."`
}

func (c *balanceShowCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		a, err := svc.Account(rc.ctx, c.Account)
		if err != nil {
			return err
		}
		return printAccount(rc.stdout, a, c.JSON)
	})
}

type balanceHistoryCmd struct {
	Account string `required:"" help:"Account name or id."`
	Before  int64  `help:"Entries older than this entry id (the previous page's next_before)."`
	Limit   int    `default:"50" help:"Entries per page (at most 1000)."`
	JSON    bool   `name:"json" help:"Print JSON."`
}

func (c *balanceHistoryCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		page, err := svc.Ledger(rc.ctx, c.Account, c.Before, c.Limit)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, page)
		}
		tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ENTRY\tTIME\tAMOUNT\tREQUEST\tREFERENCE\tNOTE")
		for _, e := range page.Data {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.CreatedAt.UTC().Format(time.RFC3339), dollars(e.AmountUSD), dash(e.RequestID), dash(e.Reference), dash(e.Note))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if page.NextBefore != 0 {
			fmt.Fprintf(rc.stderr, "older entries: --before %d\n", page.NextBefore)
		}
		return nil
	})
}

type modelsCmd struct {
	JSON bool `name:"json" help:"Print JSON (the rate card's entries with vendor prices)."`
}

func (c *modelsCmd) Run(rc *runCtx) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	card, err := app.LoadCard(cfg.RateCardFile)
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(rc.stdout, billing.Models(card))
	}
	return billing.WriteTable(rc.stdout, card)
}

type incidentsCmd struct {
	List   incidentsListCmd   `cmd:"" help:"List incidents, newest first."`
	Show   incidentsShowCmd   `cmd:"" help:"Show one incident with its excerpt."`
	Review incidentsReviewCmd `cmd:"" help:"Review an incident: a false positive's text passes next time for its account."`
	Export incidentsExportCmd `cmd:"" help:"Write the reviewed incidents as gateway guard eval rows."`
}

type incidentsListCmd struct {
	Limit int  `default:"100" help:"How many, newest first (at most 1000)."`
	JSON  bool `name:"json" help:"Print JSON."`
}

func (c *incidentsListCmd) Run(rc *runCtx) error {
	if c.Limit < 1 {
		return usagef("--limit must be at least 1")
	}
	return withService(rc, func(svc admin.Service) error {
		list, err := svc.Incidents(rc.ctx, c.Limit)
		if err != nil {
			return err
		}
		if c.JSON {
			return printList(rc.stdout, list)
		}
		tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INCIDENT\tREQUEST\tKIND\tSCORE\tTIME\tREASON")
		for _, in := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%s\t%s\n", in.ID, in.RequestID, in.Kind, in.Score, in.CreatedAt.UTC().Format(time.RFC3339), in.Reason)
		}
		return tw.Flush()
	})
}

type incidentsShowCmd struct {
	ID   string `arg:"" help:"The incident's id (inc_...)."`
	JSON bool   `name:"json" help:"Print JSON."`
}

func (c *incidentsShowCmd) Run(rc *runCtx) error {
	return withService(rc, func(svc admin.Service) error {
		in, err := svc.Incident(rc.ctx, c.ID)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, in)
		}
		return printIncident(rc.stdout, in)
	})
}

func printIncident(w io.Writer, in *admin.Incident) error {
	review := "not reviewed"
	if r := in.Review; r != nil {
		review = r.Verdict + " at " + r.ReviewedAt.UTC().Format(time.RFC3339)
		if r.Note != "" {
			review += ": " + r.Note
		}
	}
	_, err := fmt.Fprintf(w, "incident  %s\nrequest   %s\naccount   %s\nkey       %s\nkind      %s\nscore     %.4f\nreason    %s\ntime      %s\nreview    %s\nexcerpt:\n%s\n",
		in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.CreatedAt.UTC().Format(time.RFC3339), review, indent(in.Excerpt))
	return err
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func guardEval(args []string, w io.Writer) error { return guardeval.Command(args, w) }
