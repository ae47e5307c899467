package convstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// memStore is an in-memory Store for the unit tests (the real stores run
// storetest.RunState).
type memStore struct {
	mu   sync.Mutex
	m    map[[3]string]memEntry
	fail error
}

type memEntry struct {
	v   []byte
	exp time.Time
}

func newMem() *memStore { return &memStore{m: map[[3]string]memEntry{}} }

func (s *memStore) PutState(_ context.Context, kind, acct, key string, v []byte, exp time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.m[[3]string{kind, acct, key}] = memEntry{bytes.Clone(v), exp}
	return nil
}

func (s *memStore) GetState(_ context.Context, kind, acct, key string, now time.Time) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	e, ok := s.m[[3]string{kind, acct, key}]
	if !ok || !now.Before(e.exp) {
		return nil, gw.ErrNotFound
	}
	return bytes.Clone(e.v), nil
}

func (s *memStore) SweepState(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, e := range s.m {
		if !now.Before(e.exp) {
			delete(s.m, k)
			n++
		}
	}
	return n, nil
}

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newKeeper(t *testing.T, st Store, c *clock, mod func(*Config)) *Keeper {
	t.Helper()
	cfg := Config{Store: st, Now: c.now}
	if mod != nil {
		mod(&cfg)
	}
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestDecodeThread(t *testing.T) {
	tests := []struct {
		body    string
		want    *Thread
		wantErr string
	}{
		{`{"model":"m"}`, nil, ""},
		{`{"thread":null}`, nil, ""},
		{`{"thread":{"type":"create"}}`, &Thread{Type: "create"}, ""},
		{`{"thread":{"type":"continue","previous_message_id":"req_1"}}`, &Thread{Type: "continue", PreviousMessageID: "req_1"}, ""},
		{`{"thread":{"type":"continue"}}`, nil, "previous_message_id: field required"},
		{`{"thread":{"type":"create","previous_message_id":"x"}}`, nil, "only allowed"},
		{`{"thread":{"type":"fork"}}`, nil, `got "fork"`},
		{`{"thread":"create"}`, nil, "must be an object"},
	}
	for _, tt := range tests {
		got, err := DecodeThread([]byte(tt.body))
		if tt.wantErr != "" {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want invalid_request with %q", tt.body, err, tt.wantErr)
			}
			continue
		}
		if err != nil || (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s = %+v, %v; want %+v", tt.body, got, err, tt.want)
		}
	}
}

// TestThreadKeepsEverythingAndExpires: a created thread, saved with its
// answer, expands a continue with exactly the stored system, tools and
// turns (signatures and tool calls intact) before the new ones; it is not
// found for another account, after its TTL, or with threads off.
func TestThreadKeepsEverythingAndExpires(t *testing.T) {
	ctx := context.Background()
	st, c := newMem(), &clock{t: time.Date(2026, 8, 12, 10, 0, 0, 0, time.UTC)}
	k := newKeeper(t, st, c, func(cfg *Config) { cfg.ThreadTTL = time.Hour })
	create := &gw.Request{
		System:   []gw.Part{{Type: gw.PartText, Text: "be terse"}},
		Tools:    []gw.Tool{{Name: "get_time", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "time?"}}}},
		Dropped:  []string{"context_management", "thread"},
	}
	turn, err := k.Open(ctx, "acct_a", &Thread{Type: ThreadCreate}, create)
	if err != nil {
		t.Fatal(err)
	}
	if len(create.Dropped) != 1 || create.Dropped[0] != "context_management" {
		t.Errorf("Dropped = %v: thread is honoured, not dropped", create.Dropped)
	}
	answer := []gw.Part{
		{Type: gw.PartThinking, Text: "", Signature: "gemini:c2ln"},
		{Type: gw.PartToolCall, ToolCallID: "call_1_gts_c2ln", ToolName: "get_time", Arguments: json.RawMessage(`{"zone":"UTC"}`), Signature: "gemini:c2ln"},
	}
	if err := turn.Save(ctx, "req_1", answer); err != nil {
		t.Fatal(err)
	}
	next := func() *gw.Request {
		return &gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartToolResult, ToolCallID: "call_1_gts_c2ln", Content: []gw.Part{{Type: gw.PartText, Text: "10:00"}}}}}}}
	}
	r := next()
	turn2, err := k.Open(ctx, "acct_a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_1"}, r)
	if err != nil {
		t.Fatal(err)
	}
	want := &gw.Request{
		System: create.System, Tools: create.Tools,
		Messages: []gw.Message{create.Messages[0], {Role: gw.RoleAssistant, Content: answer}, next().Messages[0]},
	}
	gotJSON, _ := json.Marshal(r)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("expanded request:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	if turn2.ExtraBytes() <= 0 {
		t.Errorf("ExtraBytes = %d, want the stored thread's size", turn2.ExtraBytes())
	}

	notFound := func(what, acct, id string) {
		t.Helper()
		_, err := k.Open(ctx, acct, &Thread{Type: ThreadContinue, PreviousMessageID: id}, next())
		var e *gw.Error
		if !errors.As(err, &e) || e.Code != gw.CodeNotFound || e.ErrorCode != ErrorThreadNotFound {
			t.Errorf("%s: err = %v, want not_found / thread_not_found", what, err)
		}
	}
	notFound("unknown id", "acct_a", "req_2")
	notFound("other account", "acct_b", "req_1")

	// Answering the continue keeps the thread under the new id and marks
	// the continued one: each answer can be continued once.
	if err := turn2.Save(ctx, "req_2", []gw.Part{{Type: gw.PartText, Text: "It is 10:00."}}); err != nil {
		t.Fatal(err)
	}
	_, err = k.Open(ctx, "acct_a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_1"}, next())
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeInvalidRequest || e.ErrorCode != ErrorThreadAlreadyContinued {
		t.Errorf("second continue of req_1: err = %v, want invalid_request / thread_already_continued", err)
	}
	r3 := &gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "thanks"}}}}}
	if _, err := k.Open(ctx, "acct_a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_2"}, r3); err != nil || len(r3.Messages) != 5 {
		t.Errorf("continue of req_2: %v, %d messages, want 5", err, len(r3.Messages))
	}
	if len(st.m[[3]string{KindThread, "acct_a", "req_1"}].v) != 0 {
		t.Error("the continued thread's copy was kept")
	}

	c.t = c.t.Add(time.Hour)
	notFound("expired", "acct_a", "req_2")

	// A continue must not bring system or tools of its own.
	_, err = k.Open(ctx, "acct_a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_1"}, &gw.Request{System: []gw.Part{{Type: gw.PartText, Text: "x"}}})
	if gw.ErrorCode(err) != gw.CodeInvalidRequest {
		t.Errorf("system on continue: err = %v, want invalid_request", err)
	}

	// Threads off: nothing stored, every continue not found.
	off := newKeeper(t, newMem(), c, func(cfg *Config) { cfg.ThreadTTL = -1 })
	tr, err := off.Open(ctx, "acct_a", &Thread{Type: ThreadCreate}, &gw.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Save(ctx, "req_9", answer); err != nil {
		t.Fatal(err)
	}
	if _, err := off.Open(ctx, "acct_a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_9"}, next()); gw.ErrorCode(err) != gw.CodeNotFound {
		t.Errorf("threads off: err = %v, want not_found", err)
	}
}

func TestThreadSizeBoundAndStoreFailure(t *testing.T) {
	ctx := context.Background()
	st, c := newMem(), &clock{t: time.Now()}
	k := newKeeper(t, st, c, func(cfg *Config) { cfg.ThreadMaxBytes = 200 })
	long := &gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: strings.Repeat("x", 300)}}}}}
	turn, _ := k.Open(ctx, "a", &Thread{Type: ThreadCreate}, long)
	if err := turn.Save(ctx, "req_long", nil); err != nil {
		t.Fatal(err)
	}
	if len(st.m) != 0 {
		t.Errorf("a thread over the bound was stored")
	}
	st.fail = errors.New("disk on fire")
	turn, _ = k.Open(ctx, "a", &Thread{Type: ThreadCreate}, &gw.Request{})
	if err := turn.Save(ctx, "req_x", nil); err == nil {
		t.Error("Save hid a store failure")
	}
	if _, err := k.Open(ctx, "a", &Thread{Type: ThreadContinue, PreviousMessageID: "req_x"}, &gw.Request{}); gw.ErrorCode(err) != gw.CodeInternal {
		t.Errorf("a store failure on continue: err = %v, want internal_error (not a false not_found)", err)
	}
}

// TestRestoreBodyChangesOnlyWhatIsMissing: the relayed body keeps every
// byte except the reasoning_content added to the assistant tool-call
// turns that lack it and have reasoning kept, for the same account.
func TestRestoreBodyChangesOnlyWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Now()}
	k := newKeeper(t, newMem(), c, nil)
	if err := k.RememberReasoning(ctx, "acct_a", []string{"call_A", "call_B"}, "I should \"check\" the weather."); err != nil {
		t.Fatal(err)
	}
	if err := k.RememberReasoning(ctx, "acct_a", []string{"call_C"}, ""); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"deepseek-flash",  "messages":[{"role":"user","content":"w?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_A","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_B","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_A","content":"1"},{"role":"tool","tool_call_id":"call_B","content":"2"},` +
		`{"role":"assistant","content":null,"reasoning_content":"mine","tool_calls":[{"id":"call_C","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_C","content":"3"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_Z","type":"function","function":{"name":"f","arguments":"{}"}}]}],"stream":true}`
	out, err := k.RestoreBody(ctx, "acct_a", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(body, `{"id":"call_B","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`{"id":"call_B","type":"function","function":{"name":"f","arguments":"{}"}}],"reasoning_content":"I should \"check\" the weather."}`, 1)
	if string(out) != want {
		t.Errorf("restored body:\n got %s\nwant %s", out, want)
	}
	// Another account, or nothing to restore: the very same bytes.
	if out, err := k.RestoreBody(ctx, "acct_b", []byte(body)); err != nil || string(out) != body {
		t.Errorf("another account: body changed: %s", out)
	}
	plain := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if out, _ := k.RestoreBody(ctx, "acct_a", plain); &out[0] != &plain[0] {
		t.Error("a body with no tool calls was copied")
	}
	// After the TTL nothing is restored.
	c.t = c.t.Add(DefaultReasoningTTL)
	if out, _ := k.RestoreBody(ctx, "acct_a", []byte(body)); string(out) != body {
		t.Errorf("expired reasoning restored: %s", out)
	}
}

func TestRestoreRequestAndCollector(t *testing.T) {
	ctx := context.Background()
	k := newKeeper(t, newMem(), &clock{t: time.Now()}, nil)
	// A relayed stream: reasoning deltas, then a tool call.
	var col Collector
	for _, chunk := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}`,
		`{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Think"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":"ing."}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_S","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1}}`,
	} {
		col.Chunk([]byte(chunk))
	}
	if err := col.Remember(ctx, k, "acct_a"); err != nil {
		t.Fatal(err)
	}
	r := &gw.Request{Messages: []gw.Message{
		{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "w?"}}},
		{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartToolCall, ToolCallID: "call_S", ToolName: "f"}}},
		{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartThinking, Text: "own"}, {Type: gw.PartToolCall, ToolCallID: "call_S", ToolName: "f"}}},
	}}
	if err := k.RestoreRequest(ctx, "acct_a", r); err != nil {
		t.Fatal(err)
	}
	if p := r.Messages[1].Content; len(p) != 2 || p[0].Type != gw.PartThinking || p[0].Text != "Thinking." {
		t.Errorf("restored turn = %+v", p)
	}
	if p := r.Messages[2].Content; len(p) != 2 || p[0].Text != "own" {
		t.Errorf("a turn with its own thinking was changed: %+v", p)
	}
	// A mapped answer is remembered from its canonical content.
	if err := k.RememberResponse(ctx, "acct_a", []gw.Part{{Type: gw.PartThinking, Text: "Mapped."}, {Type: gw.PartToolCall, ToolCallID: "call_M"}}); err != nil {
		t.Fatal(err)
	}
	r = &gw.Request{Messages: []gw.Message{{Role: gw.RoleAssistant, Content: []gw.Part{{Type: gw.PartToolCall, ToolCallID: "call_M"}}}}}
	_ = k.RestoreRequest(ctx, "acct_b", r)
	if len(r.Messages[0].Content) != 1 {
		t.Errorf("another account's reasoning restored: %+v", r.Messages[0].Content)
	}
	_ = k.RestoreRequest(ctx, "acct_a", r)
	if p := r.Messages[0].Content; len(p) != 2 || p[0].Text != "Mapped." {
		t.Errorf("mapped answer's reasoning not restored: %+v", p)
	}
}
