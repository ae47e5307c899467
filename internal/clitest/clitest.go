// Package clitest is what the command line's tests (internal/cli) and the
// end-to-end tests (e2e) share: a command line run as a shell sees it, in
// an environment with no settings, and its JSON read back. It sits below
// the command line (the command to run is passed in), so that the command
// line's own tests can use it too.
package clitest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/internal/app"
)

// Result is one command line's outcome as a shell sees it.
type Result struct {
	Stdout, Stderr string
	Status         int
}

// Command runs one command line and returns the process's exit status
// (cli.Command).
type Command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Env empties, for the rest of the test, every setting the configuration
// reads: the GATEWAY_* variables, the configuration file and the admin
// API's URL.
func Env(t testing.TB) {
	t.Helper()
	for _, name := range app.SettingNames() {
		t.Setenv(name, "")
	}
	t.Setenv("GATEWAY_CONFIG", "")
	t.Setenv("GATEWAY_ADMIN_URL", "")
}

// Run runs args with cmd as the process would.
func Run(t testing.TB, cmd Command, args ...string) Result {
	t.Helper()
	var out, errb strings.Builder
	status := cmd(t.Context(), args, &out, &errb)
	return Result{out.String(), errb.String(), status}
}

// List is a listing command's JSON document ({"data": [...]}).
type List[T any] struct {
	Data []T `json:"data"`
}

// OneJSON decodes s as exactly one JSON document: nothing before or
// after it.
func OneJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON document")
	}
	return nil
}
