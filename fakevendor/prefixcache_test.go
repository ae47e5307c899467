package fakevendor

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// postRaw sends body to vendor's chat or messages route and returns the
// decoded JSON answer.
func postRaw(t *testing.T, s *Server, vendor, model string, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, nativeURL(s, vendor, model, false), bytes.NewReader([]byte(body)))
	authorize(req, vendor, "", true)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func usageOf(m map[string]any) map[string]any { u, _ := m["usage"].(map[string]any); return u }

func TestPrefixCacheAnthropic(t *testing.T) {
	s := startServer(t)
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	long := strings.Repeat("Policy line for the assistant. ", 200) // ~1,550 tokens
	body := func(mark, user string) string {
		return `{"model":"claude-sonnet-5-5","max_tokens":64,"system":[{"type":"text","text":` + q(long) + mark + `}],` +
			`"messages":[{"role":"user","content":` + q(user) + `}]}`
	}
	const m5, m1 = `,"cache_control":{"type":"ephemeral"}`, `,"cache_control":{"type":"ephemeral","ttl":"1h"}`

	// Off by default: nothing cached.
	if u := usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", body(m5, "a"))); num(u["cache_creation_input_tokens"]) != 0 {
		t.Fatalf("prefix cache on by default: %v", u)
	}
	s.EnablePrefixCache(time.Minute)
	now := time.Unix(1e9, 0)
	s.prefixCache().now = func() time.Time { return now }

	if u := usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", body("", "a"))); num(u["cache_creation_input_tokens"])+num(u["cache_read_input_tokens"]) != 0 {
		t.Errorf("no marker, yet cached: %v", u)
	}
	u := usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", body(m5, "a")))
	w := num(u["cache_creation_input_tokens"])
	if w < 1024 || num(u["cache_read_input_tokens"]) != 0 || num(u["cache_creation"].(map[string]any)["ephemeral_5m_input_tokens"]) != w {
		t.Fatalf("first marked request: %v", u)
	}
	// Another conversation with the same system prompt reads it; the
	// marker's bytes are not part of the prefix.
	u = usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", body(m1, "b")))
	if num(u["cache_read_input_tokens"]) != w || num(u["cache_creation_input_tokens"]) != 0 {
		t.Errorf("second request: %v, want a read of %d", u, w)
	}
	in := num(u["input_tokens"])
	if in <= 0 || in+w != PromptTokens([]byte(body(m1, "b"))) {
		t.Errorf("input %d + read %d != prompt", in, w)
	}
	// Past the TTL the entry is gone and is written again (1h marker).
	now = now.Add(2 * time.Minute)
	u = usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", body(m1, "c")))
	if num(u["cache_read_input_tokens"]) != 0 || num(u["cache_creation"].(map[string]any)["ephemeral_1h_input_tokens"]) != w {
		t.Errorf("after the TTL: %v", u)
	}
	// Below the minimum nothing is cached.
	short := `{"model":"claude-sonnet-5-5","max_tokens":64,"system":[{"type":"text","text":"hi"` + m5 + `}],"messages":[{"role":"user","content":"x"}]}`
	postRaw(t, s, "anthropic", "claude-sonnet-5-5", short)
	if u := usageOf(postRaw(t, s, "anthropic", "claude-sonnet-5-5", short)); num(u["cache_read_input_tokens"])+num(u["cache_creation_input_tokens"]) != 0 {
		t.Errorf("short prefix cached: %v", u)
	}
}

func TestPrefixCacheAutomatic(t *testing.T) {
	s := startServer(t)
	s.EnablePrefixCache(0)
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	long := strings.Repeat("Background fact for the model. ", 200)
	msgs := `{"role":"system","content":` + q(long) + `},{"role":"user","content":"one"}`
	body := func(key, more string) string {
		return `{"model":"gpt-6-sol","messages":[` + msgs + more + `],"prompt_cache_key":"` + key + `"}`
	}
	ptd := func(m map[string]any) map[string]any { return usageOf(m)["prompt_tokens_details"].(map[string]any) }
	first := ptd(postRaw(t, s, "openai", "gpt-6-sol", body("k1", "")))
	if num(first["cached_tokens"]) != 0 || num(first["cache_write_tokens"]) < 1024 {
		t.Fatalf("first: %v", first)
	}
	next := ptd(postRaw(t, s, "openai", "gpt-6-sol", body("k1", `,{"role":"assistant","content":"two"},{"role":"user","content":"three"}`)))
	if r := num(next["cached_tokens"]); r < 1024 || r%128 != 0 {
		t.Errorf("next turn read %d, want the prefix in 128-token steps", r)
	}
	if other := ptd(postRaw(t, s, "openai", "gpt-6-sol", body("k2", ""))); num(other["cached_tokens"]) != 0 {
		t.Errorf("another prompt_cache_key read the cache: %v", other)
	}
	// DeepSeek reports hits and misses.
	d := `{"model":"deepseek-flash","messages":[` + msgs + `]}`
	postRaw(t, s, "deepseek", "deepseek-flash", d)
	u := usageOf(postRaw(t, s, "deepseek", "deepseek-flash", d))
	if num(u["prompt_cache_hit_tokens"]) < 1024 || num(u["prompt_cache_hit_tokens"])+num(u["prompt_cache_miss_tokens"]) != num(u["prompt_tokens"]) {
		t.Errorf("deepseek: %v", u)
	}
}

func TestReplyModel(t *testing.T) {
	s := startServer(t)
	const directive = "Be brief."
	ask := func(body string) string {
		m := postRaw(t, s, "openai", "gpt-6-sol", body)
		return m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	}
	with := `{"model":"gpt-6-sol","messages":[{"role":"system","content":"` + directive + `"},{"role":"user","content":"hi"}]}`
	if got := ask(with); got != DefaultText("openai", "gpt-6-sol") {
		t.Errorf("reply model on by default: %q", got)
	}
	s.EnableReplyModel(directive)
	if got := ask(with); got != ConciseText("openai", "gpt-6-sol") {
		t.Errorf("with the directive: %q", got)
	}
	if got := ask(`{"model":"gpt-6-sol","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`); !json.Valid([]byte(got)) {
		t.Errorf("JSON asked, got %q", got)
	}
	got := ask(`{"model":"gpt-6-sol","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}}`)
	if got != `{"n":1}` {
		t.Errorf("schema sample: %q", got)
	}
}
