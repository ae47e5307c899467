package fakevendor

import "encoding/json"

// messagesUsage returns Anthropic's usage object; input_tokens excludes
// cache reads and writes.
func messagesUsage(c *call, r *reply, output int, final bool) map[string]any {
	u := r.usage
	m := map[string]any{
		"input_tokens":                u.prompt - u.cacheRead - u.cacheWrite(),
		"cache_creation_input_tokens": u.cacheWrite(),
		"cache_read_input_tokens":     u.cacheRead,
		"cache_creation": map[string]any{
			"ephemeral_5m_input_tokens": u.cache5m,
			"ephemeral_1h_input_tokens": u.cache1h,
		},
		"output_tokens": output,
		"service_tier":  "standard",
	}
	if d := c.dirs; d.searches > 0 || d.fetches > 0 {
		// Hosted tool calls: counted in server_tool_use, 0 at
		// message_start and the whole count in the final usage.
		n := func(k int) int {
			if final {
				return k
			}
			return 0
		}
		m["server_tool_use"] = map[string]any{"web_search_requests": n(d.searches), "web_fetch_requests": n(d.fetches)}
	}
	if c.fastMode() {
		m["speed"] = "fast"
	}
	return m
}

// container is the code-execution container an answer names
// ([fake:container]); nil when it ran none.
func container(c *call) any {
	if !c.dirs.container {
		return nil
	}
	return map[string]any{"id": "container_" + idFrom(c.seed, "container", 24), "expires_at": "2026-01-01T00:00:00Z"}
}

// toolInput decodes a tool call's JSON arguments.
func toolInput(args string) map[string]any {
	in := map[string]any{}
	_ = json.Unmarshal([]byte(args), &in)
	return in
}

// messagesBody returns a non-stream Messages response.
func messagesBody(c *call, r *reply) []byte {
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
	var seq any
	if r.stopSequence != "" {
		seq = r.stopSequence
	}
	m := map[string]any{
		"id": r.id, "type": "message", "role": "assistant", "model": c.model, "content": content,
		"stop_reason": r.stop, "stop_sequence": seq, "usage": messagesUsage(c, r, r.usage.output(), true),
	}
	if ct := container(c); ct != nil {
		m["container"] = ct
	}
	b, _ := json.Marshal(m)
	return b
}

// messagesFrames returns the named events of a Messages stream.
func messagesFrames(c *call, r *reply) []frame {
	var fs []frame
	ev := func(kind frameKind, name string, v map[string]any) {
		v["type"] = name
		fs = append(fs, eventFrame(kind, name, v))
	}
	ev(framePre, "message_start", map[string]any{"message": map[string]any{
		"id": r.id, "type": "message", "role": "assistant", "model": c.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": messagesUsage(c, r, 1, false),
	}})
	ev(framePre, "ping", map[string]any{})
	idx := 0
	if r.reasoning != "" {
		ev(frameOther, "content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, p := range r.reasonPieces {
			ev(frameContent, "content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
		}
		ev(frameOther, "content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "signature_delta", "signature": r.signature}})
		ev(frameOther, "content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if r.text != "" {
		ev(frameOther, "content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range r.textPieces {
			ev(frameContent, "content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		ev(frameOther, "content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for _, tc := range r.calls {
		ev(frameOther, "content_block_start", map[string]any{"index": idx, "content_block": map[string]any{
			"type": "tool_use", "id": tc.id, "name": tc.name, "input": map[string]any{},
		}})
		for _, p := range tc.pieces {
			ev(frameContent, "content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		ev(frameOther, "content_block_stop", map[string]any{"index": idx})
		idx++
	}
	var seq any
	if r.stopSequence != "" {
		seq = r.stopSequence
	}
	u := r.usage
	delta := map[string]any{"stop_reason": r.stop, "stop_sequence": seq}
	if ct := container(c); ct != nil {
		// A stream names its container in message_delta's delta.
		delta["container"] = ct
	}
	usage := map[string]any{
		"input_tokens":                u.prompt - u.cacheRead - u.cacheWrite(),
		"cache_creation_input_tokens": u.cacheWrite(),
		"cache_read_input_tokens":     u.cacheRead,
		"output_tokens":               u.output(),
	}
	if d := c.dirs; d.searches > 0 || d.fetches > 0 {
		usage["server_tool_use"] = map[string]any{"web_search_requests": d.searches, "web_fetch_requests": d.fetches}
	}
	ev(frameOther, "message_delta", map[string]any{"delta": delta, "usage": usage})
	ev(frameOther, "message_stop", map[string]any{})
	return fs
}
