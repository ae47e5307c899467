package sqlite

import (
	"testing"

	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/storetest"
)

var _ ratecard.ListStore = (*DB)(nil)

func TestDocuments(t *testing.T) {
	storetest.RunDocuments(t, func(t *testing.T) ratecard.ListStore { return open(t) })
}
