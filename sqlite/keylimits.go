package sqlite

import (
	"context"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// SetKeyLimits replaces the key's rate limits (0: the gateway's
// defaults). An unknown key is ErrNotFound.
func (db *DB) SetKeyLimits(ctx context.Context, id string, lim gw.Limit) error {
	res, err := db.w.ExecContext(ctx, `UPDATE api_keys SET rpm = ?, tpm = ? WHERE id = ?`, lim.RPM, lim.TPM, id)
	if err != nil {
		return fmt.Errorf("set key limits: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set key limits: %w", err)
	} else if n == 0 {
		return fmt.Errorf("set key limits %q: %w", id, gw.ErrNotFound)
	}
	return nil
}
