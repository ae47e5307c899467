package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
)

// Budgets on the dashboard: the activity page of one account shows its
// budgets and its keys' (what remains of each in the current UTC day or
// month), and the administrator's accounts page shows and sets them.

// budgetCards are the activity page's cards of the account's budgets and
// its keys' (none when none is set).
func (d *Dashboard) budgetCards(ctx context.Context, accountID string, v *viewer) ([]card, error) {
	bs := d.store
	now := d.now()
	var out []card
	add := func(what string, b gw.Budget, day, month gw.PeriodUse) {
		for _, c := range []struct {
			p     gw.BudgetPeriod
			limit gw.Money
			use   gw.PeriodUse
		}{{gw.Daily, b.Daily, day}, {gw.Monthly, b.Monthly, month}} {
			if c.limit == 0 {
				continue
			}
			_, resets := gw.PeriodOf(c.p, now)
			out = append(out, card{
				Label: what + " " + string(c.p) + " budget", Value: usdBrief(c.use.Remaining(c.limit)), Exact: usd(c.use.Remaining(c.limit)),
				Detail: "left of " + usdBrief(c.limit) + " · spent " + usdBrief(c.use.Spent) + " · held " + usdBrief(c.use.Held) +
					" · resets " + resets.Format("Jan 2 15:04") + " UTC",
				Class: budgetClass(c.use, c.limit),
			})
		}
	}
	ab, err := bs.AccountBudget(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var keys []gw.Key
	for _, k := range v.keys {
		if k.AccountID == accountID && !k.Budget.IsZero() && k.Live(now) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b gw.Key) int { return strings.Compare(a.ID, b.ID) })
	// Each key's use carries its account's too: the account's cards
	// (first) need a query of their own only when no key has a budget.
	uses := make([]gw.BudgetUse, len(keys))
	for i, k := range keys {
		if uses[i], err = bs.BudgetUse(ctx, accountID, k.ID, now); err != nil {
			return nil, err
		}
	}
	if !ab.IsZero() {
		var u gw.BudgetUse
		if len(uses) > 0 {
			u = uses[0]
		} else if u, err = bs.BudgetUse(ctx, accountID, "", now); err != nil {
			return nil, err
		}
		add("Account", ab, u.AccountDay, u.AccountMonth)
	}
	for i, k := range keys {
		name := "Key " + k.Hint
		if k.Name != "" {
			name = "Key " + k.Name
		}
		add(name, k.Budget, uses[i].KeyDay, uses[i].KeyMonth)
	}
	return out, nil
}

// budgetClass marks a budget with nothing left, or under a tenth.
func budgetClass(u gw.PeriodUse, limit gw.Money) string {
	switch left := u.Remaining(limit); {
	case left == 0:
		return "bad"
	case left*10 < limit:
		return "warn"
	}
	return ""
}

// budgetText is a budget's cell on the accounts page: what remains of
// each cap ("$0.0050 of $0.0100 a day").
func budgetText(b *admin.Budgets) []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, c := range []struct {
		s   *admin.BudgetStatus
		per string
	}{{b.Daily, "a day"}, {b.Monthly, "a month"}} {
		if c.s == nil {
			continue
		}
		out = append(out, brief(c.s.RemainingUSD)+" left of "+brief(c.s.BudgetUSD)+" "+c.per)
	}
	return out
}

// brief is usdBrief of an exact decimal dollar string.
func brief(s string) string {
	m, err := gw.ParseUSD(s)
	if err != nil {
		return "$" + s
	}
	return usdBrief(m)
}

// budgetForm reads the two budget fields of a form: "" leaves a cap,
// "0" clears it; at least one must be given.
func budgetForm(r *http.Request) (daily, monthly *string, err error) {
	for _, f := range []struct {
		name string
		dst  **string
	}{{"daily_budget_usd", &daily}, {"monthly_budget_usd", &monthly}} {
		if s := strings.TrimSpace(r.PostFormValue(f.name)); s != "" {
			*f.dst = &s
		}
	}
	if daily == nil && monthly == nil {
		return nil, nil, gw.Errorf(gw.CodeInvalidRequest, "give a daily or a monthly budget in US dollars (0 clears it)")
	}
	return daily, monthly, nil
}

// setKeyBudget sets a key's budgets from the accounts page's form.
func (d *Dashboard) setKeyBudget(ctx context.Context, r *http.Request, p *accountsPage) error {
	daily, monthly, err := budgetForm(r)
	if err != nil {
		return err
	}
	k, err := d.admin.UpdateKey(ctx, r.PathValue("id"), admin.KeyUpdate{DailyBudgetUSD: daily, MonthlyBudgetUSD: monthly})
	if err != nil {
		return err
	}
	p.Done = "Budgets of " + k.ID + ": " + budgetSummary(k.Budgets) + "."
	return nil
}

// setAccountBudget sets an account's budgets from the accounts page's
// form.
func (d *Dashboard) setAccountBudget(ctx context.Context, r *http.Request, p *accountsPage) error {
	daily, monthly, err := budgetForm(r)
	if err != nil {
		return err
	}
	a, err := d.admin.UpdateAccount(ctx, r.PathValue("id"), admin.AccountUpdate{DailyBudgetUSD: daily, MonthlyBudgetUSD: monthly})
	if err != nil {
		return err
	}
	p.Done = "Budgets of " + a.Name + ": " + budgetSummary(a.Budgets) + "."
	return nil
}

func budgetSummary(b *admin.Budgets) string {
	if t := budgetText(b); len(t) > 0 {
		return strings.Join(t, ", ")
	}
	return "none"
}
