package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/guard"
)

// withStore opens the configured store for one command.
func withStore(ctx context.Context, cfg Config, f func(gw.Store) error) error {
	st, err := openStore(ctx, cfg.DatabaseURL)
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

func keysCmd(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: gateway keys create|list|revoke|update")
	}
	if args[0] == "update" {
		return keysUpdate(ctx, cfg, args[1:], w)
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	dbFlag(fs, &cfg)
	asJSON := fs.Bool("json", false, "print JSON")
	switch args[0] {
	case "create":
		account := fs.String("account", "default", "account name (created if new)")
		balance := fs.String("balance-usd", "0", "top up the account by this many USD")
		rpm := fs.Int64("rpm", 0, "this key's requests per minute (0: the configured default)")
		tpm := fs.Int64("tpm", 0, "this key's tokens per minute (0: the configured default)")
		pf := addPolicyFlags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if _, err := pf.policy(); err != nil {
			return err
		}
		if *rpm < 0 || *tpm < 0 {
			return errors.New("--rpm and --tpm must not be negative")
		}
		amount, err := gw.ParseUSD(*balance)
		if err != nil || amount < 0 {
			return fmt.Errorf("--balance-usd: %q is not a non-negative USD amount", *balance)
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			secret, k, err := createKeyWithLimits(ctx, st, *account, amount, gw.Limit{RPM: *rpm, TPM: *tpm})
			if err != nil {
				return err
			}
			if pf.set() {
				if err := pf.apply(ctx, st, "key", k.ID); err != nil {
					return fmt.Errorf("key %s created, but its guard policy was not set: %w", k.ID, err)
				}
			}
			if *asJSON {
				return printJSON(w, map[string]string{"key": secret, "key_id": k.ID, "account": k.AccountName, "account_id": k.AccountID})
			}
			fmt.Fprintf(w, "key %s for account %s (shown once, keep it safe):\n%s\n", k.ID, k.AccountName, secret)
			return nil
		})
	case "list":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			keys, err := st.Keys(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				type row struct {
					KeyID     string     `json:"key_id"`
					Account   string     `json:"account"`
					Hint      string     `json:"hint"`
					CreatedAt time.Time  `json:"created_at"`
					RevokedAt *time.Time `json:"revoked_at"`
				}
				rows := make([]row, 0, len(keys))
				for _, k := range keys {
					rows = append(rows, row{k.ID, k.AccountName, k.Hint, k.CreatedAt, k.RevokedAt})
				}
				return printJSON(w, rows)
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY ID\tACCOUNT\tKEY\tCREATED\tSTATUS")
			for _, k := range keys {
				status := "active"
				if k.RevokedAt != nil {
					status = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountName, k.Hint, k.CreatedAt.UTC().Format(time.RFC3339), status)
			}
			return tw.Flush()
		})
	case "revoke":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("usage: gateway keys revoke KEY_ID")
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			if err := st.RevokeKey(ctx, fs.Arg(0)); err != nil {
				if errors.Is(err, gw.ErrNotFound) {
					return fmt.Errorf("no key %s", fs.Arg(0))
				}
				return err
			}
			fmt.Fprintf(w, "revoked %s\n", fs.Arg(0))
			return nil
		})
	}
	return fmt.Errorf("unknown keys command %q", args[0])
}

func balanceCmd(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: gateway balance add|show --account NAME")
	}
	fs := flag.NewFlagSet("balance "+args[0], flag.ContinueOnError)
	dbFlag(fs, &cfg)
	account := fs.String("account", "", "account name")
	switch args[0] {
	case "add":
		usd := fs.String("usd", "", "amount in USD")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		amount, err := gw.ParseUSD(*usd)
		if err != nil || amount <= 0 || *account == "" {
			return errors.New("usage: gateway balance add --account NAME --usd N (N > 0)")
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			acct, err := st.EnsureAccount(ctx, *account)
			if err != nil {
				return err
			}
			if err := st.TopUp(ctx, acct.ID, amount, "top-up"); err != nil {
				return err
			}
			b, err := st.Balance(ctx, acct.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "added $%s to %s; balance $%s\n", amount.USDString(), acct.Name, b.Balance.USDString())
			return nil
		})
	case "show":
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *account == "" {
			return errors.New("usage: gateway balance show --account NAME [--json]")
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			acct, err := st.AccountByName(ctx, *account)
			if err != nil {
				if errors.Is(err, gw.ErrNotFound) {
					return fmt.Errorf("no account %q", *account)
				}
				return err
			}
			b, err := st.Balance(ctx, acct.ID)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSON(w, map[string]string{
					"account":       acct.Name,
					"balance_usd":   b.Balance.USDString(),
					"held_usd":      b.Held.USDString(),
					"available_usd": b.Available.USDString(),
					"charged_usd":   b.Charged.USDString(),
					"topups_usd":    b.TopUps.USDString(),
				})
			}
			fmt.Fprintf(w, "account %s\nbalance   $%s\nheld      $%s\navailable $%s\ncharged   $%s\ntop-ups   $%s\n",
				acct.Name, b.Balance.USDString(), b.Held.USDString(), b.Available.USDString(), b.Charged.USDString(), b.TopUps.USDString())
			return nil
		})
	}
	return fmt.Errorf("unknown balance command %q", args[0])
}

func modelsCmd(cfg Config, w io.Writer) error {
	card, err := loadCard(cfg.RateCardFile)
	if err != nil {
		return err
	}
	return billing.WriteTable(w, card)
}

func incidentsCmd(ctx context.Context, cfg Config, args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: gateway incidents list|show|review|export")
	}
	switch args[0] {
	case "review":
		return incidentsReview(ctx, cfg, args[1:], w)
	case "export":
		return incidentsExport(ctx, cfg, args[1:], w)
	}
	fs := flag.NewFlagSet("incidents "+args[0], flag.ContinueOnError)
	dbFlag(fs, &cfg)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 100, "how many, newest first")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	type row struct {
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
	toRow := func(in gw.Incident) row {
		return row{in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.Excerpt, in.CreatedAt}
	}
	switch args[0] {
	case "list":
		return withStore(ctx, cfg, func(st gw.Store) error {
			list, err := st.Incidents(ctx, *limit)
			if err != nil {
				return err
			}
			if *asJSON {
				rows := make([]row, 0, len(list))
				for _, in := range list {
					rows = append(rows, toRow(in))
				}
				return printJSON(w, rows)
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "INCIDENT\tREQUEST\tKIND\tSCORE\tTIME\tREASON")
			for _, in := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%s\t%s\n", in.ID, in.RequestID, in.Kind, in.Score, in.CreatedAt.UTC().Format(time.RFC3339), in.Reason)
			}
			return tw.Flush()
		})
	case "show":
		if fs.NArg() != 1 {
			return errors.New("usage: gateway incidents show ID")
		}
		return withStore(ctx, cfg, func(st gw.Store) error {
			in, err := st.Incident(ctx, fs.Arg(0))
			if err != nil {
				if errors.Is(err, gw.ErrNotFound) {
					return fmt.Errorf("no incident %s", fs.Arg(0))
				}
				return err
			}
			if *asJSON {
				return printJSON(w, toRow(*in))
			}
			fmt.Fprintf(w, "incident  %s\nrequest   %s\naccount   %s\nkey       %s\nkind      %s\nscore     %.4f\nreason    %s\ntime      %s\nexcerpt:\n%s\n",
				in.ID, in.RequestID, in.AccountID, in.KeyID, in.Kind, in.Score, in.Reason, in.CreatedAt.UTC().Format(time.RFC3339), indent(in.Excerpt))
			return nil
		})
	}
	return fmt.Errorf("unknown incidents command %q", args[0])
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func guardEval(args []string, w io.Writer) error { return guard.EvalCommand(args, w) }
