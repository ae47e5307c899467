package sqlite

import (
	"path/filepath"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
)

// TestRuns runs the run tests on a file, the concurrent one over two
// stores opened on it (two instances), and on an exclusive store.
func TestRuns(t *testing.T) {
	var path string
	storetest.Runs(t, func(t *testing.T) gw.Store {
		path = filepath.Join(t.TempDir(), "gateway.db")
		return open2(t, path)
	}, func(t *testing.T) gw.Store { return open2(t, path) })
	t.Run("Exclusive", func(t *testing.T) {
		storetest.Runs(t, func(t *testing.T) gw.Store { return openWith(t, Options{Exclusive: true}) }, nil)
	})
}
