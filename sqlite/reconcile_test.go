package sqlite

import (
	"path/filepath"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
)

// TestReconcile runs the reconciliation store tests on a file, the lease
// race over two stores opened on it (two instances).
func TestReconcile(t *testing.T) {
	var path string
	storetest.Reconcile(t, func(t *testing.T) gw.Store {
		path = filepath.Join(t.TempDir(), "gateway.db")
		return open2(t, path)
	}, func(t *testing.T) gw.Store { return open2(t, path) })
}
