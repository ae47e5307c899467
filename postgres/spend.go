package postgres

import (
	"context"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Spend returns the sum of the account's charges on requests made at or
// after since (the records_account_created index serves it).
func (db *DB) Spend(ctx context.Context, accountID string, since time.Time) (gw.Money, error) {
	var sum int64
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(charge), 0)::bigint FROM records WHERE account_id = $1 AND created_at >= $2`,
		accountID, since).Scan(&sum); err != nil {
		return 0, fmt.Errorf("spend: %w", err)
	}
	return gw.Money(sum), nil
}
