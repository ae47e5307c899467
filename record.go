package gw

import "time"

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
	// VendorResponseID is the vendor's id of its answer (OpenRouter's
	// generation id), "" when it sent none: reconciliation looks the
	// vendor's own cost of the request up by it.
	VendorResponseID string
}

// RecordFilter selects log rows, newest first. Zero fields do not filter.
type RecordFilter struct {
	AccountID string
	// Endpoint selects one endpoint's records ("mcp": the tool calls).
	Endpoint Shape
	KeyID    string
	Model    string
	Vendor   string
	Status   int
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

// NoteOperatorLoss marks a record whose charge the account could not
// cover at its settle; Record.Loss says how much.
const NoteOperatorLoss = "operator_loss"

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
