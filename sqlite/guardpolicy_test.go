package sqlite

import (
	"testing"

	"github.com/gwlabs/gateway/storetest"
)

func TestGuardStore(t *testing.T) { storetest.Guard(t, open(t)) }
