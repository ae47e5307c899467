package sqlite

import (
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/storetest"
)

// TestIncarnations: shared mode (holds in the table).
func TestIncarnations(t *testing.T) {
	storetest.Incarnations(t, func(t *testing.T) gw.Store { return open(t) })
}
