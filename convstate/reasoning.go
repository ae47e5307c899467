package convstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// reasoningVendor is the vendor whose tool round trips need their
// reasoning back.
const reasoningVendor = "deepseek"

// KeepsReasoning reports whether the vendor's reasoning is kept and
// restored.
func KeepsReasoning(vendor string) bool { return vendor == reasoningVendor }

// reasoningOff reports whether reasoning is not kept.
func (k *Keeper) reasoningOff() bool { return k.cfg.ReasoningTTL < 0 }

// RememberReasoning keeps the reasoning of an assistant turn that made the
// tool calls ids, under the first id. A turn without tool calls needs
// nothing kept (DeepSeek wants reasoning back only on tool-call turns).
func (k *Keeper) RememberReasoning(ctx context.Context, account string, ids []string, reasoning string) error {
	if k.reasoningOff() || len(ids) == 0 || ids[0] == "" || len(reasoning) > maxReasoningBytes {
		return nil
	}
	if err := k.put(ctx, KindReasoning, account, ids[0], []byte(reasoning), k.cfg.ReasoningTTL); err != nil {
		return fmt.Errorf("keep reasoning: %w", err)
	}
	return nil
}

// recall returns the reasoning kept for a turn whose tool call ids are
// ids, trying each (a client keeps them in order, so the first matches).
func (k *Keeper) recall(ctx context.Context, account string, ids []string) (string, bool, error) {
	for _, id := range ids {
		if id == "" {
			continue
		}
		b, err := k.cfg.Store.GetState(ctx, KindReasoning, account, id, k.cfg.Now())
		if errors.Is(err, gw.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		return string(b), true, nil
	}
	return "", false, nil
}

// RememberResponse keeps the reasoning of a mapped answer (thinking text
// before its tool calls).
func (k *Keeper) RememberResponse(ctx context.Context, account string, content []gw.Part) error {
	var ids []string
	var thinking strings.Builder
	for _, p := range content {
		switch p.Type {
		case gw.PartThinking:
			thinking.WriteString(p.Text)
		case gw.PartToolCall:
			ids = append(ids, p.ToolCallID)
		}
	}
	return k.RememberReasoning(ctx, account, ids, thinking.String())
}

// RestoreRequest puts kept reasoning back into the assistant turns of a
// canonical request that made tool calls and carry no thinking part (the
// client dropped it). A store failure leaves the request as it is (the
// vendor then says what is missing) and is returned for logging.
func (k *Keeper) RestoreRequest(ctx context.Context, account string, r *gw.Request) error {
	if k.reasoningOff() {
		return nil
	}
	var errs []error
	for i := range r.Messages {
		m := &r.Messages[i]
		if m.Role != gw.RoleAssistant {
			continue
		}
		var ids []string
		thinking := false
		for _, p := range m.Content {
			switch p.Type {
			case gw.PartToolCall:
				ids = append(ids, p.ToolCallID)
			case gw.PartThinking, gw.PartRedactedThinking:
				thinking = true
			}
		}
		if len(ids) == 0 || thinking {
			continue
		}
		text, ok, err := k.recall(ctx, account, ids)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			m.Content = append([]gw.Part{{Type: gw.PartThinking, Text: text}}, m.Content...)
		}
	}
	return errors.Join(errs...)
}

// cMessage is the part of a Chat Completions message RestoreBody reads.
type cMessage struct {
	Role      string `json:"role"`
	ToolCalls []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
}

// RestoreBody is RestoreRequest for a Chat Completions body relayed as is
// (the native route): each assistant message with tool_calls and no
// reasoning_content member gets the kept one added, and nothing else of
// the body changes (an unchanged body is returned as is, the same slice).
func (k *Keeper) RestoreBody(ctx context.Context, account string, body []byte) ([]byte, error) {
	if k.reasoningOff() {
		return body, nil
	}
	raw := rawjson.Get(body, "messages")
	if len(raw) == 0 || raw[0] != '[' || !bytes.Contains(raw, []byte(`"tool_calls"`)) {
		return body, nil
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return body, nil // the vendor will say what is wrong with it
	}
	changed := false
	var errs []error
	for i, mraw := range msgs {
		var m cMessage
		if json.Unmarshal(mraw, &m) != nil || m.Role != "assistant" || len(m.ToolCalls) == 0 || m.ReasoningContent != nil {
			continue
		}
		ids := make([]string, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			ids[j] = tc.ID
		}
		text, ok, err := k.recall(ctx, account, ids)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		v, _ := json.Marshal(text)
		out, err := rawjson.Set(mraw, "reasoning_content", v)
		if err != nil {
			continue
		}
		msgs[i], changed = out, true
	}
	if !changed {
		return body, errors.Join(errs...)
	}
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			arr.WriteByte(',')
		}
		arr.Write(m)
	}
	arr.WriteByte(']')
	out, err := rawjson.Set(body, "messages", arr.Bytes())
	if err != nil {
		return body, errors.Join(append(errs, err)...)
	}
	return out, errors.Join(errs...)
}

// Collector reads the reasoning and tool call ids of a Chat Completions
// answer relayed as is: Body for a whole answer, Chunk for each stream
// chunk's data.
type Collector struct {
	reasoning strings.Builder
	ids       []string
}

type cAnswer struct {
	Choices []struct {
		Index   int       `json:"index"`
		Message *cTurnOut `json:"message"`
		Delta   *cTurnOut `json:"delta"`
	} `json:"choices"`
}

type cTurnOut struct {
	ReasoningContent *string `json:"reasoning_content"`
	ToolCalls        []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

// Body reads a non-stream answer.
func (c *Collector) Body(body []byte) { c.read(body) }

// Chunk reads one stream chunk (the data of an SSE event).
func (c *Collector) Chunk(data []byte) {
	if !bytes.Contains(data, []byte(`"reasoning_content"`)) && !bytes.Contains(data, []byte(`"tool_calls"`)) {
		return
	}
	c.read(data)
}

func (c *Collector) read(b []byte) {
	var a cAnswer
	if json.Unmarshal(b, &a) != nil {
		return
	}
	for _, ch := range a.Choices {
		if ch.Index != 0 {
			continue
		}
		t := ch.Message
		if t == nil {
			t = ch.Delta
		}
		if t == nil {
			continue
		}
		if t.ReasoningContent != nil && c.reasoning.Len() <= maxReasoningBytes {
			c.reasoning.WriteString(*t.ReasoningContent)
		}
		for _, tc := range t.ToolCalls {
			if tc.ID != "" {
				c.ids = append(c.ids, tc.ID)
			}
		}
	}
}

// Remember keeps what the collector read.
func (c *Collector) Remember(ctx context.Context, k *Keeper, account string) error {
	return k.RememberReasoning(ctx, account, c.ids, c.reasoning.String())
}
