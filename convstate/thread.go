package convstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// ThreadBeta is the anthropic-beta value of message threads.
const ThreadBeta = "message-threads-2026-08-12"

// Thread types.
const (
	ThreadCreate   = "create"
	ThreadContinue = "continue"
)

// ErrorThreadNotFound is the error.details.error_code of a continue whose
// thread is not (or no longer) kept; ErrorThreadAlreadyContinued that of
// a continue from an answer that was already continued (each answer can
// be continued once, as on Anthropic). On either, Anthropic's SDKs replay
// the whole conversation under a new thread.
const (
	ErrorThreadNotFound         = "thread_not_found"
	ErrorThreadAlreadyContinued = "thread_already_continued"
)

// Thread is a request's "thread" field.
type Thread struct {
	Type              string `json:"type"`
	PreviousMessageID string `json:"previous_message_id,omitempty"`
}

// DecodeThread returns the "thread" field of a Messages request body, nil
// when it has none (or null). A malformed field is a 400.
func DecodeThread(body []byte) (*Thread, error) {
	return ThreadFrom(rawjson.Get(body, "thread"))
}

// ThreadFrom is DecodeThread given the raw "thread" value (nil when the
// body has none), for a caller that has the body's members at hand.
func ThreadFrom(raw []byte) (*Thread, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var t Thread
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "thread: must be an object like {\"type\": \"create\"}")
	}
	switch t.Type {
	case ThreadCreate:
		if t.PreviousMessageID != "" {
			return nil, gw.Errorf(gw.CodeInvalidRequest, "thread.previous_message_id: only allowed with type \"continue\"")
		}
	case ThreadContinue:
		if t.PreviousMessageID == "" {
			return nil, gw.Errorf(gw.CodeInvalidRequest, "thread.previous_message_id: field required with type \"continue\"")
		}
	default:
		return nil, gw.Errorf(gw.CodeInvalidRequest, "thread.type: must be \"create\" or \"continue\", got %q", t.Type)
	}
	return &t, nil
}

// threadVersion is the version of the stored form below.
const threadVersion = 1

// stored is a kept thread: what a continue takes from it. The canonical
// types are stored as they are, so every field a decoder fills (thinking
// signatures, Gemini thought signatures, cache markers) survives.
type stored struct {
	V        int          `json:"v"`
	System   []gw.Part    `json:"system,omitempty"`
	Tools    []gw.Tool    `json:"tools,omitempty"`
	Messages []gw.Message `json:"messages"`
}

// Turn is a threaded request in flight: Save keeps it, with the answer,
// once the answer is complete.
type Turn struct {
	k       *Keeper
	account string
	st      stored
	extra   int
	prev    string // the answer id a continue continued
}

// ExtraBytes is the size of the stored turns a continue added to the
// request (for sizing its hold): 0 on create.
func (t *Turn) ExtraBytes() int { return t.extra }

// Open handles the thread field t of a mapped Messages request r (its
// canonical form): it takes "thread" off r.Dropped and, on continue,
// expands r with the kept thread (system, tools, then the stored messages
// before r's). It returns the Turn to save once answered. A continue of
// an unknown, expired or other account's id is a *gw.Error not_found with
// ErrorCode ErrorThreadNotFound; a continue that sends system or tools
// again is a 400, as the thread keeps the ones it was created with.
func (k *Keeper) Open(ctx context.Context, account string, t *Thread, r *gw.Request) (*Turn, error) {
	r.Dropped = slices.DeleteFunc(r.Dropped, func(s string) bool { return s == "thread" })
	turn := &Turn{k: k, account: account}
	if t.Type == ThreadContinue {
		if len(r.System) > 0 || len(r.Tools) > 0 {
			return nil, gw.Errorf(gw.CodeInvalidRequest, "system and tools: not allowed with thread type \"continue\"; a thread keeps the system and tools it was created with (start a new thread to change them)")
		}
		prev, err := k.load(ctx, account, t.PreviousMessageID)
		if err != nil {
			return nil, err
		}
		turn.extra, turn.prev = prev.size, t.PreviousMessageID
		r.System, r.Tools = prev.st.System, prev.st.Tools
		r.Messages = append(prev.st.Messages, r.Messages...)
	}
	turn.st = stored{V: threadVersion, System: r.System, Tools: r.Tools, Messages: slices.Clone(r.Messages)}
	return turn, nil
}

type loaded struct {
	st   stored
	size int
}

func (k *Keeper) load(ctx context.Context, account, id string) (loaded, error) {
	notFound := &gw.Error{
		Code:      gw.CodeNotFound,
		Message:   fmt.Sprintf("thread.previous_message_id: no thread is kept for %q (unknown, expired or not this account's); replay the whole conversation with thread type \"create\"", id),
		ErrorCode: ErrorThreadNotFound,
	}
	if k.cfg.ThreadTTL < 0 {
		return loaded{}, notFound
	}
	b, err := k.cfg.Store.GetState(ctx, KindThread, account, id, k.cfg.Now())
	if errors.Is(err, gw.ErrNotFound) {
		return loaded{}, notFound
	}
	if err != nil {
		return loaded{}, &gw.Error{Code: gw.CodeInternal, Message: "the thread could not be read", Err: err}
	}
	if len(b) == 0 {
		return loaded{}, &gw.Error{
			Code:      gw.CodeInvalidRequest,
			Message:   fmt.Sprintf("thread.previous_message_id: %q has already been continued; continue from the latest answer's id, or replay the whole conversation with thread type \"create\"", id),
			ErrorCode: ErrorThreadAlreadyContinued,
		}
	}
	var st stored
	if err := json.Unmarshal(b, &st); err != nil || st.V != threadVersion {
		// Written by another version: as good as gone.
		k.cfg.Logger.Warn("unreadable thread", "id", id, "err", err, "version", st.V)
		return loaded{}, notFound
	}
	return loaded{st: st, size: len(b)}, nil
}

// Save keeps the thread with the assistant's answer (content, in
// canonical form) under answerID, the id the caller was given. A thread
// over the size bound is not kept (logged): continuing it is not found.
func (t *Turn) Save(ctx context.Context, answerID string, content []gw.Part) error {
	k := t.k
	if k.cfg.ThreadTTL < 0 {
		return nil
	}
	st := t.st
	st.Messages = append(slices.Clip(st.Messages), gw.Message{Role: gw.RoleAssistant, Content: content})
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode thread: %w", err)
	}
	if len(b) > k.cfg.ThreadMaxBytes {
		k.cfg.Logger.Warn("thread not kept: over the size bound", "id", answerID, "bytes", len(b), "max", k.cfg.ThreadMaxBytes)
		return nil
	}
	if err := k.put(ctx, KindThread, t.account, answerID, b, k.cfg.ThreadTTL); err != nil {
		return fmt.Errorf("keep thread %s: %w", answerID, err)
	}
	if t.prev != "" {
		// The continued answer is now part of this one: an empty entry
		// marks it continued, so that a thread takes space linear in
		// its length, not one copy of the conversation per turn.
		if err := k.put(ctx, KindThread, t.account, t.prev, nil, k.cfg.ThreadTTL); err != nil {
			return fmt.Errorf("mark thread %s continued: %w", t.prev, err)
		}
	}
	return nil
}
