package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/route"
)

// claudeCodeBody is a /v1/messages request with what current Claude Code
// sends: a per-turn system message after the user turn, adaptive thinking
// with display, output_config.effort, context_management, and tools with
// defer_loading and an explicit "custom" type.
func claudeCodeBody(model string) []byte {
	return []byte(`{"model":` + quote(model) + `,"max_tokens":32000,"stream":false,
 "system":[{"type":"text","text":"You are a coding assistant."}],
 "messages":[
  {"role":"user","content":[{"type":"text","text":"Say hi"}]},
  {"role":"system","content":[{"type":"text","text":"# Environment\nPlatform: linux","cache_control":{"type":"ephemeral"}}]}
 ],
 "thinking":{"type":"adaptive","display":"omitted"},
 "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},
 "output_config":{"effort":"max"},
 "tools":[
  {"name":"Read","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}},
  {"type":"custom","name":"DeferredToolPlaceholder","description":"never call","input_schema":{"type":"object","properties":{}},"defer_loading":true}
 ]}`)
}

// TestClaudeCodeFieldsOnEveryVendor: no vendor answers such a request with
// a 400; native Anthropic gets it as sent; mapped routes keep the system
// message at its place and list what they dropped.
func TestClaudeCodeFieldsOnEveryVendor(t *testing.T) {
	e := newEnv(t)
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			body := claudeCodeBody(v + "/" + nativeModels[v])
			resp := e.post("/v1/messages", e.key, body, "Anthropic-Version", "2023-06-01")
			got := readAll(t, resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			sent := e.lastRequest().Body
			dropped := resp.Header.Get("X-Gateway-Dropped-Fields")
			if v == "anthropic" {
				if !strings.Contains(string(sent), `{"role":"system","content":[{"type":"text","text":"# Environment`) || dropped != "" {
					t.Errorf("native: sent %s, dropped %q", sent, dropped)
				}
				return
			}
			for _, f := range []string{"context_management", "tools.defer_loading"} {
				if !strings.Contains(","+dropped+",", ","+f+",") {
					t.Errorf("x-gateway-dropped-fields = %q, want %s listed", dropped, f)
				}
			}
			var req map[string]json.RawMessage
			if err := json.Unmarshal(sent, &req); err != nil {
				t.Fatal(err)
			}
			if v == "google" {
				var g struct {
					SystemInstruction struct {
						Parts []struct{ Text string } `json:"parts"`
					} `json:"systemInstruction"`
					GenerationConfig struct {
						ThinkingConfig struct {
							IncludeThoughts bool   `json:"includeThoughts"`
							ThinkingLevel   string `json:"thinkingLevel"`
						} `json:"thinkingConfig"`
					} `json:"generationConfig"`
				}
				_ = json.Unmarshal(sent, &g)
				ps := g.SystemInstruction.Parts
				if len(ps) != 2 || ps[0].Text != "You are a coding assistant." || !strings.HasPrefix(ps[1].Text, "# Environment") {
					t.Errorf("systemInstruction = %+v", ps)
				}
				if tc := g.GenerationConfig.ThinkingConfig; tc.IncludeThoughts || tc.ThinkingLevel != "HIGH" {
					t.Errorf("thinkingConfig = %+v, want HIGH without thoughts (display omitted)", tc)
				}
				return
			}
			var msgs []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(req["messages"], &msgs)
			roles := []string{}
			for _, m := range msgs {
				roles = append(roles, m.Role)
			}
			if strings.Join(roles, ",") != "system,user,system" || !strings.Contains(string(msgs[2].Content), "# Environment") {
				t.Errorf("messages = %s, want the per-turn system message after the user turn", req["messages"])
			}
			var tools []json.RawMessage
			_ = json.Unmarshal(req["tools"], &tools)
			if len(tools) != 2 || strings.Contains(string(req["tools"]), "defer_loading") {
				t.Errorf("tools = %s, want both declared as functions", req["tools"])
			}
			wantEffort := map[string]string{"openai": `"xhigh"`, "mistral": `"xhigh"`, "together": `"high"`, "fireworks": `"high"`, "groq": `"high"`, "deepseek": `"max"`}[v]
			if v == "openrouter" {
				if string(req["reasoning"]) != `{"effort":"xhigh"}` {
					t.Errorf("reasoning = %s", req["reasoning"])
				}
			} else if string(req["reasoning_effort"]) != wantEffort {
				t.Errorf("reasoning_effort = %s, want %s", req["reasoning_effort"], wantEffort)
			}
		})
	}
}
