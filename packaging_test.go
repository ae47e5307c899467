package gw_test

import (
	"os"
	"strings"
	"testing"
)

// The container recipe, the release build and CI build the binary through
// one script, so the build line CI runs is the one that ships; the line
// itself is static and path-free.
func TestOneBuildLine(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	build := read("scripts/build")
	for _, want := range []string{"CGO_ENABLED=0", "go build -trimpath", "-X main.version=", "./cmd/gateway"} {
		if !strings.Contains(build, want) {
			t.Errorf("scripts/build lacks %q", want)
		}
	}
	for _, p := range []string{"Dockerfile", "scripts/release", ".ci/run"} {
		s := read(p)
		if !strings.Contains(s, "scripts/build ") {
			t.Errorf("%s does not build through scripts/build", p)
		}
		if strings.Contains(s, "go build") {
			t.Errorf("%s has a go build line of its own", p)
		}
	}
	for _, target := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"} {
		if !strings.Contains(read("scripts/release"), target) {
			t.Errorf("scripts/release does not build %s", target)
		}
	}
	if !strings.HasPrefix(read("LICENSE"), "Copyright 2026 The gateway authors\n") || !strings.Contains(read("LICENSE"), "Apache License\n                           Version 2.0") {
		t.Error("LICENSE is not the Apache License 2.0 with the project's copyright line")
	}
}
