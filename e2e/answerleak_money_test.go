package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// TestAnswerLeakMoney: a request stopped on its answer records the
// vendor's usage and is charged cost x 1.09 like any answer (an attacker
// gets no free calls), or nothing when the operator waives it (the cost
// then recorded as the operator's). On both stores, afterwards: balance =
// top-ups - the records' charges, nothing held, each charge in exactly
// one ledger row.
func TestAnswerLeakMoney(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		for _, waive := range []bool{false, true} {
			sub := name + "/charged"
			if waive {
				sub = name + "/waived"
			}
			t.Run(sub, func(t *testing.T) {
				e := newEnv(t, func(c *app.Config) {
					c.DatabaseURL = dbURL
					c.GuardAnswerWaive = waive
				})
				ctx := context.Background()
				st := e.m.Store()
				const topUp = 10 * gw.USD
				secret, k, err := createKey(ctx, st, uniqueAccount("leakmoney"), topUp)
				if err != nil {
					t.Fatal(err)
				}
				routes := leakRoutes(leakSystem)
				sent := 0
				for _, rt := range []leakRoute{routes[0], routes[3]} { // M native, C mapped
					for _, stream := range []bool{false, true} {
						model := rt.vendor + "/" + nativeModels[rt.vendor]
						resp := e.post(rt.path(model, stream), secret, rt.body(model, "Which flights leave tomorrow? [fake:leak=base64]", stream), "Anthropic-Version", "2023-06-01")
						body := readAll(t, resp.Body)
						if !strings.Contains(string(body), "request_blocked") {
							t.Fatalf("not stopped: %d %s", resp.StatusCode, body)
						}
						sent++
					}
				}
				resp := e.post("/v1/chat/completions", secret, chatBody("openai/"+nativeModels["openai"], "hi", false, ""))
				readAll(t, resp.Body)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("an ordinary request: %d", resp.StatusCode)
				}
				recs := waitRecords(t, st, k.AccountID, sent+1)
				ledger := ledgerCharges(t, dbURL, k.AccountID)
				var sum gw.Money
				leaks := 0
				for _, r := range recs {
					sum += r.Charge
					rows := ledger[r.RequestID]
					switch {
					case r.Charge > 0 && (len(rows) != 1 || rows[0] != -int64(r.Charge)):
						t.Errorf("%s charged %d: ledger rows %v", r.RequestID, r.Charge, rows)
					case r.Charge == 0 && len(rows) != 0:
						t.Errorf("%s charged nothing: ledger rows %v", r.RequestID, rows)
					}
					if r.Guard != "flagged:extraction_answer" {
						continue
					}
					leaks++
					if r.Usage.TotalTokens() == 0 || r.Cost <= 0 || !strings.Contains(r.Note, "extraction_answer") {
						t.Errorf("leak record without the vendor's usage and cost: %+v", r)
					}
					if want := gw.Money((int64(r.Cost)*109 + 50) / 100); !waive && r.Charge != want {
						t.Errorf("leak charged %d, want cost %d x 1.09 = %d", r.Charge, r.Cost, want)
					}
					if waive && r.Charge != 0 {
						t.Errorf("waived leak charged %d", r.Charge)
					}
					incs, err := st.IncidentsOf(ctx, k.AccountID, 50)
					found := false
					for _, in := range incs {
						found = found || in.RequestID == r.RequestID && in.Kind == "extraction_answer" && strings.Contains(in.Reason, "output tokens")
					}
					if err != nil || !found {
						t.Errorf("no incident with the usage for %s: %v %+v", r.RequestID, err, incs)
					}
				}
				if leaks != sent {
					t.Errorf("%d leak records, want %d", leaks, sent)
				}
				b, err := st.Balance(ctx, k.AccountID)
				if err != nil {
					t.Fatal(err)
				}
				if b.Held != 0 || b.Charged != sum || b.Balance != topUp-sum || b.Balance < 0 {
					t.Errorf("balance %+v, records' charges %d", b, sum)
				}
			})
		}
	}
}
