package fakevendor

import "encoding/json"

// messagesUsage returns Anthropic's usage object; input_tokens excludes
// cache reads and writes.
func messagesUsage(r *reply, output int) map[string]any {
	u := r.usage
	return map[string]any{
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
	b, _ := json.Marshal(map[string]any{
		"id": r.id, "type": "message", "role": "assistant", "model": c.model, "content": content,
		"stop_reason": r.stop, "stop_sequence": seq, "usage": messagesUsage(r, r.usage.output()),
	})
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
		"stop_reason": nil, "stop_sequence": nil, "usage": messagesUsage(r, 1),
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
	ev(frameOther, "message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": r.stop, "stop_sequence": seq},
		"usage": map[string]any{
			"input_tokens":                u.prompt - u.cacheRead - u.cacheWrite(),
			"cache_creation_input_tokens": u.cacheWrite(),
			"cache_read_input_tokens":     u.cacheRead,
			"output_tokens":               u.output(),
		},
	})
	ev(frameOther, "message_stop", map[string]any{})
	return fs
}
