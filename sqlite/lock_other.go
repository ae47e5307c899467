//go:build !unix

package sqlite

// holdsLock is not enforced on systems without flock: there, an
// exclusive store relies on being the only process placing holds.
type holdsLock struct{}

func lockHolds(path string, exclusive bool) (*holdsLock, error) { return &holdsLock{}, nil }

func (l *holdsLock) release() error { return nil }
