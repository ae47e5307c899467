package gw

import (
	"strings"
	"time"
)

// Principal is the authenticated caller: the key and its account, with the
// key's own rate limits (zero: the configured defaults).
type Principal struct {
	KeyID       string
	AccountID   string
	AccountName string
	RPM         int64
	TPM         int64
	// OptimizeOff turns the optimization layer off for this key.
	OptimizeOff bool
	// Models, when not empty, are the only models the key may call
	// (see ModelAllowed).
	Models []string
	// EndsAt, when not zero, is when the key stops working (an expiry,
	// or a rotated key's grace).
	EndsAt time.Time
	// KeyBudget and AccountBudget are the key's and its account's spend
	// caps (zero: none); the proxy puts them on the request's hold.
	KeyBudget     Budget
	AccountBudget Budget
}

// ModelAllowed reports whether a key whose allow list is models may call
// vendor/model. An empty list allows every model; an entry is a prefixed
// model id ("openai/gpt-6-sol", compared without regard to case), a
// vendor's every model ("openai/*"), or a prefix ending in "*"
// ("anthropic/claude-sonnet-*").
func ModelAllowed(models []string, vendor, model string) bool {
	if len(models) == 0 {
		return true
	}
	id := strings.ToLower(vendor + "/" + model)
	for _, m := range models {
		m = strings.ToLower(m)
		if m == id || strings.HasSuffix(m, "*") && strings.HasPrefix(id, strings.TrimSuffix(m, "*")) {
			return true
		}
	}
	return false
}

// JoinModels and SplitModels store an allow list as one text column.
func JoinModels(models []string) string { return strings.Join(models, ",") }

// SplitModels reads a stored allow list.
func SplitModels(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Account holds a prepaid balance and owns keys.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Key is an API key's stored form: never the secret, only its hash (kept
// by the store) and a short hint for display ("gwk_AbCd…").
//
// RevokedAt in the future is a scheduled end: the key works until then (a
// key created with an expiry, or the old secret of a rotated key during
// its grace period).
type Key struct {
	ID          string
	AccountID   string
	AccountName string
	Name        string // the operator's label, may be empty
	Hint        string
	CreatedAt   time.Time
	RevokedAt   *time.Time
	RPM         int64
	TPM         int64
	// OptimizeOff turns the optimization layer off for this key.
	OptimizeOff bool
	// Models is the key's model allow list (empty: every model).
	Models []string
	// Budget is the key's spend cap (zero: none).
	Budget Budget
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

// Live reports whether the key works at now: never revoked, or its
// scheduled end is still ahead.
func (k *Key) Live(now time.Time) bool { return k.RevokedAt == nil || k.RevokedAt.After(now) }

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

// KeyUsage is what a key was used for, from the request records.
type KeyUsage struct {
	Requests int64
	Spend    Money
	LastUsed time.Time // zero: never used
}
