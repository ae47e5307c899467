package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/attackfamilies"
)

// familyBody writes a try of a family as a chat completions request: its
// turns as messages (a tool result after an assistant tool call), its
// tool descriptions as function tools.
func familyBody(model string, segs []gw.Text) []byte {
	type msg map[string]any
	var msgs []msg
	var tools []msg
	for i, s := range segs {
		switch s.Source {
		case gw.TextSystem:
			msgs = append(msgs, msg{"role": "system", "content": s.Text})
		case gw.TextUser:
			msgs = append(msgs, msg{"role": "user", "content": s.Text})
		case gw.TextAssistant:
			msgs = append(msgs, msg{"role": "assistant", "content": s.Text})
		case gw.TextTool:
			id := fmt.Sprintf("call_%d", i)
			msgs = append(msgs, msg{"role": "assistant", "content": nil, "tool_calls": []msg{{"id": id, "type": "function", "function": msg{"name": "read", "arguments": "{}"}}}},
				msg{"role": "tool", "tool_call_id": id, "content": s.Text})
		case gw.TextToolSpec:
			tools = append(tools, msg{"type": "function", "function": msg{"name": fmt.Sprintf("tool_%d", i), "description": s.Text, "parameters": msg{"type": "object"}}})
		}
	}
	body := msg{"model": model, "messages": msgs}
	if len(tools) > 0 {
		body["tools"] = tools
	}
	b, _ := json.Marshal(body)
	return b
}

// TestFamiliesNeverReachTheVendor: every family of the guard's outside
// check, ten tries each, each on a fresh account's key (so no
// cool-down hides a pass), end to end on chat completions: at most one
// try in ten reaches the vendor.
func TestFamiliesNeverReachTheVendor(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TPM = 0 })
	model := "openai/" + nativeModels["openai"]
	for _, f := range attackfamilies.All() {
		tries := f.Tries()
		reached := 0
		for k, segs := range tries {
			key, _, err := createKey(context.Background(), e.m.Store(), uniqueAccount("family"), gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			e.fake.Reset()
			resp := e.post("/v1/chat/completions", key, familyBody(model, segs))
			got := readAll(t, resp.Body)
			if n := len(e.fake.Requests()); n > 0 {
				reached++
				t.Logf("%s, try %d: reached the vendor (status %d)", f.Name, k, resp.StatusCode)
			} else if resp.StatusCode != 403 {
				t.Errorf("%s, try %d: status %d without reaching the vendor: %.200s", f.Name, k, resp.StatusCode, got)
			}
		}
		if len(tries) < 5 || reached*10 > len(tries) {
			t.Errorf("%s: %d of %d tries reached the vendor, want at most 1 in 10", f.Name, reached, len(tries))
		}
	}
}
