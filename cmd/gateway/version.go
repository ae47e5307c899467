package main

import (
	"runtime/debug"
	"strings"
)

// versionString describes the binary: the module version ("(devel)" for a
// build from a checkout), the VCS revision and time it was built from, a
// "+dirty" mark when the work tree had changes, and the Go version.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "gateway (no build information)"
	}
	return describeBuild(bi)
}

func describeBuild(bi *debug.BuildInfo) string {
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	parts := []string{"gateway", v}
	if rev != "" {
		parts = append(parts, "revision "+rev+dirty)
	} else {
		parts = append(parts, "revision unknown (built without VCS information)")
	}
	if at != "" {
		parts = append(parts, "committed "+at)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, " ")
}
