package admin

import (
	"context"
	"errors"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Budgets are a key's or an account's spend caps (see gw.Budget): per
// UTC calendar day and per UTC calendar month, each with what the
// current period has spent and holds for requests in flight, and what
// remains. null: no cap.
type Budgets struct {
	Daily   *BudgetStatus `json:"daily"`
	Monthly *BudgetStatus `json:"monthly"`
}

// BudgetStatus is one cap and the current period's use of it, in exact
// decimal US dollars. Remaining = budget - spent - held, never below 0.
type BudgetStatus struct {
	BudgetUSD    string    `json:"budget_usd"`
	SpentUSD     string    `json:"spent_usd"`
	HeldUSD      string    `json:"held_usd"`
	RemainingUSD string    `json:"remaining_usd"`
	ResetsAt     time.Time `json:"resets_at"`
}

// NewBudgets is the Budgets of caps b with the day's and the month's use
// at now; nil when b sets no cap.
func NewBudgets(b gw.Budget, day, month gw.PeriodUse, now time.Time) *Budgets {
	if b.IsZero() {
		return nil
	}
	status := func(limit gw.Money, u gw.PeriodUse, p gw.BudgetPeriod) *BudgetStatus {
		if limit == 0 {
			return nil
		}
		_, resets := gw.PeriodOf(p, now)
		return &BudgetStatus{BudgetUSD: limit.USDString(), SpentUSD: u.Spent.USDString(), HeldUSD: u.Held.USDString(),
			RemainingUSD: u.Remaining(limit).USDString(), ResetsAt: resets}
	}
	return &Budgets{Daily: status(b.Daily, day, gw.Daily), Monthly: status(b.Monthly, month, gw.Monthly)}
}

// parseBudget reads a budget field: a decimal amount of US dollars, "0"
// clearing the cap; nil leaves cur.
func parseBudget(field string, s *string, cur gw.Money) (gw.Money, error) {
	if s == nil {
		return cur, nil
	}
	m, err := gw.ParseUSD(*s)
	if err != nil || m < 0 || strings.TrimSpace(*s) == "" {
		return 0, invalid("%s must be an amount of US dollars (0 clears it), not %q", field, *s)
	}
	return m, nil
}

// budgetUpdate applies the two budget fields to cur; changed says whether
// either was given.
func budgetUpdate(daily, monthly *string, cur gw.Budget) (b gw.Budget, changed bool, err error) {
	if b.Daily, err = parseBudget("daily_budget_usd", daily, cur.Daily); err != nil {
		return b, false, err
	}
	if b.Monthly, err = parseBudget("monthly_budget_usd", monthly, cur.Monthly); err != nil {
		return b, false, err
	}
	return b, daily != nil || monthly != nil, nil
}

// keyBudgets is a key's Budgets with its use now (nil: none, or a store
// without budgets).
func (l *Local) keyBudgets(ctx context.Context, k *gw.Key) (*Budgets, error) {
	if k.Budget.IsZero() {
		return nil, nil
	}
	now := l.now()
	u, err := l.Store.BudgetUse(ctx, k.AccountID, k.ID, now)
	if err != nil {
		return nil, err
	}
	return NewBudgets(k.Budget, u.KeyDay, u.KeyMonth, now), nil
}

// accountBudgets is an account's Budgets with its use now.
func (l *Local) accountBudgets(ctx context.Context, accountID string) (*Budgets, error) {
	b, err := l.Store.AccountBudget(ctx, accountID)
	if err != nil || b.IsZero() {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("account", accountID)
		}
		return nil, err
	}
	now := l.now()
	u, err := l.Store.BudgetUse(ctx, accountID, "", now)
	if err != nil {
		return nil, err
	}
	return NewBudgets(b, u.AccountDay, u.AccountMonth, now), nil
}

// setAccountBudget sets the account's budgets from u and makes the
// cached principals of its keys, which carry them, reload.
func (l *Local) setAccountBudget(ctx context.Context, accountID string, u AccountUpdate) error {
	cur, err := l.Store.AccountBudget(ctx, accountID)
	if err != nil {
		return err
	}
	b, _, err := budgetUpdate(u.DailyBudgetUSD, u.MonthlyBudgetUSD, cur)
	if err != nil {
		return err
	}
	if err := l.Store.SetAccountBudget(ctx, accountID, b); err != nil {
		return err
	}
	if l.OnRevoke != nil {
		keys, err := l.Store.Keys(ctx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.AccountID == accountID {
				l.OnRevoke(k.ID)
			}
		}
	}
	return nil
}
