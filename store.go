package gw

import (
	"context"
	"time"
)

// Hold reserves money for one request until it settles or is released.
// Its ID is the request id. A hold past ExpiresAt no longer counts against
// the balance and is swept by ExpireHolds.
type Hold struct {
	ID        string
	AccountID string
	KeyID     string
	Amount    Money
	ExpiresAt time.Time
	// At is when the request arrived (its record's CreatedAt): the hold
	// and its charge count toward the budget periods containing it.
	// Zero: the store's clock when the hold is placed.
	At time.Time
	// KeyBudget and AccountBudget are the caps in force (see Budget);
	// PlaceHold refuses a hold that does not fit in one of them with
	// CodeInsufficientBalance and ErrorCodeBudgetExceeded.
	KeyBudget     Budget
	AccountBudget Budget
	// Vendor and Model are the request's target when the hold is placed:
	// the record of a request cut by a crash names them.
	Vendor, Model string
}

// Store persists accounts, keys, balances, holds, the ledger, request
// records and incidents. Implementations: sqlite and postgres; both pass
// storetest.
//
// Lookups of missing rows return an error wrapping ErrNotFound. PlaceHold
// returns *Error with CodeInsufficientBalance when the account's available
// balance is below the hold. Settle is atomic (hold released, charge
// debited, ledger entry and record written together) and durable when it
// returns: a charge the caller was told of survives a crash. Settle never
// debits more than the hold plus the account's available balance at that
// moment (its balance less its other live holds): the rest of r.Charge
// moves to r.Loss, noted "operator_loss", and Settle sets r.Charge and
// r.Loss to what it wrote. Settle and
// Release of an unknown or already-finished hold return ErrNotFound and
// change nothing, so money is never double-counted. Under any concurrency
// the balance never goes below zero.
type Store interface {
	Ping(ctx context.Context) error
	Close() error

	// EnsureAccount returns the account with this name, creating it.
	EnsureAccount(ctx context.Context, name string) (*Account, error)
	AccountByName(ctx context.Context, name string) (*Account, error)
	// CreateKey stores k (ID, AccountID, Hint, limits) with hash, the
	// SHA-256 of the secret key.
	CreateKey(ctx context.Context, k *Key, hash [32]byte) error
	Keys(ctx context.Context) ([]Key, error)
	RevokeKey(ctx context.Context, id string) error
	// KeyByHash returns the principal of a live key; revoked or unknown
	// keys are ErrNotFound.
	KeyByHash(ctx context.Context, hash [32]byte) (*Principal, error)

	TopUp(ctx context.Context, accountID string, amount Money, note string) error
	Balance(ctx context.Context, accountID string) (Balance, error)
	PlaceHold(ctx context.Context, h Hold) error
	Settle(ctx context.Context, holdID string, r *Record) error
	// Release frees the hold; r, when not nil, is logged with no charge.
	Release(ctx context.Context, holdID string, r *Record) error
	ExpireHolds(ctx context.Context, now time.Time) (int, error)
	// Log writes a record for a request that placed no hold.
	Log(ctx context.Context, r *Record) error

	Records(ctx context.Context, f RecordFilter) ([]Record, error)
	Record(ctx context.Context, requestID string) (*Record, error)

	CreateIncident(ctx context.Context, in *Incident) error
	Incidents(ctx context.Context, limit int) ([]Incident, error)
	Incident(ctx context.Context, id string) (*Incident, error)

	// What both stores do beyond the core: keep holds alive, list one
	// account's incidents, keep guard policies and incident reviews, and
	// keep budgets and report their use.
	HoldRenewer
	AccountIncidents
	GuardStore
	BudgetUser
	BudgetSetter
	MCPGrantStore
}

// HoldRenewer is part of Store: a hold can be kept alive:
// RenewHold moves a live hold's expiry to expiresAt (never earlier). A
// hold already past its expiry, swept or finished is ErrNotFound: its
// money may have been spent by then.
type HoldRenewer interface {
	RenewHold(ctx context.Context, holdID string, expiresAt time.Time) error
}

// AccountIncidents is part of Store: one account's incidents are listed
// from an index, so the incidents page of an account never scans the
// other accounts'.
type AccountIncidents interface {
	IncidentsOf(ctx context.Context, accountID string, limit int) ([]Incident, error)
}
