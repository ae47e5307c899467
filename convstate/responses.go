package convstate

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Kinds of the Responses API's state.
const (
	// KindResponse is a kept response (store: true on a mapped route):
	// the conversation up to and including it, its response object and
	// its input items, under the response id.
	KindResponse = "response"
	// KindResponseOwner marks a response id OpenAI keeps (the native
	// route) as the account's, so that another account's id is not
	// found.
	KindResponseOwner = "response_owner"
	// kindKey holds the gateway's own secrets (account "").
	kindKey = "gateway_key"
)

// responseVersion is the version of StoredResponse's form.
const responseVersion = 1

// StoredResponse is a kept response: Messages is the whole conversation
// (earlier turns, this request's input, the answer) in canonical form, so
// that a request naming it as previous_response_id continues it; Object
// is the response object as the caller got it (GET); Input the request's
// input items as the caller sent them (GET .../input_items).
type StoredResponse struct {
	V        int               `json:"v"`
	Messages []gw.Message      `json:"messages"`
	Object   json.RawMessage   `json:"object"`
	Input    []json.RawMessage `json:"input"`
}

// responseNotFound is the answer for an unknown, expired, deleted or other
// account's response id.
func responseNotFound(id string) *gw.Error {
	return &gw.Error{Code: gw.CodeNotFound, Message: fmt.Sprintf("no response with id %q is kept for this account (unknown, expired or deleted)", id), ErrorCode: "response_not_found"}
}

// KeepResponse keeps a response for the account under id, for ThreadTTL
// and up to ThreadMaxBytes (a larger one is not kept and logged: naming
// it later is not found).
func (k *Keeper) KeepResponse(ctx context.Context, account, id string, st *StoredResponse) error {
	if k.cfg.ThreadTTL < 0 {
		return nil
	}
	st.V = responseVersion
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	if len(b) > k.cfg.ThreadMaxBytes {
		k.cfg.Logger.Warn("response not kept: over the size bound", "id", id, "bytes", len(b), "max", k.cfg.ThreadMaxBytes)
		return nil
	}
	if err := k.put(ctx, KindResponse, account, id, b, k.cfg.ThreadTTL); err != nil {
		return fmt.Errorf("keep response %s: %w", id, err)
	}
	return nil
}

// LoadResponse returns the account's kept response id; not_found
// otherwise.
func (k *Keeper) LoadResponse(ctx context.Context, account, id string) (*StoredResponse, int, error) {
	if k.cfg.ThreadTTL < 0 || id == "" {
		return nil, 0, responseNotFound(id)
	}
	b, err := k.cfg.Store.GetState(ctx, KindResponse, account, id, k.cfg.Now())
	if errors.Is(err, gw.ErrNotFound) || err == nil && len(b) == 0 {
		return nil, 0, responseNotFound(id)
	}
	if err != nil {
		return nil, 0, &gw.Error{Code: gw.CodeInternal, Message: "the response could not be read", Err: err}
	}
	var st StoredResponse
	if err := json.Unmarshal(b, &st); err != nil || st.V != responseVersion {
		k.cfg.Logger.Warn("unreadable response", "id", id, "err", err, "version", st.V)
		return nil, 0, responseNotFound(id)
	}
	return &st, len(b), nil
}

// DeleteResponse forgets the account's response id (an empty entry that
// expires at once); not_found when it is not kept.
func (k *Keeper) DeleteResponse(ctx context.Context, account, id string) error {
	if _, _, err := k.LoadResponse(ctx, account, id); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultStorageDeadline)
	defer cancel()
	return k.cfg.Store.PutState(wctx, KindResponse, account, id, nil, k.cfg.Now())
}

// MarkResponseOwner records that OpenAI's response id was made for the
// account (the native route), for 30 days, with the tokens its
// conversation holds (its prompt and output), which a request continuing
// it will be billed for as prompt: the hold must cover them.
func (k *Keeper) MarkResponseOwner(ctx context.Context, account, id string, contextTokens int64) error {
	if id == "" {
		return nil
	}
	return k.put(ctx, KindResponseOwner, account, id, []byte(strconv.FormatInt(max(contextTokens, 0), 10)), 30*24*time.Hour)
}

// OwnsResponse reports whether OpenAI's response id was made for the
// account through this gateway, and the tokens its conversation holds.
func (k *Keeper) OwnsResponse(ctx context.Context, account, id string) (owned bool, contextTokens int64, err error) {
	b, err := k.cfg.Store.GetState(ctx, KindResponseOwner, account, id, k.cfg.Now())
	if errors.Is(err, gw.ErrNotFound) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	if len(b) == 0 {
		return false, 0, nil
	}
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return true, n, nil
}

// SealKey returns the gateway's 32-byte key for sealing reasoning state
// (shape/responses), made on first use and kept in the store so that
// every instance and restart shares it.
func (k *Keeper) SealKey(ctx context.Context) ([]byte, error) {
	const name = "responses_seal"
	far := k.cfg.Now().Add(100 * 365 * 24 * time.Hour)
	b, err := k.cfg.Store.GetState(ctx, kindKey, "", name, k.cfg.Now())
	if err == nil && len(b) == 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, gw.ErrNotFound) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := k.cfg.Store.PutState(ctx, kindKey, "", name, key, far); err != nil {
		return nil, err
	}
	// Another instance may have written its key at the same moment: the
	// one kept is the one everybody uses.
	if b, err := k.cfg.Store.GetState(ctx, kindKey, "", name, k.cfg.Now()); err == nil && len(b) == 32 {
		return b, nil
	}
	return key, nil
}
