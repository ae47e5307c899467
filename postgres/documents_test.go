package postgres

import (
	"os"
	"testing"

	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/storetest"
)

var _ ratecard.ListStore = (*DB)(nil)

func TestDocuments(t *testing.T) {
	if os.Getenv(urlEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests", urlEnv)
	}
	storetest.RunDocuments(t, func(t *testing.T) ratecard.ListStore { return open(t) })
}
