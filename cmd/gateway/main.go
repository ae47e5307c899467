// Command gateway runs the model gateway and administers its store; the
// command line is internal/cli, the configuration and wiring internal/app
// (see their package documentation).
package main

import (
	"os"

	"github.com/gwlabs/gateway/internal/cli"
)

// Stamped by scripts/build: version (-ldflags "-X main.version=v1.2.0")
// and buildTime (-X main.buildTime=2026-11-26T10:00:00Z); empty otherwise.
var version, buildTime string

func main() {
	os.Exit(cli.Execute(version, buildTime))
}
