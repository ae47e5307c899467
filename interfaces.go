package gw

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Call is one upstream request, already in the vendor's native shape.
type Call struct {
	RequestID string
	Model     string // vendor model id, prefix stripped
	Stream    bool
	Body      []byte
	// Endpoint is the shape of Body when it differs from the provider's
	// own (a native OpenAI Responses request, ShapeR, on a provider that
	// is a ResponsesNative); "" means the provider's shape.
	Endpoint Shape
	// Header holds the caller's headers; each provider forwards only
	// those meant for it (anthropic-version and anthropic-beta to
	// Anthropic, OpenAI-Organization and OpenAI-Project to OpenAI).
	Header http.Header
	// Received is when the caller's request arrived: retries start only
	// within the retry budget counted from it (zero: from the call).
	Received time.Time
}

// Provider is one upstream vendor.
//
// Send performs the call and returns the vendor's 2xx answer with its body
// unread, or an *Error mapped from the vendor's failure: invalid_request,
// not_found, request_too_large, rate_limited (with RetryAfter),
// overloaded, upstream_error, upstream_timeout or vendor_unavailable.
// Send retries only before it returns an answer. Cancelling ctx aborts the
// call and, after Send returned, the body.
//
// PassThrough prepares a caller body of the provider's own shape for
// Send: it rewrites only "model" and, on a stream whose caller did not ask
// for usage, asks the vendor for it; hideUsage then says the usage-only
// chunk must be held back from the caller. (The Anthropic adapter also adds
// prompt-cache breakpoints when the caller set none; see its cache.go.)
type Provider interface {
	Name() string
	Shape() Shape
	Send(ctx context.Context, c *Call) (*Upstream, error)
	PassThrough(body []byte, model string, stream bool) (out []byte, hideUsage bool, err error)
}

// ResponsesNative is an optional ability of a Provider (found by type
// assertion) whose vendor serves the OpenAI Responses API (shape R)
// itself. SpeaksResponses says whether this vendor does (one adapter
// type serves several vendors); PassThroughResponses prepares a caller's
// R body for Send (with Call.Endpoint ShapeR), rewriting only "model".
type ResponsesNative interface {
	SpeaksResponses() bool
	PassThroughResponses(body []byte, model string) ([]byte, error)
}

// SpeaksNatively reports whether p serves the endpoint shape itself:
// its own shape, or R on a ResponsesNative vendor that speaks it.
func SpeaksNatively(p Provider, endpoint Shape) bool {
	if p.Shape() == endpoint {
		return true
	}
	if endpoint == ShapeR {
		if rn, ok := p.(ResponsesNative); ok {
			return rn.SpeaksResponses()
		}
	}
	return false
}

// Normalizer is an optional ability of a Provider (found by type
// assertion) whose native answers deviate from its own shape in ways that
// break the official SDKs' helpers. On native routes the server passes
// the vendor's answer through it: a whole body through NormalizeBody, and
// each stream event's data through the function NormalizeStream returns
// for that stream (nil: the stream needs none). Both change only the
// deviating members and return their input itself when there is nothing
// to fix.
type Normalizer interface {
	NormalizeBody(body []byte) []byte
	NormalizeStream() func(data []byte) []byte
}

// Codec translates between the canonical types and a vendor's native
// shape, for mapped routes (the caller's shape differs from the vendor's).
// Every Provider implements it.
//
// EncodeRequest returns an *Error with CodeInvalidRequest naming the field
// when the request asks for something the vendor cannot honour.
// DecodeStream takes ownership of body and closes it on Close.
type Codec interface {
	EncodeRequest(r *Request) ([]byte, error)
	DecodeResponse(body []byte) (*Response, error)
	DecodeStream(body io.ReadCloser) EventStream
}

// Balance is an account's money. Balance = TopUps - Charged, always, to
// the unit; Available = Balance - Held.
type Balance struct {
	TopUps    Money
	Charged   Money
	Held      Money
	Balance   Money
	Available Money
}

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
}

// Record is one request's row in the log and usage ledger: metadata only,
// never prompt or response content.
type Record struct {
	RequestID string
	AccountID string
	KeyID     string
	Endpoint  Shape
	Vendor    string
	Model     string
	Stream    bool
	Status    int   // HTTP status sent to the caller
	ErrorCode Code  // empty on success
	Usage     Usage // as reported (or counted) for this request
	// Cost is the vendor's cost of the request: every token the vendor
	// bills, the optimizer's directive included.
	Cost Money
	// Charge is what the account was debited: zero unless the request
	// succeeded. Charge(Cost) - DirectiveShare = Charge + Loss.
	Charge Money
	// DirectiveShare is the part of Charge(Cost) that the optimizer's
	// directive accounts for: the caller does not pay it.
	DirectiveShare Money
	// DisputedCost is the vendor's cost of the prompt tokens it reported
	// beyond the gateway's own upper bound of what it sent (noted
	// "usage_disputed"): not charged, not in Cost, the operator's to
	// take up with the vendor.
	DisputedCost Money
	// Loss is what the request cost beyond what the account could pay
	// at its settle (the hold plus the available balance then): the
	// operator's loss, its reason in Note ("operator_loss: ...").
	Loss      Money
	Latency   time.Duration
	TTFB      time.Duration
	Guard     string // guard verdict: "pass", "flagged:<kind>", "monitor:<kind>", "grey", "grey:pass", "allowed", "off" (no guard, or the policy turned it off), "error"; "" when the request was refused before the guard ran
	Note      string // e.g. "usage_missing", dropped fields
	CreatedAt time.Time
	// UsageClamped: the vendor's usage was beyond what the request
	// allowed and was clamped. Stored
	// as "usage_clamped" in Note; metrics count it.
	UsageClamped bool
	// Attempts are the models tried, in order, when the request had
	// fallbacks or was retried on another model (empty otherwise); the
	// stores keep them in Note ("attempts: ..."). Vendor and Model are
	// the serving attempt's.
	Attempts []Attempt
}

// RecordFilter selects log rows, newest first. Zero fields do not filter.
type RecordFilter struct {
	AccountID string
	KeyID     string
	Model     string
	Vendor    string
	Status    int
	// StatusClass selects a class of statuses: 2 for 2xx, 4 for 4xx, 5
	// for 5xx (0: any).
	StatusClass int
	Since       time.Time
	Until       time.Time
	Limit       int    // default 100
	Before      string // request id cursor: rows strictly older
}

// Incident is a request the guard blocked, kept for support review.
type Incident struct {
	ID        string
	RequestID string
	AccountID string
	KeyID     string
	Kind      string
	Score     float64
	Reason    string
	Excerpt   string // bounded
	CreatedAt time.Time
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
}

// HoldRenewer is implemented by stores whose holds can be kept alive:
// RenewHold moves a live hold's expiry to expiresAt (never earlier). A
// hold already past its expiry, swept or finished is ErrNotFound: its
// money may have been spent by then.
type HoldRenewer interface {
	RenewHold(ctx context.Context, holdID string, expiresAt time.Time) error
}

// AccountIncidents is implemented by stores that list one account's
// incidents from an index (both do): the incidents page of an account
// never scans the other accounts'.
type AccountIncidents interface {
	IncidentsOf(ctx context.Context, accountID string, limit int) ([]Incident, error)
}

// NoteOperatorLoss marks a record whose charge the account could not
// cover at its settle; Record.Loss says how much.
const NoteOperatorLoss = "operator_loss"

// LedgerEntry is one movement of an account's money: a top-up (positive)
// or a request's charge (negative).
type LedgerEntry struct {
	ID        int64 // increasing; the history's cursor
	AccountID string
	Amount    Money
	RequestID string // the charged request, for charges
	Reference string // the operator's reference, for top-ups (unique per account)
	Note      string
	CreatedAt time.Time
}

// JoinNote joins two parts of a record's note with "; ".
func JoinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
