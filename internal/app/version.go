package app

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// buildTime is when the binary was built, stamped by a release build
// (-ldflags "-X main.buildTime=2026-11-26T10:00:00Z" in cmd/gateway,
// handed to Stamp by cli.Execute); empty otherwise.
var buildTime string

// version is the release's version, stamped by scripts/build (-ldflags
// "-X main.version=v1.2.0" in cmd/gateway, handed to Stamp by
// cli.Execute); empty otherwise, and then the module's version from the
// build information is shown ("(devel)" in a checkout).
var version string

// BuildInfo is version --json: what the binary is and was built from.
type BuildInfo struct {
	Version    string `json:"version"`               // the module version, "(devel)" from a checkout
	Revision   string `json:"revision,omitempty"`    // the VCS revision
	Modified   *bool  `json:"modified,omitempty"`    // the work tree had changes (absent: unknown)
	CommitTime string `json:"commit_time,omitempty"` // the revision's commit time
	BuildTime  string `json:"build_time,omitempty"`  // when built, if stamped
	GoVersion  string `json:"go_version"`
}

// CurrentBuild is this binary's BuildInfo.
func CurrentBuild() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: "(unknown)", GoVersion: runtime.Version(), BuildTime: buildTime}
	}
	out := readBuild(bi)
	out.BuildTime = buildTime
	return out
}

func readBuild(bi *debug.BuildInfo) BuildInfo {
	out := BuildInfo{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if version != "" {
		out.Version = version
	}
	if out.Version == "" {
		out.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Revision = s.Value
		case "vcs.time":
			out.CommitTime = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			out.Modified = &m
		}
	}
	return out
}

// VersionString describes the binary: the module version ("(devel)" for a
// build from a checkout), the VCS revision and time it was built from, a
// "+dirty" mark when the work tree had changes, and the Go version.
func VersionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "gateway (no build information)"
	}
	s := describeBuild(bi)
	if buildTime != "" {
		s += " built " + buildTime
	}
	return s
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
	if version != "" {
		v = version
	}
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

// openAPIVersion is the OpenAPI document's info.version: the release's
// version (stamped by scripts/build from VERSION, or the module's), else
// for a build from a checkout 0.0.0-devel with its revision, else ""
// (the document's own, 0.0.0-devel).
func openAPIVersion() string {
	b := CurrentBuild()
	switch {
	case b.Version != "" && b.Version != "(devel)" && b.Version != "(unknown)":
		return b.Version
	case b.Revision != "":
		return "0.0.0-devel+" + b.Revision[:min(12, len(b.Revision))]
	}
	return ""
}
