package cli

import (
	"testing"

	"go.uber.org/goleak"
)

// The commands' tests start gateways and stores too: none may leave a
// goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	)
}
