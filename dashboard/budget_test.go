package dashboard

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// The budget form: a blank field leaves its cap, and a form with neither
// is refused.
func TestBudgetForm(t *testing.T) {
	post := func(v url.Values) (daily, monthly *string, err error) {
		r := httptest.NewRequest("POST", "/dashboard/keys/k/budget", strings.NewReader(v.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return budgetForm(r)
	}
	if _, _, err := post(url.Values{"daily_budget_usd": {" "}}); gw.ErrorCode(err) != gw.CodeInvalidRequest {
		t.Errorf("blank form: err %v, want invalid request", err)
	}
	daily, monthly, err := post(url.Values{"monthly_budget_usd": {" 0 "}})
	if err != nil || daily != nil || monthly == nil || *monthly != "0" {
		t.Errorf("monthly 0: daily %v monthly %v err %v", daily, monthly, err)
	}
}
