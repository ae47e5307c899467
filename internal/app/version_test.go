package app

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/gwlabs/gateway", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-25T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := describeBuild(bi), "gateway v1.2.3 revision abc123+dirty committed 2026-11-25T10:00:00Z go1.26.8"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	bare := &debug.BuildInfo{GoVersion: "go1.26.8"}
	if got := describeBuild(bare); !strings.Contains(got, "(devel)") || !strings.Contains(got, "revision unknown") {
		t.Fatalf("got %q", got)
	}
}

func TestReadBuild(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-25T10:00:00Z"}, {Key: "vcs.modified", Value: "false"}}}
	got := readBuild(bi)
	if got.Version != "v1.2.3" || got.Revision != "abc123" || got.CommitTime != "2026-11-25T10:00:00Z" || got.Modified == nil || *got.Modified || got.GoVersion != "go1.26.8" {
		t.Fatalf("%+v", got)
	}
	if bare := readBuild(&debug.BuildInfo{GoVersion: "go1.26.8"}); bare.Version != "(devel)" || bare.Modified != nil || bare.Revision != "" {
		t.Fatalf("without VCS information: %+v", bare)
	}
}
