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
			const model = "llama-3.1-8b-instant"
			since := time.Now().Add(-time.Second)
			calls := func(st gw.Store) int {
				t.Helper()
				return len(calibrations(t, st, gw.RecordFilter{Vendor: "groq", Model: model, Since: since, Limit: 1000}))
			}
			send := func(e *env) *gw.Record {
				t.Helper()
				return e.postRecord(t, "/v1/chat/completions", chatBody("groq/"+model, "Say hello.", false, ""))
			}
			first := optimizerEnv(t, dbURL)
			forgetCounts(t, dbURL, "optimizer_count/%/groq/"+model)
			// The first request of the model is not counted (a paid
			// count waits for a success, issue 46): the second is.
			send(first)
			before := send(first)
			if n := calls(first.m.Store()); n != 2 || before.Usage.OptimizerTokens <= 0 {
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

			second := optimizerEnv(t, dbURL)
			after := send(second)
			if n := calls(second.m.Store()); n != 2 {
				t.Errorf("after a restart: %d calibration requests in all, want still 2 (the kept count)", n)
			}
			if after.Usage.OptimizerTokens != before.Usage.OptimizerTokens {
				t.Errorf("after a restart the share is %d tokens, before %d", after.Usage.OptimizerTokens, before.Usage.OptimizerTokens)
			}
		})
	}
}

// optimizerEnv is a gateway with the optimizer on the store at dbURL,
// without rate limits.
func optimizerEnv(t *testing.T, dbURL string) *env {
	return newEnv(t, withOptimizer, func(c *app.Config) { c.DatabaseURL = dbURL; c.RPM, c.TPM = 0, 0 })
}

// forgetCounts deletes the kept directive counts whose names are LIKE
// pattern from a PostgreSQL test database, which is shared and may keep
// one from an earlier run (once the store is migrated); a SQLite store
// starts without any.
func forgetCounts(t *testing.T, dbURL, pattern string) {
	t.Helper()
	if !strings.HasPrefix(dbURL, "postgres") {
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM documents WHERE name LIKE $1`, pattern); err != nil {
		t.Fatal(err)
	}
}

// calibrations are the optimizer's calibration requests among the
// records f selects.
func calibrations(t *testing.T, st gw.Store, f gw.RecordFilter) []gw.Record {
	t.Helper()
	recs, err := st.Records(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var out []gw.Record
	for _, r := range recs {
		if strings.Contains(r.Note, calibrate.NoteOptimizerCalibration) {
			out = append(out, r)
		}
	}
	return out
}

// postRecord posts body to path with the env's key, fails the test
// unless the answer is 200, and returns the request's record.
func (e *env) postRecord(t *testing.T, path string, body []byte, hdr ...string) *gw.Record {
	t.Helper()
	resp := e.post(path, e.key, body, hdr...)
	if b := readAll(t, resp.Body); resp.StatusCode != 200 {
		t.Fatalf("%s: status %d: %s", path, resp.StatusCode, b)
	}
	return waitRecord(t, e.m.Store(), resp.Header.Get("X-Gateway-Request-Id"))
}
