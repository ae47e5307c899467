//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// holdsLock is the lock that keeps an exclusive store (holds in memory)
// and stores keeping holds in the table from placing holds on one file
// together: an advisory lock on the file's "-holds" companion, taken
// exclusively by an exclusive store when it opens and shared by any other
// store at its first hold. The kernel drops it when the process dies.
type holdsLock struct{ f *os.File }

// errHoldsLocked says another store places holds on the file the other way.
var errHoldsLocked = errors.New("another process places holds on this database file")

func lockHolds(path string, exclusive bool) (*holdsLock, error) {
	f, err := os.OpenFile(path+"-holds", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("holds lock: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if exclusive {
				return nil, fmt.Errorf("%w (a gateway that serves it alone takes it exclusively; to share one file between processes, set GATEWAY_SQLITE_SHARED=on for all of them)", errHoldsLocked)
			}
			return nil, fmt.Errorf("%w: a gateway serves it alone (GATEWAY_SQLITE_SHARED is off there)", errHoldsLocked)
		}
		return nil, fmt.Errorf("holds lock: %w", err)
	}
	return &holdsLock{f: f}, nil
}

func (l *holdsLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close() // closing the last descriptor drops the lock
}
