package convstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	gw "github.com/gwlabs/gateway"
)

// Gemini thought signatures on text. A Gemini 3 answer without function
// calls carries a thoughtSignature on its last part: on the text part, or
// in a stream on a final part of its own with empty text, after the
// answer's text. The google adapter turns it into a carrier: a thinking
// part with empty text and that signature, right after the text (and
// puts it back onto the text part when the history is replayed). On the
// Messages endpoint a thinking block after the answer's text ends the
// answer for clients that show the last block (Claude Code then reports
// an empty result), and Messages has no field for a signature on text.
// So the server leaves such carriers out of Messages answers
// (CarrierFilter, DropCarriers), keeps each signature here under the
// text it followed (RememberSignatures), and puts it back after that text
// when the client replays the turn (RestoreSignatures). A text signature
// is not validated by Gemini; returning it keeps the model's reasoning
// context, and a miss (expired, text changed) only loses that.

// signatureVendor is the vendor whose text signatures are kept.
const signatureVendor = "google"

// KindSignature is the entry kind of kept text signatures.
const KindSignature = "signature"

// maxRestoredTurns bounds the assistant turns, counted from the end, whose
// text signatures RestoreSignatures looks up (one store read each).
const maxRestoredTurns = 16

// KeepsSignatures reports whether text signatures of the vendor's answers
// are kept: the vendor is Gemini and reasoning state is on (signatures
// share ReasoningTTL). A nil Keeper keeps nothing.
func (k *Keeper) KeepsSignatures(vendor string) bool {
	return k != nil && vendor == signatureVendor && !k.reasoningOff()
}

// IsCarrier reports whether content[i] is a signature carrier: a thinking
// part with a signature and no text right after a text part.
func IsCarrier(content []gw.Part, i int) bool {
	p := &content[i]
	return i > 0 && p.Type == gw.PartThinking && p.Text == "" && p.Signature != "" &&
		content[i-1].Type == gw.PartText && content[i-1].Text != ""
}

// textKey is the key of the signature kept for an answer's text.
func textKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// RememberSignatures keeps the signature of each carrier of an answer's
// content under the text before it.
func (k *Keeper) RememberSignatures(ctx context.Context, account string, content []gw.Part) error {
	var errs []error
	for i := range content {
		if !IsCarrier(content, i) || len(content[i].Signature) > maxReasoningBytes {
			continue
		}
		if err := k.put(ctx, KindSignature, account, textKey(content[i-1].Text), []byte(content[i].Signature), k.cfg.ReasoningTTL); err != nil {
			errs = append(errs, fmt.Errorf("keep signature: %w", err))
		}
	}
	return errors.Join(errs...)
}

// DropCarriers returns content without its carriers (content itself when
// it has none).
func DropCarriers(content []gw.Part) []gw.Part {
	var out []gw.Part
	for i := range content {
		if IsCarrier(content, i) {
			if out == nil {
				out = append(make([]gw.Part, 0, len(content)-1), content[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, content[i])
		}
	}
	if out == nil {
		return content
	}
	return out
}

// RestoreSignatures puts kept signatures back into a canonical request:
// in the last assistant turns, a text part that no thinking part follows
// and whose text has a kept signature gets its carrier back right after
// it. A store failure leaves the request as it is and is returned for
// logging.
func (k *Keeper) RestoreSignatures(ctx context.Context, account string, r *gw.Request) error {
	if k.reasoningOff() {
		return nil
	}
	var errs []error
	turns := 0
	for mi := len(r.Messages) - 1; mi >= 0 && turns < maxRestoredTurns; mi-- {
		m := &r.Messages[mi]
		if m.Role != gw.RoleAssistant {
			continue
		}
		turns++
		for i := 0; i < len(m.Content); i++ {
			p := &m.Content[i]
			if p.Type != gw.PartText || p.Text == "" || i+1 < len(m.Content) && m.Content[i+1].Type == gw.PartThinking {
				continue
			}
			b, err := k.cfg.Store.GetState(ctx, KindSignature, account, textKey(p.Text), k.cfg.Now())
			if errors.Is(err, gw.ErrNotFound) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("restore signature: %w", err))
				continue
			}
			m.Content = append(m.Content[:i+1], append([]gw.Part{{Type: gw.PartThinking, Signature: string(b)}}, m.Content[i+1:]...)...)
			i++
		}
	}
	return errors.Join(errs...)
}

// Encoder is the server's stream encoder: canonical events in, the
// endpoint's shape out.
type Encoder interface{ Encode(ev gw.Event) error }

// CarrierFilter passes a canonical stream to an Encoder without its
// carriers: a thinking block that starts right after a text block is held
// until its first text (then passed on whole) or its stop with a
// signature alone (then dropped); later blocks are renumbered so the
// indices stay dense. Events are otherwise passed through unchanged.
type CarrierFilter struct {
	next     Encoder
	held     []gw.Event // the held thinking block's start and signature deltas
	lastText bool       // the last block stopped was a text block with text
	open     gw.PartType
	openText bool // the open text block has text
	dropped  int  // carriers dropped so far
}

// NewCarrierFilter returns a CarrierFilter writing to next.
func NewCarrierFilter(next Encoder) *CarrierFilter { return &CarrierFilter{next: next} }

// Encode takes one event.
func (f *CarrierFilter) Encode(ev gw.Event) error {
	if f.held != nil {
		idx := f.held[0].Index
		switch {
		case ev.Type == gw.EventDelta && ev.Index == idx && ev.Text == "":
			f.held = append(f.held, ev)
			return nil
		case ev.Type == gw.EventBlockStop && ev.Index == idx && f.signed():
			f.held = nil
			f.dropped++
			f.lastText = false
			return nil
		}
		held := f.held
		f.held = nil
		for _, h := range held {
			if err := f.pass(h); err != nil {
				return err
			}
		}
	}
	if ev.Type == gw.EventBlockStart && ev.Part != nil && ev.Part.Type == gw.PartThinking &&
		ev.Part.Text == "" && f.lastText {
		f.held = []gw.Event{ev}
		return nil
	}
	return f.pass(ev)
}

// signed reports whether the held block carries a signature.
func (f *CarrierFilter) signed() bool {
	for _, h := range f.held {
		if h.Signature != "" || h.Part != nil && h.Part.Signature != "" {
			return true
		}
	}
	return false
}

// pass tracks the block structure and encodes ev, renumbered.
func (f *CarrierFilter) pass(ev gw.Event) error {
	switch ev.Type {
	case gw.EventBlockStart:
		f.lastText = false
		f.open, f.openText = "", false
		if ev.Part != nil {
			f.open, f.openText = ev.Part.Type, ev.Part.Text != ""
		}
	case gw.EventDelta:
		if ev.Text != "" {
			f.openText = true
		}
	case gw.EventBlockStop:
		f.lastText = f.open == gw.PartText && f.openText
		f.open, f.openText = "", false
	}
	switch ev.Type {
	case gw.EventBlockStart, gw.EventDelta, gw.EventBlockStop:
		ev.Index -= f.dropped
	}
	return f.next.Encode(ev)
}
