package convstate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	gw "github.com/gwlabs/gateway"
)

// KindNativeThread is the entry of an answer in a thread the vendor keeps
// itself (native Anthropic Messages threads): not the conversation, only
// what billing needs of it.
const KindNativeThread = "native_thread"

// NativeThreadTTL is how long such an entry is kept.
const NativeThreadTTL = 24 * time.Hour

// NativeThread is what the gateway knows of a vendor-kept thread after
// one of its answers: its size in tokens (the prompt and the answer; the
// next continue's prompt holds them all), and whether the thread's
// system prompt holds the optimizer's directive (added at the thread's
// create; the vendor bills it on every continue, and the caller never
// pays for it).
type NativeThread struct {
	Tokens    int64 `json:"tokens"`
	Directive bool  `json:"directive,omitempty"`
}

// RememberNativeThread keeps what billing needs of the thread answered by
// messageID.
func (k *Keeper) RememberNativeThread(ctx context.Context, account, messageID string, t NativeThread) error {
	if messageID == "" {
		return nil
	}
	b, _ := json.Marshal(t)
	return k.put(ctx, KindNativeThread, account, messageID, b, NativeThreadTTL)
}

// NativeThreadOf returns what is known of the thread that messageID
// answered; ok is false when nothing is (an unknown, expired or other
// account's id).
func (k *Keeper) NativeThreadOf(ctx context.Context, account, messageID string) (t NativeThread, ok bool, err error) {
	b, err := k.cfg.Store.GetState(ctx, KindNativeThread, account, messageID, k.cfg.Now())
	if errors.Is(err, gw.ErrNotFound) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if json.Unmarshal(b, &t) != nil {
		return t, false, nil
	}
	return t, true, nil
}
