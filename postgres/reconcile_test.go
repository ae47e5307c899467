package postgres

import (
	"os"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
)

// TestReconcile runs the reconciliation store tests, the lease race over
// two stores on one schema (two instances).
func TestReconcile(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	var url, schema string
	storetest.Reconcile(t, func(t *testing.T) gw.Store {
		url, schema = testSchema(t)
		return openIn(t, url, schema)
	}, func(t *testing.T) gw.Store { return openIn(t, url, schema) })
}
