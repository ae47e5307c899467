// Package convstate keeps the little conversation state the gateway holds
// for its clients, on mapped routes only, where the vendor cannot hold it:
//
//   - Message threads (Anthropic's "message-threads-2026-08-12" beta). A
//     Messages request with "thread": {"type": "create"} asks for the
//     conversation to be kept under the answer's id; the next request
//     sends only its new turns with "thread": {"type": "continue",
//     "previous_message_id": <that id>}. Native Anthropic keeps threads
//     itself (the request passes through); on every other vendor the
//     gateway keeps them here: the system prompt, the tools and every
//     message, with the assistant turns it returned (tool calls, thinking
//     and Gemini thought signatures included, in canonical form), under
//     the answer id, scoped to the account, for ThreadTTL and up to
//     ThreadMaxBytes. A continue expands the stored thread (stored turns,
//     then the new ones) before the request is mapped; once answered, the
//     thread is kept under the new answer's id and the continued entry is
//     emptied (each answer can be continued once, as on Anthropic, so a
//     thread takes space linear in its length). An unknown, expired or
//     other account's id is 404 not_found with error.details.error_code
//     "thread_not_found", an answer already continued a 400 with
//     "thread_already_continued"; on either, Anthropic's SDKs replay the
//     whole conversation under a new thread. This is the one place the
//     gateway stores content, and only when the client asks for a thread.
//   - DeepSeek reasoning. In thinking mode DeepSeek refuses a tool round
//     trip whose assistant turn lacks the reasoning_content it returned,
//     and the OpenAI SDKs do not send that field back. The gateway saw it
//     in the answer it relayed: it keeps it for ReasoningTTL under the
//     turn's first tool call id, scoped to the account, and puts it back
//     into the next request when the client left it out, the way Gemini
//     thought signatures ride back in tool call ids (provider/google),
//     except that reasoning is too long to ride in an id.
//   - Gemini thought signatures on answer text (signature.go): kept under
//     the text for ReasoningTTL, left out of Messages answers, and put
//     back onto the text when the client replays the turn.
//
// Entries live in the store (Store: both sqlite and postgres implement
// it) as opaque values with an expiry; Sweep deletes the expired ones, and
// an expired entry is never returned even before it is swept. convstate
// knows no HTTP, vendor or database: the server package calls it.
package convstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Store keeps opaque state entries. kind separates the uses ("thread",
// "reasoning"); key is unique within (kind, accountID). PutState inserts
// or replaces an entry. GetState returns the value of an entry that has
// not expired at now, or an error wrapping gw.ErrNotFound (also for an
// entry of another account). SweepState deletes the entries expired at
// now and returns how many.
type Store interface {
	PutState(ctx context.Context, kind, accountID, key string, value []byte, expiresAt time.Time) error
	GetState(ctx context.Context, kind, accountID, key string, now time.Time) ([]byte, error)
	SweepState(ctx context.Context, now time.Time) (int, error)
}

// Entry kinds.
const (
	KindThread    = "thread"
	KindReasoning = "reasoning"
)

// Defaults for Config.
const (
	DefaultThreadTTL       = time.Hour
	DefaultThreadMaxBytes  = 8 << 20
	DefaultReasoningTTL    = 15 * time.Minute
	maxReasoningBytes      = 1 << 20
	defaultStorageDeadline = 10 * time.Second

	DefaultAccountMaxBytes   = 64 << 20
	DefaultAccountMaxEntries = 10_000
)

// StateUsage is implemented by Stores that can say what one account
// keeps: its live entries and their bytes at now.
type StateUsage interface {
	StateUsage(ctx context.Context, accountID string, kinds []string, now time.Time) (entries, bytes int64, err error)
}

// boundedKinds are the entries an account keeps, bounded per account
// (AccountMaxEntries, AccountMaxBytes): content, and the small markers
// too (an OpenAI response's owner, a native thread's size), so that no
// kind of entry grows without bound.
var boundedKinds = []string{KindThread, KindReasoning, KindResponse, KindSignature, KindResponseOwner, KindNativeThread}

// ErrAccountFull is returned for an entry past the account's bounds.
var ErrAccountFull = errors.New("convstate: the account keeps as much state as it may")

// Config configures a Keeper. Store is required.
type Config struct {
	Store Store
	// ThreadTTL is how long a thread turn is kept (default
	// DefaultThreadTTL); negative turns threads off (nothing is stored,
	// every continue is not found).
	ThreadTTL time.Duration
	// ThreadMaxBytes bounds a stored thread (default
	// DefaultThreadMaxBytes); a longer one is not stored, so continuing
	// it is not found and the client replays it in full.
	ThreadMaxBytes int
	// ReasoningTTL is how long DeepSeek reasoning is kept (default
	// DefaultReasoningTTL); negative turns it off.
	ReasoningTTL time.Duration
	// AccountMaxBytes and AccountMaxEntries bound what one account keeps
	// at once (threads, stored responses, reasoning, signatures: every
	// live entry; defaults DefaultAccountMaxBytes and
	// DefaultAccountMaxEntries), when the store can say (StateUsage). An
	// entry past either is not kept: its continue is not found and the
	// client replays the conversation.
	AccountMaxBytes   int64
	AccountMaxEntries int64
	Now               func() time.Time
	Logger            *slog.Logger
}

// Keeper keeps threads and reasoning. It is safe for concurrent use.
type Keeper struct {
	cfg Config
}

// New returns a Keeper.
func New(cfg Config) (*Keeper, error) {
	if cfg.Store == nil {
		return nil, errors.New("convstate: Store is required")
	}
	if cfg.ThreadTTL == 0 {
		cfg.ThreadTTL = DefaultThreadTTL
	}
	if cfg.ThreadMaxBytes <= 0 {
		cfg.ThreadMaxBytes = DefaultThreadMaxBytes
	}
	if cfg.ReasoningTTL == 0 {
		cfg.ReasoningTTL = DefaultReasoningTTL
	}
	if cfg.AccountMaxBytes <= 0 {
		cfg.AccountMaxBytes = DefaultAccountMaxBytes
	}
	if cfg.AccountMaxEntries <= 0 {
		cfg.AccountMaxEntries = DefaultAccountMaxEntries
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{cfg: cfg}, nil
}

// Sweep deletes expired entries.
func (k *Keeper) Sweep(ctx context.Context) (int, error) {
	n, err := k.cfg.Store.SweepState(ctx, k.cfg.Now())
	if err != nil {
		return n, fmt.Errorf("sweep client state: %w", err)
	}
	return n, nil
}

// put stores an entry with a deadline of its own: the caller's context may
// already be gone (a stream the caller left), and the state must still be
// written or not at all.
func (k *Keeper) put(ctx context.Context, kind, account, key string, value []byte, ttl time.Duration) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultStorageDeadline)
	defer cancel()
	if su, ok := k.cfg.Store.(StateUsage); ok && len(value) > 0 && slices.Contains(boundedKinds, kind) {
		n, b, err := su.StateUsage(wctx, account, boundedKinds, k.cfg.Now())
		if err != nil {
			return err
		}
		if n+1 > k.cfg.AccountMaxEntries || b+int64(len(value)) > k.cfg.AccountMaxBytes {
			return fmt.Errorf("keep %s of %d bytes (the account keeps %d entries, %d bytes; at most %d, %d): %w",
				kind, len(value), n, b, k.cfg.AccountMaxEntries, k.cfg.AccountMaxBytes, ErrAccountFull)
		}
	}
	return k.cfg.Store.PutState(wctx, kind, account, key, value, k.cfg.Now().Add(ttl))
}
