package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/proxy"
)

// modelBiller reads a request's hold and charge from its model name,
// "h<hold>c<charge>" in micro-cents.
type modelBiller struct{}

func (modelBiller) Known(vendor, model string) bool { return true }

func (modelBiller) figures(model string) (hold, charge gw.Money) {
	fmt.Sscanf(model, "h%dc%d", &hold, &charge)
	return hold, charge
}

func (b modelBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	h, _ := b.figures(r.Model)
	return proxy.HoldPlan{Amount: h}, nil
}

func (b modelBiller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	_, c := b.figures(model)
	return proxy.Quote{Cost: c * 100 / 109, Charge: c}, nil
}

// Budgets through the proxy, with hand-worked figures in micro-cents: a
// key's daily budget of $0.01 (1,000,000) and its account's monthly
// budget of $0.012 (1,200,000), on every store, over a day's and a
// month's rollover on the gateway's clock.
func TestBudgetsThroughHolds(t *testing.T) {
	start := time.Date(2026, 11, 29, 23, 50, 0, 0, time.UTC)
	c := &clock{now: start}
	for name, st := range storesWithClock(t, c) {
		t.Run(name, func(t *testing.T) {
			c.advance(start.Sub(c.Now())) // each store starts at 23:50
			ctx := context.Background()
			acct, err := st.EnsureAccount(ctx, "budgeted")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.TopUp(ctx, acct.ID, gw.USD, "test"); err != nil {
				t.Fatal(err)
			}
			p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
			g, err := proxy.New(proxy.Config{
				Store: st, Auth: &auth.Authenticator{Keys: st},
				Providers: map[string]gw.Provider{"openai": p},
				Biller:    modelBiller{}, HoldTTL: 30 * time.Minute, Now: c.Now,
			})
			if err != nil {
				t.Fatal(err)
			}
			pr := &gw.Principal{KeyID: "key_b", AccountID: acct.ID,
				KeyBudget: gw.Budget{Daily: 1_000_000}, AccountBudget: gw.Budget{Monthly: 1_200_000}}
			n := 0
			send := func(hold, charge gw.Money) (gw.Money, error) {
				n++
				model := fmt.Sprintf("h%dc%d", hold, charge)
				x, err := g.Begin(ctx, proxy.Inbound{RequestID: fmt.Sprintf("req_b%02d", n), Endpoint: gw.ShapeC, Principal: pr, Vendor: "openai", Model: model,
					Stream: n%2 == 0, Body: []byte(`{"model":"openai/` + model + `","messages":[]}`), Received: c.Now()})
				if err != nil {
					return 0, err
				}
				if _, err := x.Call(ctx); err != nil {
					return 0, err
				}
				return x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{Reported: true}})
			}
			for i, s := range []struct {
				hold, charge gw.Money
				advance      time.Duration
				refused      string // the budget named by the 402, "" when served
			}{
				{hold: 600_000, charge: 500_000}, // day 0 + 600,000 <= 1,000,000
				{hold: 600_000, refused: "daily budget of this key reached: $0.01000000 a day; $0.00500000 spent"}, // 500,000 + 600,000 > 1,000,000
				{hold: 500_000, charge: 500_000},                     // 500,000 + 500,000 = 1,000,000
				{hold: 1, refused: "resets at 2026-11-30 00:00 UTC"}, // the day is spent
				{advance: 10 * time.Minute, hold: 300_000, refused: "monthly budget of this account reached: $0.01200000 a month"}, // a new day; the month 1,000,000 + 300,000 > 1,200,000
				{hold: 200_000, charge: 200_000}, // the month: 1,200,000 exactly
				{hold: 1, refused: "resets at 2026-12-01 00:00 UTC"},
				{advance: 24 * time.Hour, hold: 1_000_000, charge: 1_000_000}, // December: both budgets whole
			} {
				c.advance(s.advance)
				got, err := send(s.hold, s.charge)
				switch {
				case s.refused == "" && (err != nil || got != s.charge):
					t.Errorf("step %d: charged %d, %v; want %d", i, got, err, s.charge)
				case s.refused != "":
					e := gw.AsError(err)
					if err == nil || e.Code != gw.CodeInsufficientBalance || e.ErrorCode != gw.ErrorCodeBudgetExceeded || !strings.Contains(e.Message, s.refused) {
						t.Errorf("step %d: %v, want a 402 budget_exceeded saying %q", i, err, s.refused)
					} else if e.Code.Status() != 402 {
						t.Errorf("step %d: status %d", i, e.Code.Status())
					}
				}
			}
			u, err := st.BudgetUse(ctx, acct.ID, "key_b", c.Now())
			if err != nil {
				t.Fatal(err)
			}
			if u.KeyDay != (gw.PeriodUse{Spent: 1_000_000}) || u.AccountMonth != (gw.PeriodUse{Spent: 1_000_000}) {
				t.Errorf("December's use %+v", u)
			}
			nov, err := st.BudgetUse(ctx, acct.ID, "key_b", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if nov.KeyDay.Spent != 200_000 || nov.AccountMonth.Spent != 1_200_000 {
				t.Errorf("November's use %+v", nov)
			}
			b, _ := st.Balance(ctx, acct.ID)
			if b.Charged != 2_200_000 || b.Held != 0 {
				t.Errorf("balance %+v, want 2,200,000 charged", b)
			}
		})
	}
}

// affordBiller holds 1,000 micro-cents an output token, 1,000 tokens at
// most, and imposes the largest limit of at least 100 tokens that the
// available money covers, as billing does.
type affordBiller struct{}

func (affordBiller) Known(vendor, model string) bool { return true }

func (affordBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	const full = 1_000_000
	if r.Available < 0 || r.Available >= full {
		return proxy.HoldPlan{Amount: full, MaxOutput: 1000, OutputBound: 1000}, nil
	}
	n := int64(r.Available / 1000)
	if r.CallerLimit || n < 100 {
		return proxy.HoldPlan{}, &gw.Error{Code: gw.CodeInsufficientBalance, Message: "insufficient balance: covers " + fmt.Sprint(n) + " output tokens"}
	}
	return proxy.HoldPlan{Amount: gw.Money(n * 1000), MaxOutput: n, OutputBound: n, Imposed: true}, nil
}

func (affordBiller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	return proxy.Quote{Cost: 100_000 * 100 / 109, Charge: 100_000}, nil
}

// A caller who set no output limit gets the largest one that what the
// budgets leave covers, as with the balance: under a daily budget of
// 600,000 micro-cents the first request is sent with a limit of 600
// tokens (hold 600,000), the second, after a charge of 100,000, with
// 500; once what remains covers fewer than 100 tokens the budget's 402
// answers, not the balance's.
func TestBudgetImposesOutputLimit(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	for name, st := range storesWithClock(t, c) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			acct, err := st.EnsureAccount(ctx, "imposed")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.TopUp(ctx, acct.ID, gw.USD, "test"); err != nil {
				t.Fatal(err)
			}
			var sent []string
			p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
				sent = append(sent, string(c.Body))
				return okUpstream(), nil
			}}
			g, err := proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: st}, Providers: map[string]gw.Provider{"openai": p},
				Biller: affordBiller{}, HoldTTL: 30 * time.Minute, Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			pr := &gw.Principal{KeyID: "key_i", AccountID: acct.ID, KeyBudget: gw.Budget{Daily: 600_000}}
			send := func(i int) error {
				x, err := g.Begin(ctx, proxy.Inbound{RequestID: fmt.Sprintf("req_i%d", i), Endpoint: gw.ShapeC, Principal: pr, Vendor: "openai", Model: "m",
					Body: []byte(`{"model":"openai/m","messages":[]}`), Received: c.Now()})
				if err != nil {
					return err
				}
				if _, err := x.Call(ctx); err != nil {
					return err
				}
				_, err = x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{Reported: true}})
				return err
			}
			for i, want := range []string{"600", "500", "400", "300", "200", "100"} {
				if err := send(i); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if !strings.Contains(sent[i], `:`+want+`}`) && !strings.Contains(sent[i], `:`+want+`,`) {
					t.Errorf("request %d sent %s, want a limit of %s", i, sent[i], want)
				}
			}
			// 600,000 spent: nothing remains.
			err = send(6)
			if e := gw.AsError(err); err == nil || e.ErrorCode != gw.ErrorCodeBudgetExceeded {
				t.Errorf("request 6: %v, want the budget's 402", err)
			}
		})
	}
}
