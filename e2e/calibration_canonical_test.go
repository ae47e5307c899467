package e2e

import (
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Issue 46 D6 and issue 52 item 5 (before -> after): each spelling of a
// model id started a directive calibration of its own at the operator's
// cost (2 calls each on groq, a documents row each). Now the count is
// kept under the rate card's id: three spellings cost the two calls of
// one count, recorded under the card's id, taken after the first
// request succeeded, and every later spelling gets the same share. On
// both stores.
func TestCalibrationOneCountPerModel(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			const model = "llama-3.3-70b-versatile"
			since := time.Now().Add(-time.Second)
			e := optimizerEnv(t, dbURL)
			forgetCounts(t, dbURL, "optimizer_count/%/groq/%")
			var shares []int64
			for _, spelling := range []string{model, strings.ToUpper(model), "Llama-3.3-70b-Versatile"} {
				rec := e.postRecord(t, "/v1/chat/completions", chatBody("groq/"+spelling, "Say hello.", false, ""))
				shares = append(shares, rec.Usage.OptimizerTokens)
			}
			var calls []string
			for _, r := range calibrations(t, e.m.Store(), gw.RecordFilter{Vendor: "groq", Since: since, Limit: 1000}) {
				calls = append(calls, r.Model)
			}
			if len(calls) != 2 || calls[0] != model || calls[1] != model {
				t.Errorf("calibration calls %v; want 2, under %q", calls, model)
			}
			// The first request precedes any success of the model: not
			// counted, the upper bound (never below the count).
			if shares[1] <= 0 || shares[2] != shares[1] || shares[0] < shares[1] {
				t.Errorf("shares %v; want one share for every spelling after the first (the upper bound)", shares)
			}
		})
	}
}
