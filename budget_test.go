package gw

import "testing"

func TestHoldBudgetedMatchesBudgetLimits(t *testing.T) {
	for _, h := range []Hold{
		{},
		{AccountID: "acct", KeyID: "key"},
		{AccountID: "acct", KeyID: "key", KeyBudget: Budget{Daily: 1}},
		{AccountID: "acct", KeyID: "key", KeyBudget: Budget{Monthly: 1}},
		{AccountID: "acct", KeyID: "key", AccountBudget: Budget{Daily: 1}},
		{AccountID: "acct", KeyID: "key", AccountBudget: Budget{Monthly: 1}},
		{AccountID: "acct", KeyBudget: Budget{Daily: 1, Monthly: 1}},
		{KeyID: "key", AccountBudget: Budget{Daily: 1}},
		{AccountID: "acct", KeyID: "key", KeyBudget: Budget{Daily: -1}},
	} {
		if got, want := h.Budgeted(), len(h.BudgetLimits()) > 0; got != want {
			t.Errorf("%+v: Budgeted() = %v, BudgetLimits() = %v", h, got, h.BudgetLimits())
		}
	}
}
