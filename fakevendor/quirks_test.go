package fakevendor

import (
	"net/http"
	"strings"
	"testing"
)

// The vendors' own deviations from OpenAI's wire format, which the fakes
// must reproduce (the gateway normalises them on native routes).
func TestChatVendorQuirks(t *testing.T) {
	s := startServer(t)
	t.Run("together ends a natural stop with eos and reports cached_tokens at the top of usage", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			_, b, _ := send(t, s, "together", "m", "hi [fake:cache=6]", reqOpts{stream: stream})
			var p parsed
			if stream {
				p = parseStream(t, "together", b)
			} else {
				p = parseBody(t, "together", b)
			}
			if p.finish != "eos" {
				t.Errorf("stream %v: finish = %q, want eos", stream, p.finish)
			}
			if num(p.usage["cached_tokens"]) != 6 || p.usage["prompt_tokens_details"] != nil {
				t.Errorf("stream %v: usage = %v, want top-level cached_tokens 6", stream, p.usage)
			}
		}
	})
	t.Run("mistral streams each tool call whole, without index and type", func(t *testing.T) {
		_, b, _ := send(t, s, "mistral", "m", "w [fake:tools=2]", reqOpts{stream: true, tools: []string{"get_weather"}})
		n := 0
		for _, ev := range parseSSE(b) {
			if strings.Contains(ev.data, `"tool_calls":[`) {
				n++
				if strings.Contains(ev.data, `"index":0,"id"`) || strings.Contains(ev.data, `"type":"function"`) {
					t.Errorf("tool call chunk carries index or type: %s", ev.data)
				}
			}
		}
		if p := parseStream(t, "mistral", b); n != 2 || len(p.calls) != 2 {
			t.Errorf("%d tool call chunks, %d calls, want 2 and 2", n, len(p.calls))
		}
	})
	t.Run("deepseek answers with reasoning_content whenever thinking is on", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			_, b, _ := send(t, s, "deepseek", "deepseek-flash", "hi", reqOpts{stream: stream, thinking: true})
			var p parsed
			if stream {
				p = parseStream(t, "deepseek", b)
			} else {
				p = parseBody(t, "deepseek", b)
			}
			if p.reasoning != ReasoningText("deepseek-flash") || !strings.HasPrefix(p.text, "Hello from") {
				t.Errorf("stream %v: reasoning %q text %q", stream, p.reasoning, p.text)
			}
		}
		_, b, _ := send(t, s, "deepseek", "deepseek-flash", "hi", reqOpts{})
		if p := parseBody(t, "deepseek", b); p.reasoning != "" {
			t.Errorf("thinking disabled: reasoning %q", p.reasoning)
		}
	})
}

func TestCallDirectiveCallsNamedTool(t *testing.T) {
	s := startServer(t)
	for _, v := range []string{"openai", "anthropic", "google", "mistral"} {
		t.Run(v, func(t *testing.T) {
			_, b, _ := send(t, s, v, "gemini-2.5-flash", `go [fake:call=lookup:{"city":"Oslo"}][fake:call=absent]`, reqOpts{tools: []string{"get_weather", "lookup"}})
			p := parseBody(t, v, b)
			if len(p.calls) != 1 || p.calls[0].name != "lookup" || p.calls[0].args != `{"city":"Oslo"}` {
				t.Errorf("calls = %+v, want one lookup call with the given arguments", p.calls)
			}
		})
	}
	resp, _, _ := send(t, s, "openai", "m", "[fake:call=lookup:[1]]", reqOpts{tools: []string{"lookup"}})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("arguments that are not an object: status %d, want 400", resp.StatusCode)
	}
}

func TestToolMessageMustAnswerACall(t *testing.T) {
	s := startServer(t)
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_1","content":"r"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"r"}]}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, s.BaseURL("openai")+"/chat/completions", strings.NewReader(body))
		authorize(req, "openai", "", false)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, resp.StatusCode)
		}
	}
}
