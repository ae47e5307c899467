package postgres

import (
	"os"
	"testing"

	"github.com/gwlabs/gateway/storetest"
)

func TestCountSweep(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	storetest.RunCountSweep(t, func(t *testing.T) storetest.CountSweepStore { return open(t) })
}
