package app

import (
	"context"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
)

// CreateKey makes an account (if new), tops it up and issues a key with
// its own limits (zero fields: the configured defaults) and optimization
// switch; it returns the secret and the key.
func CreateKey(ctx context.Context, st gw.Store, account string, topUp gw.Money, lim gw.Limit, optimizeOff bool) (secret string, k *gw.Key, err error) {
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
	k = &gw.Key{ID: id, AccountID: acct.ID, AccountName: acct.Name, Hint: auth.Hint(secret), CreatedAt: time.Now(), RPM: lim.RPM, TPM: lim.TPM, OptimizeOff: optimizeOff}
	if err := st.CreateKey(ctx, k, hash); err != nil {
		return "", nil, err
	}
	return secret, k, nil
}

// demoAccount is the account serve --fake-vendors keeps for newcomers.
const demoAccount = "demo"

// demoKey gives a newcomer on --fake-vendors a working key on every
// start. When the store has no key yet it creates account "demo" with
// $10 and a key; when account "demo" exists, a stored secret cannot be
// shown again (only its hash is kept), so it issues a new key on that
// account (the earlier ones keep working: a client started before the
// restart is not cut off). A store with keys but no demo account is
// someone's own: nothing is created and the message says how to get a
// key.
func demoKey(ctx context.Context, st gw.Store, out *console) error {
	keys, err := st.Keys(ctx)
	if err != nil {
		return err
	}
	demo := len(keys) == 0
	for _, k := range keys {
		if k.AccountName == demoAccount {
			demo = true
		}
	}
	if !demo {
		out.say("use an existing key (gateway keys list), or create one: gateway keys create --account NAME --balance-usd 10\n",
			"use an existing key (gateway keys list), or create one: gateway keys create --account NAME --balance-usd 10")
		return nil
	}
	topUp := gw.Money(0)
	if len(keys) == 0 {
		topUp = 10 * gw.USD
	}
	secret, k, err := CreateKey(ctx, st, demoAccount, topUp, gw.Limit{}, false)
	if err != nil {
		return fmt.Errorf("create demo key: %w", err)
	}
	bal, err := st.Balance(ctx, k.AccountID)
	if err != nil {
		return fmt.Errorf("demo balance: %w", err)
	}
	what := "demo account created with $10.00; its API key"
	if topUp == 0 {
		what = fmt.Sprintf("a new key for the demo account (balance $%s; earlier demo keys still work)", bal.Available.USDString())
	}
	out.say(fmt.Sprintf("%s (shown once):\n\n  export GATEWAY_KEY=%s\n\n", what, secret),
		"demo key created (shown once)", "account", demoAccount, "balance_usd", bal.Available.USDString(), "key", secret)
	return nil
}
