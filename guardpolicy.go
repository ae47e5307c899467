package gw

import (
	"context"
	"time"
)

// GuardPolicy is how the guard treats the requests of one key or one
// account. Zero fields take the gateway's defaults: Mode "block", Scope
// "all", the guard's thresholds.
type GuardPolicy struct {
	// Mode is "block" (a flagged request is refused), "monitor" (it is
	// recorded as an incident and goes through) or "off" (not checked).
	Mode string
	// Scope is which text is scored: "user" (user text only), "tools"
	// (user text and tool results) or "all" (also assistant turns).
	// System text is never scored.
	Scope string
	// Blocking thresholds per role; 0: the guard's.
	UserThreshold      float64
	ToolThreshold      float64
	AssistantThreshold float64
}

// Guard policy modes.
const (
	GuardBlock   = "block"
	GuardMonitor = "monitor"
	GuardOff     = "off"
)

// Incident review verdicts.
const (
	ReviewFalsePositive = "false-positive"
	ReviewConfirmed     = "confirmed"
)

// IncidentReview is support's decision on an incident.
type IncidentReview struct {
	IncidentID string
	Verdict    string // ReviewFalsePositive or ReviewConfirmed
	Note       string
	ReviewedAt time.Time
}

// IncidentText is the flagged text of an incident, kept for review and
// export: its normalised hash (the allow list's key) and the text itself
// (bounded).
type IncidentText struct {
	IncidentID string
	AccountID  string
	Hash       [32]byte
	Text       string
}

// ReviewedIncident is an incident with its review and text, for export.
type ReviewedIncident struct {
	Incident
	Review IncidentReview
	Text   string
}

// GuardStore is part of Store (a consumer that needs only this asks for
// it alone): per-key and
// per-account guard policies, the flagged text of incidents, their
// reviews, and each account's allow list of reviewed false positives.
type GuardStore interface {
	// SetGuardPolicy stores the policy of a key ("key", id) or an
	// account ("account", id), replacing any; an unknown key or account
	// is ErrNotFound.
	SetGuardPolicy(ctx context.Context, subject, id string, p GuardPolicy) error
	// GuardPolicies returns the key's and the account's policies, nil
	// where none is set.
	GuardPolicies(ctx context.Context, keyID, accountID string) (key, account *GuardPolicy, err error)
	// SetIncidentText stores the flagged text of an incident.
	SetIncidentText(ctx context.Context, t IncidentText) error
	// ReviewIncident records a review (replacing an earlier one). A
	// false positive adds the incident's text hash to its account's
	// allow list; a confirmed incident removes it. An unknown incident
	// is ErrNotFound.
	ReviewIncident(ctx context.Context, r IncidentReview) error
	// IncidentReviews returns the reviews of the given incidents, by id.
	IncidentReviews(ctx context.Context, ids []string) (map[string]IncidentReview, error)
	// ReviewedIncidents returns every reviewed incident, oldest review
	// first, with its flagged text (the excerpt when none was kept).
	ReviewedIncidents(ctx context.Context) ([]ReviewedIncident, error)
	// GuardAllowed reports whether the text hash is on the account's
	// allow list.
	GuardAllowed(ctx context.Context, accountID string, hash [32]byte) (bool, error)
}

// EffectiveGuardPolicy is the policy a key runs under: the key's set
// fields over the account's over the default (block, scope all, the
// guard's thresholds). Either may be nil.
func EffectiveGuardPolicy(key, account *GuardPolicy) GuardPolicy {
	return GuardPolicy{Mode: GuardBlock, Scope: "all"}.With(account).With(key)
}

// With returns p with o's set fields laid over it (a mode, a scope, a
// threshold above 0); a nil o changes nothing.
func (p GuardPolicy) With(o *GuardPolicy) GuardPolicy {
	if o == nil {
		return p
	}
	if o.Mode != "" {
		p.Mode = o.Mode
	}
	if o.Scope != "" {
		p.Scope = o.Scope
	}
	if o.UserThreshold > 0 {
		p.UserThreshold = o.UserThreshold
	}
	if o.ToolThreshold > 0 {
		p.ToolThreshold = o.ToolThreshold
	}
	if o.AssistantThreshold > 0 {
		p.AssistantThreshold = o.AssistantThreshold
	}
	return p
}
