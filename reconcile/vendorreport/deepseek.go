package vendorreport

import (
	"context"
	"errors"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/reconcile"
)

// DeepSeek reads DeepSeek's prepaid balance (GET /user/balance). DeepSeek
// has no admin key type: the admin key is an ordinary key of the account
// that the operator keeps for this read and never gives the gateway to
// serve with.
type DeepSeek struct{ cfg Config }

// NewDeepSeek returns the DeepSeek reader. cfg.BaseURL is the configured
// base URL ("https://api.deepseek.com").
func NewDeepSeek(cfg Config) *DeepSeek { return &DeepSeek{cfg: cfg} }

// Vendor returns "deepseek".
func (*DeepSeek) Vendor() string { return "deepseek" }

type deepseekBalance struct {
	IsAvailable  bool `json:"is_available"`
	BalanceInfos []struct {
		Currency     string  `json:"currency"`
		TotalBalance decimal `json:"total_balance"`
	} `json:"balance_infos"`
}

// Balance returns the USD balance. An account holding only another
// currency (CNY) is an error: the ledger is in USD. Without an admin key
// it returns reconcile.ErrNoCredentials.
func (d *DeepSeek) Balance(ctx context.Context) (gw.Money, error) {
	if d.cfg.AdminKey == "" {
		return 0, reconcile.ErrNoCredentials
	}
	var b deepseekBalance
	base := d.cfg.base("https://api.deepseek.com")
	if _, err := d.cfg.get(ctx, "deepseek", base+"/user/balance", bearer(d.cfg.AdminKey), &b); err != nil {
		return 0, err
	}
	for _, bi := range b.BalanceInfos {
		if !strings.EqualFold(bi.Currency, "USD") {
			continue
		}
		if !bi.TotalBalance.set {
			return 0, errors.New("deepseek report: USD balance without total_balance")
		}
		var s sum
		s.add(bi.TotalBalance, perUSD)
		return s.money()
	}
	return 0, errors.New("deepseek report: no USD balance")
}

var _ reconcile.Balances = (*DeepSeek)(nil)
