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

// The directive's count on a vendor without a count endpoint costs two
// real requests (the operator's). It is kept in the store: a gateway
// restarted the same day reads it and sends no calibration requests
// again; the directive's share is the same as before the restart. On
// both stores.
func TestCalibrationKeptAcrossRestart(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			model := "llama-3.1-8b-instant"
			since := time.Now().Add(-time.Second)
			start := func() *env {
				return newEnv(t, withOptimizer, func(c *app.Config) { c.DatabaseURL = dbURL; c.RPM, c.TPM = 0, 0 })
			}
			calibrations := func(st gw.Store) int {
				t.Helper()
				recs, err := st.Records(ctx, gw.RecordFilter{Vendor: "groq", Model: model, Since: since, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, r := range recs {
					if strings.Contains(r.Note, calibrate.NoteOptimizerCalibration) {
						n++
					}
				}
				return n
			}
			send := func(e *env) *gw.Record {
				t.Helper()
				resp := e.post("/v1/chat/completions", e.key, chatBody("groq/"+model, "Say hello.", false, ""))
				if b := readAll(t, resp.Body); resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				return waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
			}
			first := start()
			if strings.HasPrefix(dbURL, "postgres") {
				// The shared test database may keep a count from an
				// earlier run (the store is migrated now): start
				// without one.
				conn, err := pgx.Connect(ctx, dbURL)
				if err != nil {
					t.Fatal(err)
				}
				_, err = conn.Exec(ctx, `DELETE FROM documents WHERE name LIKE 'optimizer_count/%/groq/llama-3.1-8b-instant'`)
				conn.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
			}
			// The first request of the model is not counted (a paid
			// count waits for a success, issue 46): the second is.
			send(first)
			before := send(first)
			if n := calibrations(first.m.Store()); n != 2 || before.Usage.OptimizerTokens <= 0 {
				t.Fatalf("first run: %d calibration requests, share %d tokens; want 2 and a share", n, before.Usage.OptimizerTokens)
			}
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := first.m.Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			if err := first.m.Close(); err != nil {
				t.Fatal(err)
			}

			second := start()
			after := send(second)
			if n := calibrations(second.m.Store()); n != 2 {
				t.Errorf("after a restart: %d calibration requests in all, want still 2 (the kept count)", n)
			}
			if after.Usage.OptimizerTokens != before.Usage.OptimizerTokens {
				t.Errorf("after a restart the share is %d tokens, before %d", after.Usage.OptimizerTokens, before.Usage.OptimizerTokens)
			}
		})
	}
}
