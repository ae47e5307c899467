package sqlite

import (
	"testing"

	"github.com/gwlabs/gateway/storetest"
)

func TestCountSweep(t *testing.T) {
	storetest.RunCountSweep(t, func(t *testing.T) storetest.CountSweepStore { return open(t) })
}
