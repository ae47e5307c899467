// Command gateway runs the model gateway and administers its store; the
// commands, configuration and wiring are in internal/app (see its
// package documentation for the command line).
package main

import (
	"os"

	"github.com/gwlabs/gateway/internal/app"
)

// Stamped by scripts/build: version (-ldflags "-X main.version=v1.2.0")
// and buildTime (-X main.buildTime=2026-11-26T10:00:00Z); empty otherwise.
var version, buildTime string

func main() {
	os.Exit(app.Execute(version, buildTime))
}
