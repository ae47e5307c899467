package postgres

import (
	"context"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// SetKeyLimits replaces the key's rate limits (0: the gateway's
// defaults). An unknown key is ErrNotFound.
func (db *DB) SetKeyLimits(ctx context.Context, id string, lim gw.Limit) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET rpm = $2, tpm = $3 WHERE id = $1`, id, lim.RPM, lim.TPM)
	if err != nil {
		return fmt.Errorf("set key limits: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set key limits %q: %w", id, gw.ErrNotFound)
	}
	return nil
}
