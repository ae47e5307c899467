package fakevendor

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// created is the "created" timestamp of chat responses.
func created() int64 { return time.Now().Unix() }

// openrouterProvider names the provider OpenRouter reports for a model
// "<provider>/<model>".
func openrouterProvider(model string) string {
	p, _, _ := strings.Cut(model, "/")
	switch p {
	case "openai":
		return "OpenAI"
	case "anthropic":
		return "Anthropic"
	case "google":
		return "Google"
	case "meta-llama":
		return "Meta"
	case "mistralai":
		return "Mistral"
	case "deepseek":
		return "DeepSeek"
	case "x-ai":
		return "xAI"
	}
	if p == "" {
		return "Unknown"
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// openrouterCost is the usage.cost OpenRouter reports: the cost directive,
// or (prompt + 2 x completion) micro-USD, that is $1 per million input and
// $2 per million output tokens, as an exact decimal.
func openrouterCost(c *call, u counts) json.Number {
	if c.dirs.cost != "" {
		return json.Number(c.dirs.cost)
	}
	micro := u.prompt + 2*u.output()
	return json.Number(fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000))
}

// chatUsage returns the usage object of an OpenAI-compatible vendor.
func chatUsage(c *call, r *reply) map[string]any {
	u := r.usage
	out := u.output()
	m := map[string]any{"prompt_tokens": u.prompt, "completion_tokens": out, "total_tokens": u.prompt + out}
	reasoningDetails := func() map[string]any { return map[string]any{"reasoning_tokens": u.reasoning} }
	switch c.vendor {
	case "openai":
		ptd := map[string]any{"cached_tokens": u.cacheRead, "audio_tokens": 0}
		if w := u.cacheWrite(); w > 0 {
			ptd["cache_write_tokens"] = w
		}
		m["prompt_tokens_details"] = ptd
		m["completion_tokens_details"] = map[string]any{
			"reasoning_tokens": u.reasoning, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
		}
	case "deepseek":
		m["prompt_cache_hit_tokens"] = u.cacheRead
		m["prompt_cache_miss_tokens"] = u.prompt - u.cacheRead
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.cacheRead}
		if u.reasoning > 0 {
			m["completion_tokens_details"] = reasoningDetails()
		}
	case "groq":
		m["queue_time"] = 0.012
		m["prompt_time"] = 0.001
		m["completion_time"] = 0.02
		m["total_time"] = 0.021
		if c.dirs.cache || c.cached {
			m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.cacheRead}
		}
		if u.reasoning > 0 {
			m["completion_tokens_details"] = reasoningDetails()
		}
	case "fireworks":
		if c.dirs.cache || c.cached {
			m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.cacheRead}
		}
	case "openrouter":
		ptd := map[string]any{"cached_tokens": u.cacheRead, "audio_tokens": 0}
		if w := u.cacheWrite(); w > 0 {
			ptd["cache_write_tokens"] = w
		}
		m["prompt_tokens_details"] = ptd
		m["completion_tokens_details"] = reasoningDetails()
		m["cost"] = openrouterCost(c, u)
		m["is_byok"] = false
		m["cost_details"] = map[string]any{"upstream_inference_cost": nil}
	case "together":
		if c.dirs.cache {
			// Together reports cache hits as a top-level usage member.
			m["cached_tokens"] = u.cacheRead
		}
		if u.reasoning > 0 {
			m["completion_tokens_details"] = reasoningDetails()
		}
	}
	return m
}

// toolCallsJSON returns the tool_calls of a non-stream message. Mistral's
// entries carry no "type" (its API documents the field as optional and
// leaves it out of answers) and an "index"; the others say "function".
func toolCallsJSON(c *call, r *reply) []any {
	var out []any
	for i, tc := range r.calls {
		e := map[string]any{
			"id":       tc.id,
			"function": map[string]any{"name": tc.name, "arguments": tc.args},
		}
		if c.vendor == "mistral" {
			e["index"] = i
		} else {
			e["type"] = "function"
		}
		out = append(out, e)
	}
	return out
}

// mistralThinking is Mistral's thinking content chunk.
func mistralThinking(text string) map[string]any {
	return map[string]any{"type": "thinking", "thinking": []any{map[string]any{"type": "text", "text": text}}}
}

// chatBody returns a non-stream chat completion.
func chatBody(c *call, r *reply) []byte {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.text != "" {
		msg["content"] = r.text
	}
	if len(r.calls) > 0 {
		msg["tool_calls"] = toolCallsJSON(c, r)
	}
	if r.reasoning != "" {
		switch c.vendor {
		case "deepseek", "fireworks":
			msg["reasoning_content"] = r.reasoning
		case "groq", "together":
			msg["reasoning"] = r.reasoning
		case "openrouter":
			msg["reasoning"] = r.reasoning
			msg["reasoning_details"] = []any{map[string]any{"type": "reasoning.text", "text": r.reasoning, "format": "unknown", "index": 0}}
		case "mistral":
			content := []any{mistralThinking(r.reasoning)}
			if r.text != "" {
				content = append(content, map[string]any{"type": "text", "text": r.text})
			}
			msg["content"] = content
		}
	}
	switch c.vendor {
	case "openai":
		msg["refusal"] = nil
		msg["annotations"] = []any{}
	case "openrouter":
		msg["refusal"] = nil
	}
	choice := map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": r.stop}
	if c.vendor == "openrouter" {
		choice["native_finish_reason"] = r.stop
	}
	resp := map[string]any{
		"id": r.id, "object": "chat.completion", "created": created(), "model": c.model,
		"choices": []any{choice}, "usage": chatUsage(c, r),
	}
	switch c.vendor {
	case "openai":
		resp["service_tier"] = c.servedTier("default")
		resp["system_fingerprint"] = "fp_fake0001"
	case "groq":
		resp["system_fingerprint"] = "fp_fake0001"
		resp["x_groq"] = map[string]any{"id": "req_" + idFrom(c.seed, "xgroq", 26)}
	case "deepseek":
		resp["system_fingerprint"] = "fp_fake0001_prod0820_fp8_kvcache"
	case "openrouter":
		resp["provider"] = openrouterProvider(c.model)
	}
	b, _ := json.Marshal(resp)
	return b
}

// chatStream holds what every chunk of one C stream shares.
type chatStream struct {
	c       *call
	r       *reply
	created int64
	n       int // chunks made so far, for obfuscation padding
}

// chunk returns one chat.completion.chunk with the given choices.
func (s *chatStream) chunk(choices []any) map[string]any {
	c := s.c
	m := map[string]any{
		"id": s.r.id, "object": "chat.completion.chunk", "created": s.created, "model": c.model, "choices": choices,
	}
	switch c.vendor {
	case "openai":
		m["service_tier"] = c.servedTier("default")
		m["system_fingerprint"] = "fp_fake0001"
		if c.obfuscate {
			m["obfuscation"] = idFrom(c.seed, fmt.Sprintf("obf%d", s.n), 4+s.n%7)
		}
	case "groq", "deepseek":
		m["system_fingerprint"] = "fp_fake0001"
	case "openrouter":
		m["provider"] = openrouterProvider(c.model)
	}
	if c.includeUsage && (c.vendor == "openai" || c.vendor == "deepseek" || c.vendor == "groq") || c.vendor == "together" {
		m["usage"] = nil
	}
	s.n++
	return m
}

// deltaChunk returns a chunk with one choice carrying delta.
func (s *chatStream) deltaChunk(delta map[string]any, finish any) map[string]any {
	ch := map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}
	if s.c.vendor == "openrouter" {
		ch["native_finish_reason"] = finish
	}
	return s.chunk([]any{ch})
}

// chatFrames returns the frames of a C stream.
func chatFrames(c *call, r *reply) []frame {
	s := &chatStream{c: c, r: r, created: created()}
	var fs []frame
	data := func(kind frameKind, v any) { fs = append(fs, dataFrame(kind, v, "\n\n")) }
	switch c.vendor {
	case "deepseek":
		fs = append(fs, rawFrame(framePre, ": keep-alive\n\n"), rawFrame(framePre, ": keep-alive\n\n"))
	case "openrouter":
		fs = append(fs, rawFrame(framePre, ": OPENROUTER PROCESSING\n\n"))
	}
	first := map[string]any{"role": "assistant", "content": ""}
	switch c.vendor {
	case "openai":
		first["refusal"] = nil
	case "deepseek":
		first["content"] = nil
		if r.reasoning == "" {
			first["content"] = ""
		} else {
			first["reasoning_content"] = ""
		}
	}
	firstChunk := s.deltaChunk(first, nil)
	if c.vendor == "groq" {
		firstChunk["x_groq"] = map[string]any{"id": "req_" + idFrom(c.seed, "xgroq", 26)}
	}
	data(framePre, firstChunk)
	if c.vendor != "openai" {
		for _, p := range r.reasonPieces {
			var d map[string]any
			switch c.vendor {
			case "deepseek", "fireworks":
				d = map[string]any{"reasoning_content": p}
				if c.vendor == "deepseek" {
					d["content"] = nil
				}
			case "mistral":
				d = map[string]any{"content": []any{mistralThinking(p)}}
			default:
				d = map[string]any{"reasoning": p}
				if c.vendor == "openrouter" {
					d["content"] = ""
					d["reasoning_details"] = []any{map[string]any{"type": "reasoning.text", "text": p, "format": "unknown", "index": 0}}
				}
			}
			data(frameContent, s.deltaChunk(d, nil))
		}
	}
	for _, p := range r.textPieces {
		d := map[string]any{"content": p}
		if c.vendor == "deepseek" && r.reasoning != "" {
			d["reasoning_content"] = nil
		}
		data(frameContent, s.deltaChunk(d, nil))
	}
	for i, tc := range r.calls {
		if c.vendor == "mistral" {
			// Mistral sends each tool call whole in one chunk, without the
			// index and type OpenAI's stream carries.
			data(frameContent, s.deltaChunk(map[string]any{"tool_calls": []any{map[string]any{
				"id": tc.id, "function": map[string]any{"name": tc.name, "arguments": tc.args},
			}}}, nil))
			continue
		}
		data(frameContent, s.deltaChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.id, "type": "function",
			"function": map[string]any{"name": tc.name, "arguments": ""},
		}}}, nil))
		for _, p := range tc.pieces {
			data(frameContent, s.deltaChunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}}, nil))
		}
	}
	last := s.deltaChunk(map[string]any{}, r.stop)
	switch c.vendor {
	case "together", "fireworks", "mistral":
		last["usage"] = chatUsage(c, r)
	case "groq":
		last["x_groq"] = map[string]any{"id": "req_" + idFrom(c.seed, "xgroq", 26), "usage": chatUsage(c, r), "seed": 1234567}
	}
	data(frameOther, last)
	if c.includeUsage && (c.vendor == "openai" || c.vendor == "deepseek" || c.vendor == "groq") || c.vendor == "openrouter" {
		u := s.chunk([]any{})
		u["usage"] = chatUsage(c, r)
		data(frameOther, u)
	}
	fs = append(fs, rawFrame(frameOther, "data: [DONE]\n\n"))
	return fs
}

// chatStreamError returns the in-stream error frames of a C vendor.
func chatStreamError(c *call, r *reply) []frame {
	const msg = "The server had an error while processing your request (fake vendor)."
	s := &chatStream{c: c, r: r, created: created(), n: 1000}
	switch c.vendor {
	case "openrouter":
		ch := s.deltaChunk(map[string]any{"content": ""}, "error")
		ch["error"] = map[string]any{"code": 502, "message": "Provider returned error (fake vendor)", "metadata": map[string]any{"provider_name": openrouterProvider(c.model)}}
		return []frame{dataFrame(frameOther, ch, "\n\n"), rawFrame(frameOther, "data: [DONE]\n\n")}
	case "groq":
		ch := s.deltaChunk(map[string]any{}, nil)
		ch["x_groq"] = map[string]any{"id": "req_" + idFrom(c.seed, "xgroq", 26), "error": "stream stopped early: " + msg}
		return []frame{dataFrame(frameOther, ch, "\n\n")}
	}
	return []frame{dataFrame(frameOther, map[string]any{"error": map[string]any{
		"message": msg, "type": "server_error", "param": nil, "code": nil,
	}}, "\n\n")}
}

// streamFrames returns the frames of c's stream in its vendor's format.
func streamFrames(c *call, r *reply) []frame {
	switch familyOf(c.vendor) {
	case famMessages:
		return messagesFrames(c, r)
	case famGemini:
		return geminiFrames(c, r)
	}
	return chatFrames(c, r)
}

// streamError returns the frames of c's in-stream error.
func streamError(c *call, r *reply) []frame {
	switch familyOf(c.vendor) {
	case famMessages:
		return []frame{eventFrame(frameOther, "error", map[string]any{
			"type":       "error",
			"error":      map[string]any{"type": "overloaded_error", "message": "Overloaded"},
			"request_id": "req_011" + idFrom(c.seed, "request", 21),
		})}
	case famGemini:
		return []frame{dataFrame(frameOther, errorObject(c, "google", 503, "The model is overloaded. Please try again later.", 0), "\r\n\r\n")}
	}
	return chatStreamError(c, r)
}
