package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
)

// spender is the store's sum of an account's charges since a time (both
// stores have it).
type spender interface {
	Spend(ctx context.Context, accountID string, since time.Time) (gw.Money, error)
}

// BalanceResponse is the body of GET /v1/balance: the calling key's
// account and limits. Amounts are exact decimal US dollars (8 decimals);
// the day and month are UTC.
type BalanceResponse struct {
	Object         string     `json:"object"` // "balance"
	AccountID      string     `json:"account_id"`
	AccountName    string     `json:"account_name"`
	Currency       string     `json:"currency"` // "usd"
	Balance        string     `json:"balance"`  // top_ups - charged
	Held           string     `json:"held"`     // reserved by requests in flight
	Available      string     `json:"available"`
	TopUps         string     `json:"top_ups"`
	Charged        string     `json:"charged"`
	SpendToday     string     `json:"spend_today"`
	SpendThisMonth string     `json:"spend_this_month"`
	Key            BalanceKey `json:"key"`
	// Budgets are the spend caps in force for the key: its own and its
	// account's, per UTC day and calendar month (null: no cap).
	Budgets BalanceBudgets `json:"budgets"`
}

// BalanceBudgets are the calling key's and its account's budgets.
type BalanceBudgets struct {
	KeyDaily       *BalanceBudget `json:"key_daily"`
	KeyMonthly     *BalanceBudget `json:"key_monthly"`
	AccountDaily   *BalanceBudget `json:"account_daily"`
	AccountMonthly *BalanceBudget `json:"account_monthly"`
}

// BalanceBudget is one budget and its period's use: remaining = budget -
// spent - held (requests in flight), never below 0; a request whose hold
// does not fit in it is refused with 402 until resets_at.
type BalanceBudget struct {
	Budget    string    `json:"budget"`
	Spent     string    `json:"spent"`
	Held      string    `json:"held"`
	Remaining string    `json:"remaining"`
	ResetsAt  time.Time `json:"resets_at"`
}

func balanceBudget(limit gw.Money, u gw.PeriodUse, p gw.BudgetPeriod, now time.Time) *BalanceBudget {
	if limit == 0 {
		return nil
	}
	_, resets := gw.PeriodOf(p, now)
	return &BalanceBudget{Budget: limit.USDString(), Spent: u.Spent.USDString(), Held: u.Held.USDString(),
		Remaining: u.Remaining(limit).USDString(), ResetsAt: resets}
}

// BalanceKey is the calling key and the limits in force for it (0:
// unlimited).
type BalanceKey struct {
	ID  string `json:"id"`
	RPM int64  `json:"rpm"`
	TPM int64  `json:"tpm"`
}

// balance serves GET /v1/balance for the key in Authorization (or
// x-api-key).
func (s *Server) balance(w http.ResponseWriter, r *http.Request) {
	p, now, fail := s.accountRead(w, r)
	if p == nil {
		return
	}
	gwy := s.cfg.Gateway
	store := gwy.Store()
	bal, err := store.Balance(r.Context(), p.AccountID)
	if err != nil {
		fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the balance", Err: err})
		return
	}
	lim := gwy.Limits(p)
	out := BalanceResponse{
		Object: "balance", AccountID: p.AccountID, AccountName: p.AccountName, Currency: "usd",
		Balance: bal.Balance.USDString(), Held: bal.Held.USDString(), Available: bal.Available.USDString(),
		TopUps: bal.TopUps.USDString(), Charged: bal.Charged.USDString(),
		Key: BalanceKey{ID: p.KeyID, RPM: lim.RPM, TPM: lim.TPM},
	}
	if sp, ok := store.(spender); ok {
		day, _ := gw.PeriodOf(gw.Daily, now)
		month, _ := gw.PeriodOf(gw.Monthly, now)
		today, err1 := sp.Spend(r.Context(), p.AccountID, day)
		thisMonth, err2 := sp.Spend(r.Context(), p.AccountID, month)
		if err := errors.Join(err1, err2); err != nil {
			fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the spend", Err: err})
			return
		}
		out.SpendToday, out.SpendThisMonth = today.USDString(), thisMonth.USDString()
	}
	if !(p.KeyBudget.IsZero() && p.AccountBudget.IsZero()) {
		u, err := store.BudgetUse(r.Context(), p.AccountID, p.KeyID, now)
		if err != nil {
			fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the budgets", Err: err})
			return
		}
		out.Budgets = BalanceBudgets{
			KeyDaily:       balanceBudget(p.KeyBudget.Daily, u.KeyDay, gw.Daily, now),
			KeyMonthly:     balanceBudget(p.KeyBudget.Monthly, u.KeyMonth, gw.Monthly, now),
			AccountDaily:   balanceBudget(p.AccountBudget.Daily, u.AccountDay, gw.Daily, now),
			AccountMonthly: balanceBudget(p.AccountBudget.Monthly, u.AccountMonth, gw.Monthly, now),
		}
	}
	writeJSON(w, http.StatusOK, out)
}
