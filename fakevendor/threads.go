package fakevendor

import (
	"encoding/json"
	"net/http"
	"sync"
)

// Anthropic message threads (beta message-threads-2026-08-12), which the
// real API keeps server-side: a request with "thread": {"type":
// "create"} has its conversation kept under the answer's id; one with
// {"type": "continue", "previous_message_id": id} sends only the new
// messages, without system or tools (the thread keeps those), and is
// answered as if the kept conversation preceded them. An unknown id is a
// 404 not_found_error with error.details.error_code "thread_not_found",
// on which Anthropic's SDKs replay the whole conversation. Threads live as
// long as the Server.
type threads struct {
	mu sync.Mutex
	m  map[string]threadState
}

// threadState is a kept conversation.
type threadState struct {
	system, tools json.RawMessage
	messages      []json.RawMessage
}

// threadTurn is a threaded request in flight: saved with its answer.
type threadTurn struct {
	st threadState
}

// open reads c.body's thread field; on continue it replaces c.body with
// the expanded request. It returns the turn to save (nil: no thread) or
// the vendor's error answer.
func (t *threads) open(c *call) (*threadTurn, *vendorError) {
	var req map[string]json.RawMessage
	if json.Unmarshal(c.body, &req) != nil || len(req["thread"]) == 0 || string(req["thread"]) == "null" {
		return nil, nil
	}
	var th struct {
		Type              string `json:"type"`
		PreviousMessageID string `json:"previous_message_id"`
	}
	if json.Unmarshal(req["thread"], &th) != nil || (th.Type != "create" && th.Type != "continue") {
		return nil, newVendorError(c, "anthropic", 400, "thread: Input should be {\"type\": \"create\"} or {\"type\": \"continue\", \"previous_message_id\": ...}", 0)
	}
	var msgs []json.RawMessage
	if json.Unmarshal(req["messages"], &msgs) != nil {
		return nil, nil // decodeMessages says what is wrong
	}
	delete(req, "thread")
	turn := &threadTurn{st: threadState{system: req["system"], tools: req["tools"]}}
	if th.Type == "continue" {
		if req["system"] != nil || req["tools"] != nil {
			return nil, newVendorError(c, "anthropic", 400, "system and tools: not allowed with a thread continue; the thread keeps the ones it was created with", 0)
		}
		t.mu.Lock()
		prev, ok := t.m[th.PreviousMessageID]
		t.mu.Unlock()
		if !ok {
			return nil, threadNotFound(c, th.PreviousMessageID)
		}
		turn.st.system, turn.st.tools = prev.system, prev.tools
		msgs = append(append([]json.RawMessage{}, prev.messages...), msgs...)
		if prev.system != nil {
			req["system"] = prev.system
		}
		if prev.tools != nil {
			req["tools"] = prev.tools
		}
		req["messages"], _ = json.Marshal(msgs)
		c.body, _ = json.Marshal(req)
	}
	turn.st.messages = msgs
	return turn, nil
}

// save keeps the turn's conversation with the answer r under r.id.
func (t *threads) save(turn *threadTurn, r *reply) {
	content := []any{}
	if r.reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.reasoning, "signature": r.signature})
	}
	if r.text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.text})
	}
	for _, tc := range r.calls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.id, "name": tc.name, "input": toolInput(tc.args)})
	}
	answer, _ := json.Marshal(map[string]any{"role": "assistant", "content": content})
	st := turn.st
	st.messages = append(st.messages[:len(st.messages):len(st.messages)], answer)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]threadState{}
	}
	t.m[r.id] = st
}

// threadNotFound is Anthropic's answer to a continue of an unknown id.
func threadNotFound(c *call, id string) *vendorError {
	obj := errorObject(c, "anthropic", http.StatusNotFound, "No usable Thread state was found for previous_message_id "+id+". Replay the full conversation with thread type \"create\".", 0)
	obj["error"].(map[string]any)["details"] = map[string]any{"error_code": "thread_not_found"}
	body, _ := json.Marshal(obj)
	return &vendorError{status: http.StatusNotFound, body: body, header: http.Header{"Content-Type": {"application/json"}, "X-Should-Retry": {"false"}}}
}
