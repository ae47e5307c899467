package sqlite

import (
	"testing"

	"github.com/gwlabs/gateway/storetest"
)

func TestRefusedRetention(t *testing.T) { storetest.RefusedRetention(t, open(t)) }
