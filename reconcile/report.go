// Package reconcile checks the gateway's own ledger against what each
// vendor reports it was charged, per vendor x UTC day x model (x vendor
// key where the report has one), and names where and why they differ.
//
// This file is the contract between the two halves of the package: the
// vendor readers (package reconcile/vendorreport, one Source per vendor
// with an admin report) and the job that compares (this package).
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Token classes a report row may carry. A class a vendor's report does
// not break out is absent from Row.Tokens (never 0).
const (
	TokensInput      = "input"       // plain prompt tokens
	TokensCacheRead  = "cache_read"  // prompt tokens served from a cache
	TokensCacheWrite = "cache_write" // prompt tokens written to a cache (any TTL)
	TokensOutput     = "output"      // generated tokens, reasoning included
	TokensRequests   = "requests"    // request count, where reported
)

// Row is one line of a vendor's report for one UTC day.
type Row struct {
	Model string // the vendor's model name, as the ledger spells it after canonicalising
	// VendorKey is the vendor's id of the inference key that made the
	// calls ("" when the report does not group by key).
	VendorKey string
	// Cost is what the vendor billed, in micro-units (0 with HasCost
	// false when the report has tokens only).
	Cost    gw.Money
	HasCost bool
	// Tokens by class (the constants above); nil when the report has
	// cost only.
	Tokens map[string]int64
	// LineItem names a cost line the report could not tie to a model
	// (e.g. "web search"), Model "" then.
	LineItem string
}

// Report is a vendor's account of one UTC day.
type Report struct {
	Vendor string
	Day    time.Time // 00:00 UTC of the day
	Rows   []Row
	// Complete is false while the vendor may still add to the day (the
	// provisional runs); a final run wants it true.
	Complete bool
}

// Source reads one vendor's report with the operator's admin
// credentials, which are never used to serve a request and never shown.
type Source interface {
	Vendor() string
	Day(ctx context.Context, day time.Time) (Report, error)
}

// Generations reads OpenRouter's per-generation records: the cost the
// vendor settled for one generation id (ok false while not yet
// available; the caller retries).
type Generations interface {
	GenerationCost(ctx context.Context, id string) (cost gw.Money, ok bool, err error)
}

// Balances reads a prepaid vendor balance (DeepSeek), reconciled as the
// change between two readings against the ledger's cost in between.
type Balances interface {
	Vendor() string
	Balance(ctx context.Context) (gw.Money, error)
}

// ErrNoCredentials is what a Source returns when the operator has not
// configured the admin credentials its report needs: the vendor is then
// "unreconcilable", never matching.
var ErrNoCredentials = errors.New("reconcile: no admin credentials for this vendor's report")

// ErrNoReport is what a Source returns for a vendor that publishes no
// usage or cost report the gateway can read (Groq, Together, Fireworks,
// Mistral, Google): the vendor is "unreconcilable", never matching. It
// wraps ErrNoCredentials, so a caller that tests only for that still
// treats the vendor as unreconcilable.
var ErrNoReport = fmt.Errorf("reconcile: this vendor publishes no report to reconcile against: %w", ErrNoCredentials)
