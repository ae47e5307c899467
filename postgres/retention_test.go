package postgres

import (
	"os"
	"testing"

	"github.com/gwlabs/gateway/storetest"
)

func TestRefusedRetention(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	storetest.RefusedRetention(t, open(t))
}
