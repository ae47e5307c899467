package cli

import (
	"context"
	"io"

	"github.com/gwlabs/gateway/internal/app"
)

// runKeys and runIncidents run "gateway keys ..." and "gateway incidents
// ..." on cfg's store, for the tests written against the commands.
func runKeys(ctx context.Context, cfg app.Config, args []string, w io.Writer) error {
	return Run(ctx, append(append([]string{"keys"}, args...), "--db", cfg.DatabaseURL), w, io.Discard)
}

func runIncidents(ctx context.Context, cfg app.Config, args []string, w io.Writer) error {
	return Run(ctx, append(append([]string{"incidents"}, args...), "--db", cfg.DatabaseURL), w, io.Discard)
}
