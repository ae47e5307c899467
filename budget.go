package gw

import (
	"context"
	"fmt"
	"time"
)

// Budget is a spend cap of a key or an account: at most Daily in one UTC
// calendar day and at most Monthly in one UTC calendar month. Zero is no
// cap.
//
// A request counts toward the periods that contain its arrival
// (Hold.At, the record's CreatedAt), from its hold to its settle: a hold
// is placed only when the period's charges, plus the open holds counted
// in the same period, plus the new hold fit in every budget in force,
// and a settle never debits more than its hold plus what the budgets
// still cover. So concurrent requests never spend beyond a budget, the
// same guarantee as for the balance.
type Budget struct {
	Daily   Money
	Monthly Money
}

// IsZero reports whether neither cap is set.
func (b Budget) IsZero() bool { return b.Daily == 0 && b.Monthly == 0 }

// BudgetScope names whose budget: a key's or its account's.
type BudgetScope string

// Budget scopes.
const (
	BudgetKey     BudgetScope = "key"
	BudgetAccount BudgetScope = "account"
)

// BudgetPeriod names a budget's period.
type BudgetPeriod string

// Budget periods.
const (
	Daily   BudgetPeriod = "daily"
	Monthly BudgetPeriod = "monthly"
)

// PeriodOf returns the UTC calendar day or month containing t: its
// start (inclusive) and end (exclusive).
func PeriodOf(p BudgetPeriod, t time.Time) (start, end time.Time) {
	u := t.UTC()
	if p == Monthly {
		start = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// Limit returns the budget's cap for the period (zero: none).
func (b Budget) Limit(p BudgetPeriod) Money {
	if p == Monthly {
		return b.Monthly
	}
	return b.Daily
}

// BudgetLimits lists the caps in force for a hold, in the order they
// are checked (key daily, key monthly, account daily, account monthly),
// each with its owner's id.
func (h *Hold) BudgetLimits() []BudgetLimit {
	if h.KeyBudget.IsZero() && h.AccountBudget.IsZero() {
		return nil
	}
	var out []BudgetLimit
	for _, c := range []struct {
		scope BudgetScope
		owner string
		b     Budget
	}{{BudgetKey, h.KeyID, h.KeyBudget}, {BudgetAccount, h.AccountID, h.AccountBudget}} {
		for _, p := range []BudgetPeriod{Daily, Monthly} {
			if l := c.b.Limit(p); l > 0 && c.owner != "" {
				out = append(out, BudgetLimit{Scope: c.scope, Owner: c.owner, Period: p, Limit: l})
			}
		}
	}
	return out
}

// Budgeted reports whether any cap is in force for the hold, as
// len(h.BudgetLimits()) > 0 without building the list.
func (h *Hold) Budgeted() bool {
	return h.KeyID != "" && (h.KeyBudget.Daily > 0 || h.KeyBudget.Monthly > 0) ||
		h.AccountID != "" && (h.AccountBudget.Daily > 0 || h.AccountBudget.Monthly > 0)
}

// BudgetLimit is one cap in force for a hold.
type BudgetLimit struct {
	Scope  BudgetScope
	Owner  string // the key's or the account's id
	Period BudgetPeriod
	Limit  Money
}

// PeriodUse is what counts against a budget in one period: the charges
// of the period's requests and the open holds of those still running.
type PeriodUse struct {
	Spent Money
	Held  Money
}

// Remaining is what a budget of limit leaves after u, never below zero.
func (u PeriodUse) Remaining(limit Money) Money { return max(limit-u.Spent-u.Held, 0) }

// BudgetUse is a key's and its account's use of the current day and
// month (UTC), whether or not a budget is set.
type BudgetUse struct {
	KeyDay, KeyMonth         PeriodUse
	AccountDay, AccountMonth PeriodUse
}

// BudgetUser is part of Store: a store reports budget use.
// BudgetUse returns the use of the periods containing at by the key
// (keyID may be empty: then only the account's) and its account.
type BudgetUser interface {
	BudgetUse(ctx context.Context, accountID, keyID string, at time.Time) (BudgetUse, error)
}

// BudgetSetter is part of Store: a store keeps budgets.
// SetKeyBudget and SetAccountBudget replace the caps (zero clears); an
// unknown key or account is ErrNotFound. A running gateway applies a
// change within its key cache's refresh.
type BudgetSetter interface {
	SetKeyBudget(ctx context.Context, keyID string, b Budget) error
	SetAccountBudget(ctx context.Context, accountID string, b Budget) error
	AccountBudget(ctx context.Context, accountID string) (Budget, error)
}

// ErrorCodeBudgetExceeded is the error.details.error_code (and the
// Responses envelope's code) of a request refused by a budget; its
// error.type is insufficient_balance (402).
const ErrorCodeBudgetExceeded = "budget_exceeded"

// BudgetExceeded is the caller-facing refusal of a hold that does not fit
// in l: spent and held are the period's charges and open holds, need the
// hold's amount.
func BudgetExceeded(l BudgetLimit, u PeriodUse, need Money, at time.Time) *Error {
	_, resets := PeriodOf(l.Period, at)
	when := "today (UTC)"
	if l.Period == Monthly {
		when = "this month (UTC)"
	}
	return &Error{
		Code:      CodeInsufficientBalance,
		ErrorCode: ErrorCodeBudgetExceeded,
		NoRetry:   true,
		Message: fmt.Sprintf("%s budget of this %s reached: $%s a %s; $%s spent and $%s held by requests in flight %s, this request needs up to $%s; it resets at %s",
			l.Period, l.Scope, l.Limit.USDString(), periodNoun(l.Period), u.Spent.USDString(), u.Held.USDString(), when,
			need.USDString(), resets.Format("2006-01-02 15:04 UTC")),
	}
}

func periodNoun(p BudgetPeriod) string {
	if p == Monthly {
		return "month"
	}
	return "day"
}

// FitsBudget reports whether need fits in the limit after u.
func FitsBudget(limit Money, u PeriodUse, need Money) bool {
	return u.Spent+u.Held+need <= limit
}

// BudgetCover is what a settle of a hold of own (0 when expired) may
// debit under l after u (the period's charges and the other open holds):
// the hold plus what the budget still covers.
func BudgetCover(limit Money, u PeriodUse, own Money) Money {
	return own + max(limit-u.Spent-u.Held-own, 0)
}
