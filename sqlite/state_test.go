package sqlite

import (
	"testing"

	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/storetest"
)

var _ convstate.Store = (*DB)(nil)

func TestState(t *testing.T) {
	storetest.RunState(t, func(t *testing.T) convstate.Store { return open(t) })
}
