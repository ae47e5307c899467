package sqlite

import (
	"context"

	gw "github.com/gwlabs/gateway"
)

// The admin API's reads and writes beyond gw.Store.

// TopUpRef credits amount with the operator's reference and note (see
// sqlstore.Queries.TopUpRef); a credit makes the next hold on the account
// load its balance again.
func (db *DB) TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (gw.LedgerEntry, bool, error) {
	e, duplicate, err := db.queries.TopUpRef(ctx, accountID, amount, reference, note)
	if err == nil && !duplicate {
		db.toppedUp(accountID)
	}
	return e, duplicate, err
}
