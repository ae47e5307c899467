package main

import (
	"testing"
)

func TestProbeBodies(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RPM, c.TPM = 0, 0 })
	tools := `,"tools":[{"name":"w","input_schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}]`
	ctools := `,"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}]`
	for _, c := range []struct{ path, model, extra string }{
		{"/v1/messages", "openai/gpt-6-sol", `,"thinking":{"type":"enabled","budget_tokens":2000},"temperature":0.3,"stop_sequences":["END"],"metadata":{"user_id":"u1"},"tool_choice":{"type":"any"}` + tools},
		{"/v1/messages", "deepseek/deepseek-flash", `,"thinking":{"type":"disabled"},"top_k":3` + tools},
		{"/v1/messages", "google/gemini-3-flash", `,"thinking":{"type":"enabled","budget_tokens":9000},"stop_sequences":["END"],"tool_choice":{"type":"tool","name":"w"}` + tools},
		{"/v1/chat/completions", "anthropic/claude-sonnet-5-5", `,"reasoning_effort":"high","temperature":1.5,"stop":"END","user":"u1","tool_choice":"required","max_tokens":5000` + ctools},
		{"/v1/chat/completions", "google/gemini-3-flash", `,"reasoning_effort":"low","stop":["END"],"seed":5,"n":1` + ctools},
	} {
		var body []byte
		if c.path == "/v1/messages" {
			body = messagesBody(c.model, "hi [fake:stop=stop_sequence]", false, c.extra)
		} else {
			body = chatBody(c.model, "hi [fake:stop=stop_sequence]", false, c.extra)
		}
		resp := e.post(c.path, e.key, body)
		got := readAll(t, resp.Body)
		t.Logf("%s %s -> %d dropped=%q\n  vendor: %s\n  caller: %s", c.path, c.model, resp.StatusCode, resp.Header.Get("X-Gateway-Dropped-Fields"), e.lastRequest().Body, got)
	}
}
