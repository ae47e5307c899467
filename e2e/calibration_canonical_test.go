package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize/calibrate"
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
			ctx := context.Background()
			const model = "llama-3.3-70b-versatile"
			since := time.Now().Add(-time.Second)
			e := newEnv(t, withOptimizer, func(c *app.Config) { c.DatabaseURL = dbURL; c.RPM, c.TPM = 0, 0 })
			if strings.HasPrefix(dbURL, "postgres") {
				conn, err := pgx.Connect(ctx, dbURL)
				if err != nil {
					t.Fatal(err)
				}
				_, err = conn.Exec(ctx, `DELETE FROM documents WHERE name LIKE 'optimizer_count/%/groq/%'`)
				conn.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
			}
			var shares []int64
			for _, spelling := range []string{model, strings.ToUpper(model), "Llama-3.3-70b-Versatile"} {
				resp := e.post("/v1/chat/completions", e.key, chatBody("groq/"+spelling, "Say hello.", false, ""))
				if b := readAll(t, resp.Body); resp.StatusCode != 200 {
					t.Fatalf("%s: status %d: %s", spelling, resp.StatusCode, b)
				}
				shares = append(shares, waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id")).Usage.OptimizerTokens)
			}
			recs, err := e.m.Store().Records(ctx, gw.RecordFilter{Vendor: "groq", Since: since, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, r := range recs {
				if strings.Contains(r.Note, calibrate.NoteOptimizerCalibration) {
					calls = append(calls, r.Model)
				}
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
