package main

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
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/guard"
)

// withStore opens the configured store for one command.
func withStore(rc *runCtx, f func(gw.Store) error) error {
	cfg, err := rc.config()
	if err != nil {
		return err
	}
	st, err := openStore(rc.ctx, cfg.DatabaseURL)
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

// createKey makes an account (if new), tops it up and issues a key with
// the default rate limits.
func createKey(ctx context.Context, st gw.Store, account string, topUp gw.Money) (secret string, k *gw.Key, err error) {
	return createKeyWithLimits(ctx, st, account, topUp, gw.Limit{})
}

// createKeyWithLimits is createKey with the key's own limits (zero fields:
// the configured defaults).
func createKeyWithLimits(ctx context.Context, st gw.Store, account string, topUp gw.Money, lim gw.Limit) (secret string, k *gw.Key, err error) {
	acct, err := st.EnsureAccount(ctx, account)
	if err != nil {
		return "", nil, err
	}
	if topUp > 0 {
		if err := st.TopUp(ctx, acct.ID, topUp, "top-up at key creation"); err != nil {
			return "", nil, err
		}
	}
	secret, id, hash, err := auth.NewKey()
	if err != nil {
		return "", nil, err
	}
	k = &gw.Key{ID: id, AccountID: acct.ID, AccountName: acct.Name, Hint: auth.Hint(secret), CreatedAt: time.Now(), RPM: lim.RPM, TPM: lim.TPM}
	if err := st.CreateKey(ctx, k, hash); err != nil {
		return "", nil, err
	}
	return secret, k, nil
}

// demoKey gives a newcomer on --fake-vendors a key to use: when the store
// has no key yet, it creates account "demo" with $10.
func demoKey(ctx context.Context, st gw.Store, w io.Writer) error {
	keys, err := st.Keys(ctx)
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		fmt.Fprintln(w, "use an existing key (gateway keys list), or create one: gateway keys create --account NAME --balance-usd 10")
		return nil
	}
	secret, _, err := createKey(ctx, st, "demo", 10*gw.USD)
	if err != nil {
		return fmt.Errorf("create demo key: %w", err)
	}
	fmt.Fprintf(w, "demo account created with $10.00; its API key (shown once):\n\n  export GATEWAY_KEY=%s\n\n", secret)
	return nil
}

type keysCmd struct {
	Create keysCreateCmd `cmd:"" help:"Issue a key (the secret is shown once)."`
	List   keysListCmd   `cmd:"" help:"List keys, newest first."`
	Revoke keysRevokeCmd `cmd:"" help:"Revoke a key at once."`
}

type keysCreateCmd struct {
	Account    string `default:"default" help:"Account name; created when new (and said so)."`
	BalanceUSD usd    `name:"balance-usd" default:"0" help:"Top the account up by this many US dollars."`
	RPM        int64  `name:"rpm" help:"This key's requests per minute (0: the configured default)."`
	TPM        int64  `name:"tpm" help:"This key's tokens per minute (0: the configured default)."`
	JSON       bool   `name:"json" help:"Print JSON."`
}

// keyJSON is a key in every command's JSON output; Secret only when
// created.
type keyJSON struct {
	ID             string     `json:"key_id"`
	Secret         string     `json:"key,omitempty"`
	Account        string     `json:"account"`
	AccountID      string     `json:"account_id"`
	AccountCreated bool       `json:"account_created,omitempty"`
	Hint           string     `json:"hint"`
	RPM            int64      `json:"rpm"`
	TPM            int64      `json:"tpm"`
	CreatedAt      time.Time  `json:"created_at"`
	RevokedAt      *time.Time `json:"revoked_at"`
}

func toKeyJSON(k *gw.Key) keyJSON {
	return keyJSON{ID: k.ID, Account: k.AccountName, AccountID: k.AccountID, Hint: k.Hint, RPM: k.RPM, TPM: k.TPM, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt}
}

func (c *keysCreateCmd) Run(rc *runCtx) error {
	if c.RPM < 0 || c.TPM < 0 {
		return errors.New("--rpm and --tpm must not be negative")
	}
	return withStore(rc, func(st gw.Store) error {
		_, err := st.AccountByName(rc.ctx, c.Account)
		created := errors.Is(err, gw.ErrNotFound)
		if err != nil && !created {
			return err
		}
		secret, k, err := createKeyWithLimits(rc.ctx, st, c.Account, gw.Money(c.BalanceUSD), gw.Limit{RPM: c.RPM, TPM: c.TPM})
		if err != nil {
			return err
		}
		if c.JSON {
			out := toKeyJSON(k)
			out.Secret, out.AccountCreated = secret, created
			return printJSON(rc.stdout, out)
		}
		if created {
			fmt.Fprintf(rc.stdout, "created account %s\n", k.AccountName)
		}
		fmt.Fprintf(rc.stdout, "key %s for account %s (shown once, keep it safe):\n%s\n", k.ID, k.AccountName, secret)
		return nil
	})
}

type keysListCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *keysListCmd) Run(rc *runCtx) error {
	return withStore(rc, func(st gw.Store) error {
		keys, err := st.Keys(rc.ctx)
		if err != nil {
			return err
		}
		if c.JSON {
			rows := make([]keyJSON, 0, len(keys))
			for i := range keys {
				rows = append(rows, toKeyJSON(&keys[i]))
			}
			return printJSON(rc.stdout, rows)
		}
		tw := tabwriter.NewWriter(rc.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY ID\tACCOUNT\tKEY\tRPM\tTPM\tCREATED\tSTATUS")
		for _, k := range keys {
			status := "active"
			if !k.Live(time.Now()) {
				status = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
			} else if k.RevokedAt != nil {
				status = "active until " + k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountName, k.Hint, limitText(k.RPM), limitText(k.TPM), k.CreatedAt.UTC().Format(time.RFC3339), status)
		}
		return tw.Flush()
	})
}

func limitText(n int64) string {
	if n == 0 {
		return "default"
	}
	return strconv.FormatInt(n, 10)
}

type keysRevokeCmd struct {
	KeyID string `arg:"" name:"key-id" help:"The key's id (key_...)."`
	JSON  bool   `name:"json" help:"Print JSON."`
}

func (c *keysRevokeCmd) Run(rc *runCtx) error {
	return withStore(rc, func(st gw.Store) error {
		if err := st.RevokeKey(rc.ctx, c.KeyID); err != nil {
			if errors.Is(err, gw.ErrNotFound) {
				return fmt.Errorf("no key %s", c.KeyID)
			}
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, map[string]any{"key_id": c.KeyID, "revoked": true})
		}
		fmt.Fprintf(rc.stdout, "revoked %s\n", c.KeyID)
		return nil
	})
}

type balanceCmd struct {
	Add  balanceAddCmd  `cmd:"" help:"Top an account up."`
	Show balanceShowCmd `cmd:"" help:"Show an account's balance."`
}

// balanceJSON is an account's money in every command's JSON output, in
// exact decimal US dollars.
type balanceJSON struct {
	Account   string `json:"account"`
	AccountID string `json:"account_id"`
	TopUps    string `json:"top_ups_usd"`
	Charged   string `json:"charged_usd"`
	Held      string `json:"held_usd"`
	Balance   string `json:"balance_usd"`
	Available string `json:"available_usd"`
}

func toBalanceJSON(a *gw.Account, b gw.Balance) balanceJSON {
	return balanceJSON{Account: a.Name, AccountID: a.ID, TopUps: b.TopUps.USDString(), Charged: b.Charged.USDString(),
		Held: b.Held.USDString(), Balance: b.Balance.USDString(), Available: b.Available.USDString()}
}

func printBalance(w io.Writer, a *gw.Account, b gw.Balance) {
	fmt.Fprintf(w, "account %s\nbalance   $%s\nheld      $%s\navailable $%s\ncharged   $%s\ntop-ups   $%s\n",
		a.Name, b.Balance.USDString(), b.Held.USDString(), b.Available.USDString(), b.Charged.USDString(), b.TopUps.USDString())
}

type balanceAddCmd struct {
	Account string `required:"" help:"Account name."`
	USD     usd    `name:"usd" required:"" help:"Amount in US dollars, more than 0."`
	Create  bool   `help:"Create the account when it does not exist (otherwise an unknown name is an error, to catch typos)."`
	JSON    bool   `name:"json" help:"Print JSON."`
}

func (c *balanceAddCmd) Run(rc *runCtx) error {
	if c.USD <= 0 {
		return errors.New("--usd must be more than 0")
	}
	return withStore(rc, func(st gw.Store) error {
		acct, err := findAccount(rc.ctx, st, c.Account, c.Create)
		if err != nil {
			return err
		}
		if err := st.TopUp(rc.ctx, acct.ID, gw.Money(c.USD), "top-up"); err != nil {
			return err
		}
		b, err := st.Balance(rc.ctx, acct.ID)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, toBalanceJSON(acct, b))
		}
		fmt.Fprintf(rc.stdout, "added $%s to %s\n", gw.Money(c.USD).USDString(), acct.Name)
		printBalance(rc.stdout, acct, b)
		return nil
	})
}

// findAccount returns the named account; an unknown name is an error
// unless create.
func findAccount(ctx context.Context, st gw.Store, name string, create bool) (*gw.Account, error) {
	if create {
		return st.EnsureAccount(ctx, name)
	}
	acct, err := st.AccountByName(ctx, name)
	if errors.Is(err, gw.ErrNotFound) {
		return nil, fmt.Errorf("no account %q (check the name, or add --create to make it)", name)
	}
	return acct, err
}

type balanceShowCmd struct {
	Account string `required:"" help:"Account name."`
	JSON    bool   `name:"json" help:"Print JSON."`
}

func (c *balanceShowCmd) Run(rc *runCtx) error {
	return withStore(rc, func(st gw.Store) error {
		acct, err := findAccount(rc.ctx, st, c.Account, false)
		if err != nil {
			return err
		}
		b, err := st.Balance(rc.ctx, acct.ID)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, toBalanceJSON(acct, b))
		}
		printBalance(rc.stdout, acct, b)
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
	card, err := loadCard(cfg.RateCardFile)
	if err != nil {
		return err
	}
	if c.JSON {
		return printJSON(rc.stdout, billing.Models(card))
	}
	return billing.WriteTable(rc.stdout, card)
}

type incidentsCmd struct {
	List incidentsListCmd `cmd:"" help:"List incidents, newest first."`
	Show incidentsShowCmd `cmd:"" help:"Show one incident with its excerpt."`
}

// incidentJSON is an incident in every command's JSON output.
type incidentJSON struct {
	ID        string    `json:"id"`
	RequestID string    `json:"request_id"`
	AccountID string    `json:"account_id"`
	KeyID     string    `json:"key_id"`
	Kind      string    `json:"kind"`
	Score     float64   `json:"score"`
	Reason    string    `json:"reason"`
	Excerpt   string    `json:"excerpt"`
	CreatedAt time.Time `json:"created_at"`
}

func toIncidentJSON(in *gw.Incident) incidentJSON {
	return incidentJSON{in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.Excerpt, in.CreatedAt}
}

type incidentsListCmd struct {
	Limit int  `default:"100" help:"How many, newest first."`
	JSON  bool `name:"json" help:"Print JSON."`
}

func (c *incidentsListCmd) Run(rc *runCtx) error {
	if c.Limit < 1 {
		return errors.New("--limit must be at least 1")
	}
	return withStore(rc, func(st gw.Store) error {
		list, err := st.Incidents(rc.ctx, c.Limit)
		if err != nil {
			return err
		}
		if c.JSON {
			rows := make([]incidentJSON, 0, len(list))
			for i := range list {
				rows = append(rows, toIncidentJSON(&list[i]))
			}
			return printJSON(rc.stdout, rows)
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
	return withStore(rc, func(st gw.Store) error {
		in, err := st.Incident(rc.ctx, c.ID)
		if err != nil {
			if errors.Is(err, gw.ErrNotFound) {
				return fmt.Errorf("no incident %s", c.ID)
			}
			return err
		}
		if c.JSON {
			return printJSON(rc.stdout, toIncidentJSON(in))
		}
		fmt.Fprintf(rc.stdout, "incident  %s\nrequest   %s\naccount   %s\nkey       %s\nkind      %s\nscore     %.4f\nreason    %s\ntime      %s\nexcerpt:\n%s\n",
			in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.CreatedAt.UTC().Format(time.RFC3339), indent(in.Excerpt))
		return nil
	})
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func guardEval(args []string, w io.Writer) error { return guard.EvalCommand(args, w) }
