package fakevendor

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAnthropicThreads: create keeps the conversation under the answer's
// id; a continue with a lone tool_result is answered from it (the fake's
// request rules see the expanded conversation); an unknown id is 404
// thread_not_found; system on continue is refused.
func TestAnthropicThreads(t *testing.T) {
	s := startServer(t)
	post := func(body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.BaseURL("anthropic")+"/v1/messages", strings.NewReader(body))
		authorize(req, "anthropic", "", true)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return resp.StatusCode, m
	}
	status, first := post(`{"model":"claude-x","max_tokens":64,"system":"sys","thread":{"type":"create"},
		"tools":[{"name":"get_weather","input_schema":` + weatherSchema + `}],
		"messages":[{"role":"user","content":"weather? [fake:tool]"}]}`)
	if status != 200 || first["stop_reason"] != "tool_use" {
		t.Fatalf("create: %d %v", status, first)
	}
	var useID string
	for _, b := range first["content"].([]any) {
		if b := b.(map[string]any); b["type"] == "tool_use" {
			useID = b["id"].(string)
		}
	}
	status, second := post(`{"model":"claude-x","max_tokens":64,"thread":{"type":"continue","previous_message_id":"` + first["id"].(string) + `"},
		"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + useID + `","content":"sunny"}]}]}`)
	if status != 200 {
		t.Fatalf("continue: %d %v", status, second)
	}
	if c := second["content"].([]any); len(c) != 1 || c[0].(map[string]any)["text"] != "Tool said: sunny" {
		t.Errorf("continue answer = %v", second["content"])
	}
	status, nf := post(`{"model":"claude-x","max_tokens":64,"thread":{"type":"continue","previous_message_id":"msg_01nope"},"messages":[{"role":"user","content":"x"}]}`)
	e, _ := nf["error"].(map[string]any)
	if d, _ := e["details"].(map[string]any); status != 404 || e["type"] != "not_found_error" || d["error_code"] != "thread_not_found" {
		t.Errorf("unknown id: %d %v", status, nf)
	}
	status, bad := post(`{"model":"claude-x","max_tokens":64,"system":"again","thread":{"type":"continue","previous_message_id":"` + second["id"].(string) + `"},"messages":[{"role":"user","content":"x"}]}`)
	if status != 400 {
		t.Errorf("system on continue: %d %v", status, bad)
	}
}
