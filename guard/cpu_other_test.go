//go:build !linux

package guard

import "time"

// threadCPU is not measured here.
func threadCPU() (time.Duration, bool) { return 0, false }
