package gw

import (
	"context"
	"fmt"
	"time"
)

// A run is an agent's whole task as the caller names it (the
// X-Gateway-Run header), scoped to its account: every model call and
// tool call naming it counts toward its spend and its steps. A run may
// name a parent run; a parent's caps cover its children.
//
// A run's caps hold under concurrency the way budgets do: a step is
// admitted only when the run's spend, plus the holds of its steps in
// flight, plus the new step's hold fit in the budget of the run and of
// each of its ancestors, checked and reserved in one store transaction.

// Run is one run's row: its caps and what it used so far. Spend,
// Held, Requests and InFlight include the run's descendants.
type Run struct {
	AccountID string
	ID        string
	ParentID  string // "" for a root run
	KeyID     string // the key that first named it
	// Budget caps Spend (zero: none); MaxRequests caps Requests (zero:
	// none); Idle ends the run when no step started for that long
	// (zero: never).
	Budget      Money
	MaxRequests int64
	Idle        time.Duration
	Spend       Money // charged
	Held        Money // held by steps in flight
	Requests    int64 // steps finished
	InFlight    int64 // steps admitted, not finished
	Errors      int64 // steps that failed
	Incidents   int64 // steps the guard blocked
	FirstSeen   time.Time
	LastSeen    time.Time
}

// Remaining is what the budget still covers (spend and holds taken off),
// and false when the run has no budget.
func (r *Run) Remaining() (Money, bool) {
	if r.Budget <= 0 {
		return 0, false
	}
	return max(r.Budget-r.Spend-r.Held, 0), true
}

// ExpiredAt reports whether the run has been idle past its expiry at now.
func (r *Run) ExpiredAt(now time.Time) bool {
	return r.Idle > 0 && now.Sub(r.LastSeen) > r.Idle
}

// RunCaps are a run's caps as a request (or its key's defaults) sets
// them; zero fields set nothing.
type RunCaps struct {
	Budget      Money
	MaxRequests int64
	Idle        time.Duration
}

// ValidRunID reports whether id is 1-128 characters of [A-Za-z0-9._:-].
func ValidRunID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// RunRef names a request's run as its headers do: the run, its parent
// ("" for none) and the caps it asks for. A zero ID: no run.
type RunRef struct {
	ID     string
	Parent string
	Caps   RunCaps
}

// RunHold is a step's admission: the hold Amount reserved on the run and
// its ancestors under RequestID until its settle (or ExpiresAt, for a
// step whose process died).
type RunHold struct {
	AccountID string
	KeyID     string
	RunID     string
	// ParentID links a run seen for the first time to its parent (a
	// parent not seen yet is created); a known run keeps its parent.
	ParentID string
	// Caps set on a run seen for the first time; on a known run they
	// fill the caps it does not have yet.
	Caps      RunCaps
	RequestID string
	Amount    Money
	// Tool is true for a tool call (MCP): it counts as a step.
	Tool      bool
	Now       time.Time
	ExpiresAt time.Time
}

// RunStep is one finished step of a run, as the run's timeline shows it.
type RunStep struct {
	RequestID string
	RunID     string
	Endpoint  Shape
	Vendor    string
	Model     string
	Status    int
	ErrorCode Code
	Usage     Usage
	Charge    Money
	Latency   time.Duration
	Guard     string
	Attempts  int
	CreatedAt time.Time
	// Tool is true for a tool call (see ToolStepPrefix).
	Tool bool
}

// ToolStepPrefix starts the hold id of a tool step admitted before its
// request id was known.
const ToolStepPrefix = "tool:"

// StepOf is the step a request's record describes.
func StepOf(runID string, r *Record) RunStep {
	return RunStep{RequestID: r.RequestID, RunID: runID, Endpoint: r.Endpoint, Vendor: r.Vendor, Model: r.Model,
		Status: r.Status, ErrorCode: r.ErrorCode, Usage: r.Usage, Charge: r.Charge, Latency: r.Latency,
		Guard: r.Guard, Attempts: len(r.Attempts), CreatedAt: r.CreatedAt}
}

// RunStore keeps runs. Both stores implement it (found by type
// assertion on a Store).
//
// HoldRun admits a step: in one transaction it creates the run (and a
// missing parent), refuses a run idle past its expiry, a step beyond
// MaxRequests (finished plus in flight) or a hold beyond the budget of
// the run or of any ancestor (spend plus holds in flight), each as a
// *Error from RunRefusal, then reserves the hold on the run and its
// ancestors. It returns the run after the hold.
//
// SettleRun ends the step of requestID: its hold is released on the run
// and its ancestors and the step's charge added to their spend, the step
// written to the run's timeline; it returns the run after. A step whose
// hold is gone (swept after ExpiresAt) is still counted. A tool step
// admitted before its request id was known (a RequestID starting with
// ToolStepPrefix, holding nothing) is ended by the settle of any tool
// call's step of the run: step.Tool set.
//
// Runs lists an account's runs, the dearest first; Run, RunSteps and
// RunChildren read one run (ErrNotFound when the account has none by
// that id).
type RunStore interface {
	HoldRun(ctx context.Context, h RunHold) (*Run, error)
	// ReleaseRun drops the hold of requestID without counting a step
	// (its request placed no hold on the balance after all); an unknown
	// hold is ErrNotFound.
	ReleaseRun(ctx context.Context, accountID, runID, requestID string) error
	SettleRun(ctx context.Context, accountID, runID string, step RunStep, now time.Time) (*Run, error)
	Run(ctx context.Context, accountID, id string) (*Run, error)
	Runs(ctx context.Context, accountID string, limit int) ([]Run, error)
	RunSteps(ctx context.Context, accountID, id string, limit int) ([]RunStep, error)
	RunChildren(ctx context.Context, accountID, id string) ([]Run, error)
	// SetRunDefaults stores a key's run caps (applied to runs its
	// requests start without caps of their own); zero caps remove them.
	SetRunDefaults(ctx context.Context, keyID string, c RunCaps) error
	RunDefaults(ctx context.Context, keyID string) (RunCaps, error)
}

// The error.details.error_code values of the refusals of a run's step;
// their error.type is insufficient_balance (402).
const (
	ErrorCodeRunBudget  = "run_budget_exceeded"
	ErrorCodeRunSteps   = "run_step_limit"
	ErrorCodeRunExpired = "run_expired"
)

// RunRefusal is the caller-facing refusal of a step of run r (the run
// or the ancestor whose cap it meets), as code says, for a step that
// needs up to need.
func RunRefusal(code string, r *Run, need Money) *Error {
	e := &Error{Code: CodeInsufficientBalance, ErrorCode: code, NoRetry: true}
	switch code {
	case ErrorCodeRunBudget:
		e.Message = fmt.Sprintf("run %q reached its budget: $%s spent and $%s held by steps in flight of a $%s budget; this request needs up to $%s",
			r.ID, r.Spend.USDString(), r.Held.USDString(), r.Budget.USDString(), need.USDString())
	case ErrorCodeRunSteps:
		e.Message = fmt.Sprintf("run %q reached its step limit: %d requests made and %d in flight of %d; spent $%s",
			r.ID, r.Requests, r.InFlight, r.MaxRequests, r.Spend.USDString())
	default:
		e.Message = fmt.Sprintf("run %q expired: idle since %s, past its %s expiry; spent $%s; start a new run",
			r.ID, r.LastSeen.UTC().Format(time.RFC3339), r.Idle, r.Spend.USDString())
	}
	return e
}
