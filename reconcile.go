package gw

import (
	"context"
	"time"
)

// Reconciliation checks the ledger against what each vendor reports it
// billed (package reconcile); these are the figures the stores keep for
// it.

// LedgerSum is the ledger's total for one vendor and model over a span
// of time: what the gateway computed the vendor billed.
type LedgerSum struct {
	Vendor   string
	Model    string
	Requests int64
	// Cost is the records' Cost plus their DisputedCost: everything the
	// vendor billed by its own usage report, the optimizer's directive
	// included.
	Cost Money
	// Usage sums the token buckets (InputTokens, CacheReadTokens,
	// CacheWrite5mTokens, CacheWrite1hTokens, OutputTokens,
	// ReasoningTokens, OptimizerTokens); the prompt buckets include the
	// optimizer's tokens, which the vendor bills.
	Usage Usage
}

// The levels of a reconciliation line.
const (
	ReconVendor  = "vendor"  // a vendor-day's cost
	ReconModel   = "model"   // a model-day's cost
	ReconTokens  = "tokens"  // one token class of a model-day
	ReconBalance = "balance" // a prepaid balance's change between two readings
)

// The states of a reconciliation line.
const (
	ReconMatch          = "match"          // within every threshold
	ReconDrift          = "drift"          // beyond its alert threshold (Alert says which)
	ReconUnreconcilable = "unreconcilable" // no report to compare with (no report, no admin credentials)
	ReconError          = "error"          // the report could not be read this run
)

// The alerts a reconciliation line may raise.
const (
	AlertVendorDrift     = "vendor_day_drift"  // a vendor-day beyond 2% and $1
	AlertModelDrift      = "model_day_drift"   // a model-day beyond 5% and $0.50
	AlertTokenDrift      = "token_drift"       // a token class beyond 0.5%
	AlertPriceStale      = "price_table_stale" // tokens match, cost beyond 2%: our rate card is out of date
	AlertUnreconcilable  = "unreconcilable"    // traffic on a vendor the gateway cannot check
	AlertBalanceDrift    = "balance_drift"     // a prepaid balance fell by more or less than the ledger's cost, beyond 2% and $1
	AlertReportError     = "report_error"      // the vendor's report could not be read
	AlertGenerationDrift = "generation_drift"  // an OpenRouter generation cost other than what the gateway charged
)

// ReconLine is one compared figure of a reconciliation: the ledger's
// and the vendor's, their drift and the alert it raises.
type ReconLine struct {
	Vendor string
	Day    time.Time // 00:00 UTC
	Level  string    // ReconVendor, ReconModel, ReconTokens, ReconBalance
	Model  string    // "" at the vendor and balance levels
	// VendorKey is the vendor's key id where its report groups by key.
	VendorKey string
	// Class is the token class (reconcile.TokensInput...) of a tokens
	// line, "" otherwise.
	Class string
	// Ledger and Reported are micro-cents (Money) on the vendor, model
	// and balance levels, token counts on the tokens level.
	Ledger   int64
	Reported int64
	// DriftPPM is (Ledger - Reported) / max(Ledger, Reported) in parts
	// per million (0 when both are 0).
	DriftPPM int64
	Status   string // ReconMatch, ReconDrift, ReconUnreconcilable, ReconError
	Alert    string // "" or one of the Alert constants
	// OurPrice and ImpliedPrice are micro-cents per million tokens of a
	// price_table_stale line: the ledger's cost and the vendor's over the
	// model-day's tokens.
	OurPrice     Money
	ImpliedPrice Money
	// Final is true for the run two days after the day, false for the
	// hourly provisional runs.
	Final     bool
	CheckedAt time.Time
	Note      string
}

// ReconFilter selects reconciliation lines, newest day first. Zero
// fields do not filter.
type ReconFilter struct {
	Vendor     string
	Since      time.Time // days from
	Until      time.Time // days before
	AlertsOnly bool
	Limit      int // default 1000
}

// BalanceReading is one reading of a prepaid vendor balance.
type BalanceReading struct {
	Vendor  string
	At      time.Time
	Balance Money
}

// The states of an adjustment.
const (
	AdjustmentPending   = "pending"   // waits for the operator
	AdjustmentApproved  = "approved"  // the operator accepts the vendor's figure
	AdjustmentDismissed = "dismissed" // the operator keeps the gateway's figure
	AdjustmentMatched   = "matched"   // checked, within a micro-cent: nothing to review
)

// GenerationSum sums the checked generations of a span.
type GenerationSum struct {
	Checked     int64 // generations checked
	Adjustments int64 // of which differing by more than a micro-cent
	Ledger      Money // the records' Cost
	Reported    Money // the vendor's generation costs
}

// Adjustment is a request whose vendor's own per-generation cost differs
// from the cost the gateway charged on: a row for the operator to
// review. Nothing is ever re-billed to the customer by it.
type Adjustment struct {
	RequestID    string
	AccountID    string
	Vendor       string
	Model        string
	GenerationID string // the vendor's response id
	Ledger       Money  // the record's Cost
	Reported     Money  // the vendor's generation cost
	Charge       Money  // what the customer was charged
	Status       string
	CreatedAt    time.Time // the request's time (its record's CreatedAt)
	DecidedAt    time.Time
	DecidedBy    string
}

// ReconcileStore keeps what reconciliation reads and writes. Both
// stores implement it (found by type assertion on a Store).
//
// LedgerSums sums the records of vendor ("" for all) created in
// [since, until) per vendor and model.
//
// TakeLease takes or renews the named lease for holder until now+ttl;
// it reports false, changing nothing, while another holder's lease runs.
// Any number of instances may call it at once: at most one holds it.
// DropLease gives it up (a lease held by another is left alone).
//
// SaveRecon replaces every line of the vendor-day with lines, in one
// transaction.
//
// AddAdjustment stores a checked generation once (a request already
// there is left as it is); UncheckedRecords lists the vendor's records
// in [since, until) with a vendor response id and no adjustment yet;
// DecideAdjustment moves a pending adjustment to approved or dismissed
// (ErrNotFound when there is no pending one by that id).
type ReconcileStore interface {
	LedgerSums(ctx context.Context, vendor string, since, until time.Time) ([]LedgerSum, error)
	TakeLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	DropLease(ctx context.Context, name, holder string) error
	SaveRecon(ctx context.Context, vendor string, day time.Time, lines []ReconLine) error
	Recon(ctx context.Context, f ReconFilter) ([]ReconLine, error)
	AddBalanceReading(ctx context.Context, b BalanceReading) error
	// BalanceReadings lists the vendor's readings, newest first.
	BalanceReadings(ctx context.Context, vendor string, limit int) ([]BalanceReading, error)
	AddAdjustment(ctx context.Context, a Adjustment) error
	UncheckedRecords(ctx context.Context, vendor string, since, until time.Time, limit int) ([]Record, error)
	// GenerationSums sums the checks of the vendor's requests made in
	// [since, until).
	GenerationSums(ctx context.Context, vendor string, since, until time.Time) (GenerationSum, error)
	// Adjustments lists adjustments in status ("" for all but matched),
	// newest first.
	Adjustments(ctx context.Context, status string, limit int) ([]Adjustment, error)
	DecideAdjustment(ctx context.Context, requestID, status, by string, at time.Time) error
}
