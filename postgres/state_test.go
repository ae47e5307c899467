package postgres

import (
	"os"
	"testing"

	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/storetest"
)

var _ convstate.Store = (*DB)(nil)

func TestState(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	storetest.RunState(t, func(t *testing.T) convstate.Store { return open(t) })
}
