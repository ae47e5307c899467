// Package admin is the operator's library: accounts, keys, money and
// incidents. Service is implemented twice, by Local (straight on the
// store) and by Client (over the admin HTTP API that Handler serves under
// /admin/v1/), and the gateway's CLI uses either (--server URL) with the
// same output. The types below are the API's JSON shapes.
package admin

import (
	"context"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Service is what an operator can do.
type Service interface {
	CreateAccount(ctx context.Context, name string) (*Account, error)
	Accounts(ctx context.Context) ([]Account, error)
	// Account finds an account by id or, failing that, by name.
	Account(ctx context.Context, idOrName string) (*Account, error)
	TopUp(ctx context.Context, account string, req TopUpRequest) (*TopUpResult, error)
	Ledger(ctx context.Context, account string, before int64, limit int) (*LedgerPage, error)

	CreateKey(ctx context.Context, req KeyRequest) (*CreatedKey, error)
	Keys(ctx context.Context) ([]Key, error)
	RotateKey(ctx context.Context, id string, grace time.Duration) (*CreatedKey, error)
	RevokeKey(ctx context.Context, id string) (*Key, error)
	UpdateKey(ctx context.Context, id string, u KeyUpdate) (*Key, error)
	// Key is one key with its use, spend and effective guard policy.
	Key(ctx context.Context, id string) (*Key, error)
	// UpdateAccount changes an account's settings (its guard policy, the
	// default of its keys).
	UpdateAccount(ctx context.Context, account string, u AccountUpdate) (*Account, error)

	Incidents(ctx context.Context, limit int) ([]Incident, error)
	Incident(ctx context.Context, id string) (*Incident, error)
	// ReviewIncident records support's verdict on an incident: a false
	// positive's text passes next time for its account.
	ReviewIncident(ctx context.Context, id string, r ReviewRequest) (*Incident, error)

	MCPGranter
	RunDefaulter
	MCPServerKeeper
	Reconciler
}

// Account is an account with its money, in exact decimal US dollars.
type Account struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Balance   Balance   `json:"balance"`
	// Guard is the account's own guard policy (its keys' default), on
	// the answer of an update.
	Guard *GuardPolicy `json:"guard,omitempty"`
	// Budgets are the account's spend caps over all its keys (absent:
	// none).
	Budgets *Budgets `json:"budgets,omitempty"`
}

// AccountUpdate changes an account's settings; absent fields are left
// as they are.
type AccountUpdate struct {
	// Guard's set fields replace those of the account's policy.
	Guard *GuardPolicy `json:"guard,omitempty"`
	// DailyBudgetUSD and MonthlyBudgetUSD replace the account's spend
	// caps (decimal US dollars; "0" clears one).
	DailyBudgetUSD   *string `json:"daily_budget_usd,omitempty"`
	MonthlyBudgetUSD *string `json:"monthly_budget_usd,omitempty"`
}

// GuardPolicy is how the guard treats a key's or an account's requests.
// Empty or zero fields take the default (the account's, then block,
// scope all and the guard's thresholds).
type GuardPolicy struct {
	// Mode is "block", "monitor" (record an incident, block nothing) or
	// "off".
	Mode string `json:"mode,omitempty"`
	// Scope is the text scored: "user", "tools" (and tool results) or
	// "all" (and assistant turns).
	Scope string `json:"scope,omitempty"`
	// Blocking thresholds per role, in (0, 1); 0: the guard's.
	UserThreshold      float64 `json:"user_threshold,omitempty"`
	ToolThreshold      float64 `json:"tool_threshold,omitempty"`
	AssistantThreshold float64 `json:"assistant_threshold,omitempty"`
}

func (p *GuardPolicy) gw() gw.GuardPolicy {
	return gw.GuardPolicy{Mode: p.Mode, Scope: p.Scope, UserThreshold: p.UserThreshold, ToolThreshold: p.ToolThreshold, AssistantThreshold: p.AssistantThreshold}
}

func toGuardPolicy(p gw.GuardPolicy) *GuardPolicy {
	return &GuardPolicy{Mode: p.Mode, Scope: p.Scope, UserThreshold: p.UserThreshold, ToolThreshold: p.ToolThreshold, AssistantThreshold: p.AssistantThreshold}
}

// Balance is an account's money: balance = top_ups - charged, available
// = balance - held.
type Balance struct {
	TopUps    string `json:"top_ups_usd"`
	Charged   string `json:"charged_usd"`
	Held      string `json:"held_usd"`
	Balance   string `json:"balance_usd"`
	Available string `json:"available_usd"`
}

func toBalance(b gw.Balance) Balance {
	return Balance{TopUps: b.TopUps.USDString(), Charged: b.Charged.USDString(), Held: b.Held.USDString(),
		Balance: b.Balance.USDString(), Available: b.Available.USDString()}
}

// TopUpRequest credits an account. Reference (an invoice or payment id)
// makes the top-up idempotent: the same reference on the same account is
// counted once.
type TopUpRequest struct {
	AmountUSD string `json:"amount_usd"`
	Reference string `json:"reference,omitempty"`
	Note      string `json:"note,omitempty"`
}

// TopUpResult is the ledger entry written (or, on a repeated reference,
// the first one, with Duplicate true) and the balance after it.
type TopUpResult struct {
	Entry     LedgerEntry `json:"entry"`
	Duplicate bool        `json:"duplicate"`
	Account   Account     `json:"account"`
}

// LedgerEntry is a top-up (positive) or a request's charge (negative).
type LedgerEntry struct {
	ID        int64     `json:"id"`
	AmountUSD string    `json:"amount_usd"`
	RequestID string    `json:"request_id,omitempty"`
	Reference string    `json:"reference,omitempty"`
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func toEntry(e gw.LedgerEntry) LedgerEntry {
	return LedgerEntry{ID: e.ID, AmountUSD: e.Amount.USDString(), RequestID: e.RequestID, Reference: e.Reference, Note: e.Note, CreatedAt: e.CreatedAt}
}

// LedgerPage is a page of an account's history, newest first;
// NextBefore, when not zero, is the cursor of the next (older) page.
type LedgerPage struct {
	Data       []LedgerEntry `json:"data"`
	NextBefore int64         `json:"next_before,omitempty"`
}

// KeyRequest issues a key. Account is the account's id or name. Zero
// limits are the gateway's defaults; ExpiresAt, when set, ends the key.
type KeyRequest struct {
	Account   string     `json:"account"`
	Name      string     `json:"name,omitempty"`
	RPM       int64      `json:"rpm,omitempty"`
	TPM       int64      `json:"tpm,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Optimize is the optimization layer for the key's requests: "on"
	// (default) or "off".
	Optimize string `json:"optimize,omitempty"`
	// Models, when set, are the only models the key may call: prefixed
	// ids ("openai/gpt-6-sol") or patterns ending in "*" ("openai/*").
	Models []string `json:"models,omitempty"`
	// Guard, when set, is the key's own guard policy (over its
	// account's).
	Guard *GuardPolicy `json:"guard,omitempty"`
	// DailyBudgetUSD and MonthlyBudgetUSD, when set, cap the key's
	// spend per UTC day and month (decimal US dollars).
	DailyBudgetUSD   string `json:"daily_budget_usd,omitempty"`
	MonthlyBudgetUSD string `json:"monthly_budget_usd,omitempty"`
}

// KeyUpdate changes a key's settings; empty fields are left as they are.
type KeyUpdate struct {
	Optimize string `json:"optimize,omitempty"` // "on" or "off"
	// Models replaces the allow list when not nil; [] allows every model.
	Models *[]string `json:"models,omitempty"`
	// Guard's set fields replace those of the key's own guard policy.
	Guard *GuardPolicy `json:"guard,omitempty"`
	// DailyBudgetUSD and MonthlyBudgetUSD replace the key's spend caps
	// (decimal US dollars; "0" clears one).
	DailyBudgetUSD   *string `json:"daily_budget_usd,omitempty"`
	MonthlyBudgetUSD *string `json:"monthly_budget_usd,omitempty"`
	// RPM and TPM, when set, replace the key's rate limits (0: the
	// gateway's defaults).
	RPM *int64 `json:"rpm,omitempty"`
	TPM *int64 `json:"tpm,omitempty"`
}

// Key is a key as listed: never its secret. Status is "active",
// "expiring" (it ends at EndsAt: an expiry, or a rotated key's grace) or
// "revoked".
type Key struct {
	ID         string     `json:"id"`
	AccountID  string     `json:"account_id"`
	Account    string     `json:"account"`
	Name       string     `json:"name,omitempty"`
	Hint       string     `json:"hint"`
	RPM        int64      `json:"rpm"`
	TPM        int64      `json:"tpm"`
	CreatedAt  time.Time  `json:"created_at"`
	Status     string     `json:"status"`
	EndsAt     *time.Time `json:"ends_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	Requests   int64      `json:"requests"`
	SpendUSD   string     `json:"spend_usd"`
	Optimize   string     `json:"optimize"`         // "on" or "off"
	Models     []string   `json:"models,omitempty"` // the allow list; absent: every model
	// Guard is the policy the key runs under (its own over its
	// account's over the defaults), on single-key answers.
	Guard *GuardPolicy `json:"guard,omitempty"`
	// Budgets are the key's own spend caps (absent: none; its account's
	// are on the account).
	Budgets *Budgets `json:"budgets,omitempty"`
}

func toKey(k *gw.Key, u gw.KeyUsage, now time.Time) Key {
	out := Key{ID: k.ID, AccountID: k.AccountID, Account: k.AccountName, Name: k.Name, Hint: k.Hint, RPM: k.RPM, TPM: k.TPM,
		CreatedAt: k.CreatedAt, Status: "active", EndsAt: k.RevokedAt, Requests: u.Requests, SpendUSD: u.Spend.USDString(), Optimize: "on"}
	if k.OptimizeOff {
		out.Optimize = "off"
	}
	out.Models = k.Models
	switch {
	case !k.Live(now):
		out.Status = "revoked"
	case k.RevokedAt != nil:
		out.Status = "expiring"
	}
	if !u.LastUsed.IsZero() {
		t := u.LastUsed
		out.LastUsedAt = &t
	}
	return out
}

// CreatedKey is a new key (its fields inline) with its secret, shown this
// once, under "key".
type CreatedKey struct {
	Key
	Secret string `json:"key"`
	// Replaces is the rotated key's id, which keeps working until its
	// EndsAt.
	Replaces *Key `json:"replaces,omitempty"`
}

// Incident is a request the guard blocked.
type Incident struct {
	ID        string    `json:"id"`
	RequestID string    `json:"request_id"`
	AccountID string    `json:"account_id"`
	KeyID     string    `json:"key_id"`
	Kind      string    `json:"kind"`
	Score     float64   `json:"score"`
	Reason    string    `json:"reason"`
	Excerpt   string    `json:"excerpt"`
	CreatedAt time.Time `json:"created_at"`
	Review    *Review   `json:"review,omitempty"` // absent: not reviewed
}

// Review is support's verdict on an incident.
type Review struct {
	Verdict    string    `json:"verdict"` // "false-positive" or "confirmed"
	Note       string    `json:"note,omitempty"`
	ReviewedAt time.Time `json:"reviewed_at"`
}

// ReviewRequest reviews an incident: Verdict "false-positive" (its text
// then passes for the incident's account) or "confirmed".
type ReviewRequest struct {
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"`
}

func toIncident(in *gw.Incident) Incident {
	return Incident{ID: in.ID, RequestID: in.RequestID, AccountID: in.AccountID, KeyID: in.KeyID, Kind: in.Kind, Score: in.Score,
		Reason: in.Reason, Excerpt: in.Excerpt, CreatedAt: in.CreatedAt}
}
