package convstate

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// recorder is an Encoder that keeps what it was given.
type recorder struct{ evs []gw.Event }

func (r *recorder) Encode(ev gw.Event) error { r.evs = append(r.evs, ev); return nil }

func start(i int, t gw.PartType) gw.Event {
	return gw.Event{Type: gw.EventBlockStart, Index: i, Part: &gw.Part{Type: t}}
}
func text(i int, s string) gw.Event { return gw.Event{Type: gw.EventDelta, Index: i, Text: s} }
func sig(i int, s string) gw.Event  { return gw.Event{Type: gw.EventDelta, Index: i, Signature: s} }
func stop(i int) gw.Event           { return gw.Event{Type: gw.EventBlockStop, Index: i} }

func TestCarrierFilter(t *testing.T) {
	finish := gw.Event{Type: gw.EventFinish, StopReason: gw.StopEndTurn}
	tests := []struct {
		name string
		in   []gw.Event
		want []gw.Event
	}{
		{
			name: "a carrier after the answer's text is dropped",
			in:   []gw.Event{{Type: gw.EventStart}, start(0, gw.PartText), text(0, "Hi"), stop(0), start(1, gw.PartThinking), sig(1, "g:S"), stop(1), finish},
			want: []gw.Event{{Type: gw.EventStart}, start(0, gw.PartText), text(0, "Hi"), stop(0), finish},
		},
		{
			name: "thinking with text after text is passed on whole",
			in:   []gw.Event{start(0, gw.PartText), text(0, "Hi"), stop(0), start(1, gw.PartThinking), text(1, "hmm"), sig(1, "g:S"), stop(1), finish},
			want: []gw.Event{start(0, gw.PartText), text(0, "Hi"), stop(0), start(1, gw.PartThinking), text(1, "hmm"), sig(1, "g:S"), stop(1), finish},
		},
		{
			name: "a carrier in the middle: later blocks renumbered",
			in:   []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartThinking), sig(1, "g:S"), stop(1), start(2, gw.PartText), text(2, "B"), stop(2), finish},
			want: []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartText), text(1, "B"), stop(1), finish},
		},
		{
			name: "an unsigned empty thinking block is kept",
			in:   []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartThinking), stop(1), finish},
			want: []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartThinking), stop(1), finish},
		},
		{
			name: "a leading signed thinking block is kept",
			in:   []gw.Event{start(0, gw.PartThinking), sig(0, "g:S"), stop(0), start(1, gw.PartText), text(1, "A"), stop(1), finish},
			want: []gw.Event{start(0, gw.PartThinking), sig(0, "g:S"), stop(0), start(1, gw.PartText), text(1, "A"), stop(1), finish},
		},
		{
			name: "a stream cut inside a held block releases it",
			in:   []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartThinking), sig(1, "g:S"), {Type: gw.EventError}},
			want: []gw.Event{start(0, gw.PartText), text(0, "A"), stop(0), start(1, gw.PartThinking), sig(1, "g:S"), {Type: gw.EventError}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			f := NewCarrierFilter(&r)
			for _, ev := range tt.in {
				if err := f.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(r.evs, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", r.evs, tt.want)
			}
		})
	}
}

func TestSignaturesRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := newMem()
	c := &clock{t: time.Now()}
	k := newKeeper(t, st, c, nil)
	if k.KeepsSignatures("deepseek") || !k.KeepsSignatures("google") || (*Keeper)(nil).KeepsSignatures("google") {
		t.Fatal("KeepsSignatures")
	}
	answer := []gw.Part{
		{Type: gw.PartText, Text: "The answer."},
		{Type: gw.PartThinking, Signature: "g:SIG"},
	}
	if got := DropCarriers(answer); len(got) != 1 || got[0].Text != "The answer." || len(answer) != 2 {
		t.Fatalf("DropCarriers = %+v (input %+v)", got, answer)
	}
	if err := k.RememberSignatures(ctx, "acct_a", answer); err != nil {
		t.Fatal(err)
	}
	replay := func(acct string) *gw.Request {
		r := &gw.Request{Messages: []gw.Message{
			{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "The answer."}}},
			{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartText, Text: "The answer."}, {Type: gw.PartToolCall, ToolCallID: "c"}}},
			{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartText, Text: "Another."}}},
		}}
		if err := k.RestoreSignatures(ctx, acct, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := replay("acct_a")
	want := []gw.Part{{Type: gw.PartText, Text: "The answer."}, {Type: gw.PartThinking, Signature: "g:SIG"}, {Type: gw.PartToolCall, ToolCallID: "c"}}
	if !reflect.DeepEqual(r.Messages[1].Content, want) {
		t.Errorf("restored turn = %+v", r.Messages[1].Content)
	}
	if len(r.Messages[0].Content) != 1 || len(r.Messages[2].Content) != 1 {
		t.Errorf("a user turn or another text changed: %+v", r.Messages)
	}
	// A replay that kept the carrier is not given a second one.
	again := &gw.Request{Messages: []gw.Message{{Role: gw.RoleAssistant, Content: append([]gw.Part(nil), answer...)}}}
	_ = k.RestoreSignatures(ctx, "acct_a", again)
	if len(again.Messages[0].Content) != 2 {
		t.Errorf("carrier doubled: %+v", again.Messages[0].Content)
	}
	if r := replay("acct_b"); len(r.Messages[1].Content) != 2 {
		t.Errorf("another account's signature restored: %+v", r.Messages[1].Content)
	}
	c.t = c.t.Add(DefaultReasoningTTL)
	if r := replay("acct_a"); len(r.Messages[1].Content) != 2 {
		t.Errorf("an expired signature restored: %+v", r.Messages[1].Content)
	}
	st.fail = errors.New("down")
	r = &gw.Request{Messages: []gw.Message{{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartText, Text: "x"}}}}}
	if err := k.RestoreSignatures(ctx, "acct_a", r); err == nil || len(r.Messages[0].Content) != 1 {
		t.Errorf("store failure: err %v, content %+v", err, r.Messages[0].Content)
	}
	off := newKeeper(t, newMem(), c, func(cfg *Config) { cfg.ReasoningTTL = -1 })
	if off.KeepsSignatures("google") {
		t.Error("signatures kept with reasoning state off")
	}
}
