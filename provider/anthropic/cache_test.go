package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestAddCacheMarkers(t *testing.T) {
	long := strings.Repeat("You are a careful assistant. ", 200) // ~5.8 KB
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	body := `{"model":"claude-sonnet-5-5","system":` + q(long) + `,"tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{}}],` +
		`"messages":[{"role":"user","content":"one"},{"role":"assistant","content":"two"},{"role":"user","content":[{"type":"text","text":"three"},{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}`
	got := addCacheMarkers([]byte(body), "claude-sonnet-5-5")
	var v struct {
		System []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if n := bytes.Count(got, []byte("cache_control")); n != 4 {
		t.Errorf("%d markers, want 4 (the vendor's limit)", n)
	}
	if len(v.System) != 1 || v.System[0].Text != long || v.System[0].CacheControl == nil {
		t.Errorf("system not one marked block holding the caller's text")
	}
	if v.Tools[0].CacheControl != nil || v.Tools[1].CacheControl == nil {
		t.Errorf("want the marker on the last tool only")
	}
	if string(v.Messages[0].Content) != `[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}}]` {
		t.Errorf("previous user turn: %s", v.Messages[0].Content)
	}
	if string(v.Messages[1].Content) != `"two"` {
		t.Errorf("assistant turn changed: %s", v.Messages[1].Content)
	}
	if !bytes.HasSuffix(v.Messages[2].Content, []byte(`"content":"x","cache_control":{"type":"ephemeral"}}]`)) || bytes.Count(v.Messages[2].Content, []byte("cache_control")) != 1 {
		t.Errorf("last user turn: %s", v.Messages[2].Content)
	}
	// Without the markers, the body is the caller's.
	unmarked := strings.NewReplacer(`,"cache_control":{"type":"ephemeral"}`, "").Replace(string(got))
	unmarked = strings.Replace(unmarked, `[{"type":"text","text":`+q(long)+`}]`, q(long), 1)
	unmarked = strings.Replace(unmarked, `[{"type":"text","text":"one"}]`, `"one"`, 1)
	if unmarked != body {
		t.Errorf("other bytes changed:\n%s\n%s", unmarked, body)
	}

	for name, in := range map[string]string{
		"caller's own marker": strings.Replace(body, `"name":"a",`, `"name":"a","cache_control":{"type":"ephemeral"},`, 1),
		"too short":           `{"model":"m","system":"short","messages":[{"role":"user","content":"hi"}]}`,
	} {
		if got := addCacheMarkers([]byte(in), "claude-sonnet-5-5"); string(got) != in {
			t.Errorf("%s: body changed: %s", name, got)
		}
	}
}
