package fakevendor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// weatherSchema is the parameters schema of the test tool.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},` +
	`"metric":{"type":"boolean"},"unit":{"type":"string","enum":["f","c"]},"note":{"type":"string"}},` +
	`"required":["city","days","metric","unit"]}`

// wantWeatherArgs is what argsFor makes of weatherSchema.
const wantWeatherArgs = `{"city":"x","days":1,"metric":true,"unit":"f"}`

// reqOpts shapes a native test request.
type reqOpts struct {
	stream       bool
	includeUsage bool
	tools        []string // tool names, all with weatherSchema
	toolResult   string   // end the conversation with a tool result
	stopSeq      string
	noVersion    bool   // Anthropic: omit anthropic-version
	key          string // override the API key ("-" for none)
	// thinking leaves DeepSeek in thinking mode (its default: every
	// answer then carries reasoning); otherwise DeepSeek requests turn it
	// off, so that replies are plain text as for the other vendors.
	thinking bool
}

// nativeBody returns the request body for vendor in its own shape.
func nativeBody(vendor, model, text string, o reqOpts) []byte {
	var m map[string]any
	switch familyOf(vendor) {
	case famMessages:
		msgs := []any{map[string]any{"role": "user", "content": text}}
		if o.toolResult != "" {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": o.toolResult}}})
		}
		m = map[string]any{"model": model, "max_tokens": 256, "messages": msgs}
		if o.stream {
			m["stream"] = true
		}
		var tools []any
		for _, n := range o.tools {
			tools = append(tools, map[string]any{"name": n, "input_schema": json.RawMessage(weatherSchema)})
		}
		if tools != nil {
			m["tools"] = tools
		}
		if o.stopSeq != "" {
			m["stop_sequences"] = []string{o.stopSeq}
		}
	case famGemini:
		contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}}
		if o.toolResult != "" {
			contents = append(contents,
				map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{}}}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"result": o.toolResult}}}}})
		}
		m = map[string]any{"contents": contents}
		var decls []any
		for _, n := range o.tools {
			decls = append(decls, map[string]any{"name": n, "parameters": json.RawMessage(weatherSchema)})
		}
		if decls != nil {
			m["tools"] = []any{map[string]any{"functionDeclarations": decls}}
		}
	default:
		msgs := []any{map[string]any{"role": "user", "content": text}}
		if o.toolResult != "" {
			id := "call_1"
			if vendor == "mistral" {
				id = "abcDEF123"
			}
			asst := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "get_weather", "arguments": "{}"}}}}
			if vendor == "deepseek" {
				asst["reasoning_content"] = ""
			}
			msgs = append(msgs, asst, map[string]any{"role": "tool", "tool_call_id": id, "content": o.toolResult})
		}
		m = map[string]any{"model": model, "messages": msgs}
		if vendor == "deepseek" && !o.thinking {
			m["thinking"] = map[string]any{"type": "disabled"}
		}
		if o.stream {
			m["stream"] = true
		}
		if o.includeUsage {
			m["stream_options"] = map[string]any{"include_usage": true}
		}
		var tools []any
		for _, n := range o.tools {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": json.RawMessage(weatherSchema)}})
		}
		if tools != nil {
			m["tools"] = tools
		}
		if o.stopSeq != "" {
			m["stop"] = []string{o.stopSeq}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// nativeURL returns the URL a gateway would call.
func nativeURL(s *Server, vendor, model string, stream bool) string {
	base := s.BaseURL(vendor)
	switch familyOf(vendor) {
	case famMessages:
		return base + "/v1/messages"
	case famGemini:
		if stream {
			return base + "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		return base + "/v1beta/models/" + model + ":generateContent"
	}
	return base + "/chat/completions"
}

// send posts a native request and returns the response and its body.
func send(t *testing.T, s *Server, vendor, model, text string, o reqOpts) (*http.Response, []byte, []byte) {
	t.Helper()
	body := nativeBody(vendor, model, text, o)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, nativeURL(s, vendor, model, o.stream), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	authorize(req, vendor, o.key, !o.noVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: do: %v", vendor, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil && !o.stream {
		t.Fatalf("%s: read body: %v", vendor, err)
	}
	return resp, out, body
}

// authorize sets vendor's auth headers; key "" means the right one, "-"
// none.
func authorize(req *http.Request, vendor, key string, version bool) {
	req.Header.Set("Content-Type", "application/json")
	if key == "" {
		key = APIKey(vendor)
	}
	if key != "-" {
		switch vendor {
		case "anthropic":
			req.Header.Set("x-api-key", key)
		case "google":
			req.Header.Set("x-goog-api-key", key)
		default:
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	if vendor == "anthropic" && version {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
}

// sseEvent is one parsed SSE event.
type sseEvent struct {
	event    string
	data     string
	comments []string
}

// parseSSE splits a stream into events, accepting \n or \r\n.
func parseSSE(b []byte) []sseEvent {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	var out []sseEvent
	for _, block := range strings.Split(s, "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				e.comments = append(e.comments, line)
			case strings.HasPrefix(line, "event: "):
				e.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.data += strings.TrimPrefix(line, "data: ")
			}
		}
		out = append(out, e)
	}
	return out
}

// parsed is what a test extracts from any vendor's answer.
type parsed struct {
	id, model, text, reasoning, finish string
	calls                              []parsedCall
	prompt, output                     int // C prompt/completion; M input/output; G prompt/(candidates+thoughts)
	usage                              map[string]any
	chunks                             int // content-bearing stream events
	errs                               []string
	done                               bool // [DONE] / message_stop seen
}

type parsedCall struct{ id, name, args string }

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// parseChatMessage reads a C message or delta into p (deltas append).
func (p *parsed) addChatDelta(m map[string]any) bool {
	content := false
	switch c := m["content"].(type) {
	case string:
		p.text += c
		content = content || c != ""
	case []any: // Mistral chunks
		for _, x := range c {
			x := x.(map[string]any)
			switch x["type"] {
			case "text":
				p.text += x["text"].(string)
			case "thinking":
				for _, t := range x["thinking"].([]any) {
					p.reasoning += t.(map[string]any)["text"].(string)
				}
			}
			content = true
		}
	}
	for _, k := range []string{"reasoning", "reasoning_content"} {
		if r, ok := m[k].(string); ok && r != "" {
			p.reasoning += r
			content = true
		}
	}
	tcs, _ := m["tool_calls"].([]any)
	for i, x := range tcs {
		x := x.(map[string]any)
		idx := i
		if v, ok := x["index"]; ok {
			idx = num(v)
		} else if _, ok := x["id"]; ok {
			// Mistral: no index; each call comes whole with its id.
			idx = len(p.calls)
		} else {
			idx = max(len(p.calls)-1, 0)
		}
		for len(p.calls) <= idx {
			p.calls = append(p.calls, parsedCall{})
		}
		if id, ok := x["id"].(string); ok {
			p.calls[idx].id = id
		}
		if f, ok := x["function"].(map[string]any); ok {
			if n, ok := f["name"].(string); ok {
				p.calls[idx].name = n
			}
			if a, ok := f["arguments"].(string); ok {
				p.calls[idx].args += a
			}
		}
		content = true
	}
	return content
}

func (p *parsed) chatUsage(u map[string]any) {
	p.usage = u
	p.prompt, p.output = num(u["prompt_tokens"]), num(u["completion_tokens"])
}

func (p *parsed) geminiRecord(m map[string]any) bool {
	content := false
	if e, ok := m["error"]; ok {
		b, _ := json.Marshal(e)
		p.errs = append(p.errs, string(b))
	}
	p.id, _ = m["responseId"].(string)
	p.model, _ = m["modelVersion"].(string)
	cands, _ := m["candidates"].([]any)
	for _, c := range cands {
		c := c.(map[string]any)
		if f, ok := c["finishReason"].(string); ok {
			p.finish = f
		}
		ct, _ := c["content"].(map[string]any)
		parts, _ := ct["parts"].([]any)
		for _, x := range parts {
			x := x.(map[string]any)
			if fc, ok := x["functionCall"].(map[string]any); ok {
				a, _ := json.Marshal(fc["args"])
				id, _ := fc["id"].(string)
				p.calls = append(p.calls, parsedCall{id: id, name: fc["name"].(string), args: string(a)})
				content = true
				continue
			}
			t, _ := x["text"].(string)
			if x["thought"] == true {
				p.reasoning += t
			} else {
				p.text += t
			}
			content = content || t != ""
		}
	}
	if u, ok := m["usageMetadata"].(map[string]any); ok {
		p.usage = u
		p.prompt = num(u["promptTokenCount"])
		p.output = num(u["candidatesTokenCount"]) + num(u["thoughtsTokenCount"])
	}
	return content
}

// parseBody parses a non-stream answer of vendor.
func parseBody(t *testing.T, vendor string, b []byte) parsed {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", vendor, err, b)
	}
	var p parsed
	switch familyOf(vendor) {
	case famMessages:
		p.id, p.model, p.finish = m["id"].(string), m["model"].(string), m["stop_reason"].(string)
		for _, x := range m["content"].([]any) {
			x := x.(map[string]any)
			switch x["type"] {
			case "text":
				p.text += x["text"].(string)
			case "thinking":
				p.reasoning += x["thinking"].(string)
			case "tool_use":
				a, _ := json.Marshal(x["input"])
				p.calls = append(p.calls, parsedCall{id: x["id"].(string), name: x["name"].(string), args: string(a)})
			}
		}
		p.usage = m["usage"].(map[string]any)
		p.prompt, p.output = num(p.usage["input_tokens"]), num(p.usage["output_tokens"])
	case famGemini:
		p.geminiRecord(m)
	default:
		p.id, p.model = m["id"].(string), m["model"].(string)
		ch := m["choices"].([]any)[0].(map[string]any)
		p.finish = ch["finish_reason"].(string)
		p.addChatDelta(ch["message"].(map[string]any))
		p.chatUsage(m["usage"].(map[string]any))
	}
	return p
}

// parseStream parses a stream answer of vendor.
func parseStream(t *testing.T, vendor string, b []byte) parsed {
	t.Helper()
	var p parsed
	for _, e := range parseSSE(b) {
		if e.data == "" {
			continue
		}
		if e.data == "[DONE]" {
			p.done = true
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(e.data), &m); err != nil {
			p.errs = append(p.errs, "bad json: "+e.data)
			continue
		}
		switch familyOf(vendor) {
		case famMessages:
			switch e.event {
			case "message_start":
				msg := m["message"].(map[string]any)
				p.id, p.model = msg["id"].(string), msg["model"].(string)
			case "content_block_start":
				cb := m["content_block"].(map[string]any)
				if cb["type"] == "tool_use" {
					p.calls = append(p.calls, parsedCall{id: cb["id"].(string), name: cb["name"].(string)})
				}
			case "content_block_delta":
				d := m["delta"].(map[string]any)
				switch d["type"] {
				case "text_delta":
					p.text += d["text"].(string)
				case "thinking_delta":
					p.reasoning += d["thinking"].(string)
				case "input_json_delta":
					p.calls[len(p.calls)-1].args += d["partial_json"].(string)
				}
				if d["type"] != "signature_delta" {
					p.chunks++
				}
			case "message_delta":
				p.finish, _ = m["delta"].(map[string]any)["stop_reason"].(string)
				p.usage = m["usage"].(map[string]any)
				p.prompt, p.output = num(p.usage["input_tokens"]), num(p.usage["output_tokens"])
			case "message_stop":
				p.done = true
			case "error":
				p.errs = append(p.errs, e.data)
			}
		case famGemini:
			if p.geminiRecord(m) {
				p.chunks++
			}
		default:
			if e, ok := m["error"]; ok {
				b, _ := json.Marshal(e)
				p.errs = append(p.errs, string(b))
			}
			if xg, ok := m["x_groq"].(map[string]any); ok {
				if u, ok := xg["usage"].(map[string]any); ok {
					p.chatUsage(u)
				}
				if e, ok := xg["error"].(string); ok {
					p.errs = append(p.errs, e)
				}
			}
			p.id, _ = m["id"].(string)
			p.model, _ = m["model"].(string)
			if u, ok := m["usage"].(map[string]any); ok {
				p.chatUsage(u)
			}
			choices, _ := m["choices"].([]any)
			for _, ch := range choices {
				ch := ch.(map[string]any)
				if f, ok := ch["finish_reason"].(string); ok {
					p.finish = f
				}
				if p.addChatDelta(ch["delta"].(map[string]any)) {
					p.chunks++
				}
			}
		}
	}
	return p
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
