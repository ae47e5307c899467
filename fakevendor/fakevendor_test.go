package fakevendor

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func startServer(t *testing.T) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestBaseURLForms(t *testing.T) {
	root := "http://127.0.0.1:1"
	want := map[string]string{
		"openai":     root + "/openai/v1",
		"anthropic":  root + "/anthropic",
		"google":     root + "/google",
		"together":   root + "/together/v1",
		"fireworks":  root + "/fireworks/inference/v1",
		"groq":       root + "/groq/openai/v1",
		"mistral":    root + "/mistral/v1",
		"deepseek":   root + "/deepseek",
		"openrouter": root + "/openrouter/api/v1",
	}
	if len(Vendors()) != len(want) {
		t.Fatalf("Vendors() = %v", Vendors())
	}
	for _, v := range Vendors() {
		if got := BaseURLAt(root+"/", v); got != want[v] {
			t.Errorf("BaseURLAt(%s) = %q, want %q", v, got, want[v])
		}
	}
	if got := BaseURLAt(root, "nope"); got != "" {
		t.Errorf("unknown vendor base = %q", got)
	}
}

func TestDefaultReplyNonStreamParsesInVendorFormat(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			model := "model-" + v
			if v == "openrouter" {
				model = "openai/gpt-x"
			}
			resp, b, body := send(t, s, v, model, "hi there", reqOpts{})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content-type %q", ct)
			}
			if v == "deepseek" && !strings.HasPrefix(string(b), "\n") {
				t.Errorf("deepseek body should start with keep-alive blank lines: %q", b[:10])
			}
			p := parseBody(t, v, b)
			if p.text != DefaultText(v, model) {
				t.Errorf("text = %q", p.text)
			}
			if p.model != model {
				t.Errorf("model = %q, want %q", p.model, model)
			}
			P := PromptTokens(body)
			wantOut := Tokens(len(p.text))
			if p.prompt != P || p.output != wantOut {
				t.Errorf("usage prompt/output = %d/%d, want %d/%d (%v)", p.prompt, p.output, P, wantOut, p.usage)
			}
			wantFinish := map[string]string{"anthropic": "end_turn", "google": "STOP", "together": "eos"}[v]
			if wantFinish == "" {
				wantFinish = "stop"
			}
			if p.finish != wantFinish {
				t.Errorf("finish = %q, want %q", p.finish, wantFinish)
			}
			wantPrefix := map[string]string{"openai": "chatcmpl-", "anthropic": "msg_01", "groq": "chatcmpl-", "openrouter": "gen-"}[v]
			if !strings.HasPrefix(p.id, wantPrefix) || p.id == "" {
				t.Errorf("id = %q, want prefix %q", p.id, wantPrefix)
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			switch v {
			case "openrouter":
				u := m["usage"].(map[string]any)
				if _, ok := u["cost"]; !ok {
					t.Errorf("openrouter usage without cost: %v", u)
				}
				if m["provider"] != "OpenAI" {
					t.Errorf("provider = %v", m["provider"])
				}
			case "deepseek":
				u := m["usage"].(map[string]any)
				if num(u["prompt_cache_hit_tokens"])+num(u["prompt_cache_miss_tokens"]) != P {
					t.Errorf("deepseek hit+miss != prompt: %v", u)
				}
			case "groq":
				if _, ok := m["x_groq"]; !ok {
					t.Error("groq response without x_groq")
				}
			case "anthropic":
				if resp.Header.Get("request-id") == "" {
					t.Error("anthropic response without request-id header")
				}
			}
		})
	}
}

func TestDefaultReplyStreamParsesInVendorFormat(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		for _, includeUsage := range []bool{false, true} {
			if includeUsage && familyOf(v) != famChat {
				continue
			}
			name := v
			if includeUsage {
				name += "/include_usage"
			}
			t.Run(name, func(t *testing.T) {
				model := "model-" + v
				if v == "openrouter" {
					model = "anthropic/claude-x"
				}
				resp, b, body := send(t, s, v, model, "hello", reqOpts{stream: true, includeUsage: includeUsage})
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
					t.Errorf("content-type %q", ct)
				}
				p := parseStream(t, v, b)
				if len(p.errs) > 0 {
					t.Fatalf("errors in stream: %v", p.errs)
				}
				want := DefaultText(v, model)
				if p.text != want {
					t.Errorf("text = %q, want %q", p.text, want)
				}
				if p.chunks != len(splitWords(want)) || p.chunks < 3 {
					t.Errorf("content chunks = %d, want %d", p.chunks, len(splitWords(want)))
				}
				if p.model != model {
					t.Errorf("model = %q", p.model)
				}
				usageExpected := familyOf(v) != famChat || includeUsage ||
					map[string]bool{"together": true, "fireworks": true, "groq": true, "mistral": true, "openrouter": true}[v]
				P, O := PromptTokens(body), Tokens(len(want))
				switch {
				case usageExpected && (p.prompt != P || p.output != O):
					t.Errorf("usage = %d/%d, want %d/%d", p.prompt, p.output, P, O)
				case !usageExpected && p.usage != nil:
					t.Errorf("usage sent without include_usage: %v", p.usage)
				}
				s := string(b)
				switch familyOf(v) {
				case famChat:
					if !p.done || !strings.HasSuffix(s, "data: [DONE]\n\n") {
						t.Error("no [DONE] terminator")
					}
				case famMessages:
					if !p.done {
						t.Error("no message_stop")
					}
					for _, ev := range []string{"event: message_start\n", "event: ping\n", "event: content_block_start\n", "event: content_block_stop\n", "event: message_delta\n"} {
						if !strings.Contains(s, ev) {
							t.Errorf("missing %q", ev)
						}
					}
				case famGemini:
					if strings.Contains(s, "[DONE]") || !strings.Contains(s, "}\r\n\r\ndata: ") || !strings.HasSuffix(s, "\r\n\r\n") {
						t.Errorf("gemini framing wrong: %q", s)
					}
				}
				events := parseSSE(b)
				first := map[string]any{}
				for _, e := range events {
					if e.data != "" {
						_ = json.Unmarshal([]byte(e.data), &first)
						break
					}
				}
				switch v {
				case "openai":
					d := first["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
					if d["role"] != "assistant" || d["content"] != "" {
						t.Errorf("first delta = %v", d)
					}
					if _, ok := first["obfuscation"]; !ok {
						t.Error("no obfuscation field")
					}
					u, has := first["usage"]
					if includeUsage != has || u != nil {
						t.Errorf("first chunk usage present=%v value=%v, include_usage=%v", has, u, includeUsage)
					}
					if includeUsage && !strings.Contains(s, `"choices":[],`) {
						t.Error("no choices:[] usage chunk")
					}
				case "deepseek":
					if !strings.HasPrefix(s, ": keep-alive\n\n") {
						t.Error("no keep-alive comment")
					}
				case "openrouter":
					if !strings.HasPrefix(s, ": OPENROUTER PROCESSING\n\n") {
						t.Error("no processing comment")
					}
					if _, ok := p.usage["cost"]; !ok {
						t.Error("no cost")
					}
				case "groq":
					if !strings.Contains(s, `"x_groq":{"id":`) {
						t.Error("no x_groq")
					}
				}
			})
		}
	}
}

func TestAuthFailuresUseVendorBodies(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		for _, key := range []string{"-", "wrong"} {
			t.Run(v+"/"+key, func(t *testing.T) {
				resp, b, _ := send(t, s, v, "m/x", "hi", reqOpts{key: key})
				want := 401
				if v == "google" {
					want = map[string]int{"-": 403, "wrong": 400}[key]
				}
				if resp.StatusCode != want {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, b)
				}
				checkErrorShape(t, v, want, b)
			})
		}
	}
	t.Run("anthropic requires anthropic-version", func(t *testing.T) {
		resp, b, _ := send(t, s, "anthropic", "claude-x", "hi", reqOpts{noVersion: true})
		if resp.StatusCode != 400 || !strings.Contains(string(b), "anthropic-version") {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		checkErrorShape(t, "anthropic", 400, b)
	})
}

// checkErrorShape asserts b is vendor's error body for status.
func checkErrorShape(t *testing.T, vendor string, status int, b []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("error body not JSON: %s", b)
	}
	switch vendor {
	case "anthropic":
		e, _ := m["error"].(map[string]any)
		if m["type"] != "error" || e["type"] != anthropicType(status) || e["message"] == "" || !strings.HasPrefix(m["request_id"].(string), "req_") {
			t.Errorf("anthropic error body %s", b)
		}
	case "google":
		e, _ := m["error"].(map[string]any)
		if num(e["code"]) != status || e["status"] == nil || e["message"] == nil {
			t.Errorf("google error body %s", b)
		}
	case "mistral":
		if m["object"] != "error" || m["message"] == nil || m["type"] == nil {
			t.Errorf("mistral error body %s", b)
		}
	case "openrouter":
		e, _ := m["error"].(map[string]any)
		if num(e["code"]) != status || e["message"] == nil {
			t.Errorf("openrouter error body %s", b)
		}
	default:
		e, _ := m["error"].(map[string]any)
		if e["message"] == nil || e["type"] == nil {
			t.Errorf("%s error body %s", vendor, b)
		}
	}
}

func TestUnknownModelIsVendor404(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			resp, b, _ := send(t, s, v, "acme/missing-model", "hi", reqOpts{})
			if resp.StatusCode != 404 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			checkErrorShape(t, v, 404, b)
			if !strings.Contains(string(b), "missing-model") {
				t.Errorf("message does not name the model: %s", b)
			}
		})
	}
}

func TestBadRequestsAreRejected(t *testing.T) {
	s := startServer(t)
	tests := []struct {
		name, vendor, path, body string
		want                     int
	}{
		{"openai bad json", "openai", "/openai/v1/chat/completions", `{`, 400},
		{"openai no messages", "openai", "/openai/v1/chat/completions", `{"model":"m","messages":[]}`, 400},
		{"anthropic no max_tokens", "anthropic", "/anthropic/v1/messages", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 400},
		{"google no contents", "google", "/google/v1beta/models/g:generateContent", `{}`, 400},
		{"google stream without alt=sse", "google", "/google/v1beta/models/g:streamGenerateContent", `{"contents":[{"parts":[{"text":"x"}]}]}`, 400},
		{"openrouter model without provider", "openrouter", "/openrouter/api/v1/chat/completions", `{"model":"gpt","messages":[{"role":"user","content":"x"}]}`, 400},
		{"unknown directive", "groq", "/groq/openai/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"[fake:nope]"}]}`, 400},
		{"bad duration", "groq", "/groq/openai/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"[fake:slow=soon]"}]}`, 400},
		{"unknown path", "openai", "/openai/v1/completions", `{}`, 404},
		{"unknown vendor", "", "/acme/v1/chat/completions", `{}`, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, s.URL()+tt.path, strings.NewReader(tt.body))
			if tt.vendor != "" {
				authorize(req, tt.vendor, "", true)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, s.BaseURL("openai")+"/chat/completions", nil)
	authorize(req, "openai", "", false)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET status %d", resp.StatusCode)
	}
}

func TestVendorRequestRulesAreEnforced(t *testing.T) {
	s := startServer(t)
	tests := []struct {
		name, vendor, model, body, wantMsg string
	}{
		{"mistral rejects non 9-char tool call id", "mistral", "m",
			`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_abc","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_abc","content":"r"}]}`,
			"Tool call id was call_abc but must be a-z, A-Z, 0-9, with a length of 9."},
		{"deepseek requires reasoning_content on tool-call turns", "deepseek", "deepseek-flash",
			`{"model":"deepseek-flash","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
			"Missing `reasoning_content` field in the assistant message at message index 1"},
		{"openai rejects a tool message without its tool call", "openai", "m",
			`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
			"messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"},
		{"deepseek rejects a tool message without its tool call", "deepseek", "deepseek-flash",
			`{"model":"deepseek-flash","messages":[{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
			"Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
		{"groq rejects n above 1", "groq", "m", `{"model":"m","n":2,"messages":[{"role":"user","content":"x"}]}`, "'n' : number must be at most 1"},
		{"anthropic requires tool_result after tool_use", "anthropic", "claude-x",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":"next"}]}`,
			"`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"anthropic rejects orphan tool_result", "anthropic", "claude-x",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"r"}]}]}`,
			"unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{"anthropic rejects empty text block", "anthropic", "claude-x",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`,
			"text content blocks must be non-empty"},
		{"anthropic rejects whitespace-only text block", "anthropic", "claude-x",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":" \n"}]}]}`,
			"text content blocks must contain non-whitespace text"},
		{"anthropic rejects prefill ending in whitespace", "anthropic", "claude-x",
			`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"Sure "}]}`,
			"final assistant content cannot end with trailing whitespace"},
		{"gemini 3 requires thought signatures on replayed calls", "google", "gemini-3-pro",
			`{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"r":"1"}}}]}]}`,
			"Function call is missing a thought_signature in functionCall parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := s.BaseURL(tt.vendor)
			switch tt.vendor {
			case "anthropic":
				url += "/v1/messages"
			case "google":
				url += "/v1beta/models/" + tt.model + ":generateContent"
			default:
				url += "/chat/completions"
			}
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tt.body))
			authorize(req, tt.vendor, "", true)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(b), tt.wantMsg) {
				t.Errorf("status %d body %s", resp.StatusCode, b)
			}
			checkErrorShape(t, tt.vendor, 400, b)
		})
	}
	t.Run("deepseek accepts missing reasoning_content with thinking disabled", func(t *testing.T) {
		body := `{"model":"d","thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`
		req, _ := http.NewRequest(http.MethodPost, s.BaseURL("deepseek")+"/chat/completions", strings.NewReader(body))
		authorize(req, "deepseek", "", false)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}
