package fakevendor

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Reading and checking the requests the fake receives, in each vendor's wire shape.

// badRequest is a request the fake rejects with the vendor's 400 (or the
// given status).
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

func bad(format string, args ...any) *badRequest {
	return &badRequest{status: 400, msg: fmt.Sprintf(format, args...)}
}

// textOf returns the text of a C or M content value: a string, or the
// concatenated "text" of an array of parts.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// decodeChat decodes a chat completions request.
func decodeChat(c *call) error {
	var req struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		N        *int          `json:"n"`
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage       bool  `json:"include_usage"`
			IncludeObfuscation *bool `json:"include_obfuscation"`
		} `json:"stream_options"`
		Stop json.RawMessage `json:"stop"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil {
		return bad("We could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return bad("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return bad("[] is too short - 'messages'")
	}
	thinkingOff := req.Thinking != nil && req.Thinking.Type == "disabled"
	if err := validateChat(c.vendor, req.Messages, req.N, thinkingOff); err != nil {
		return err
	}
	c.model, c.stream = req.Model, req.Stream
	// DeepSeek thinks by default and then always answers with
	// reasoning_content.
	c.thinking = c.vendor == "deepseek" && !thinkingOff
	c.obfuscate = c.vendor == "openai"
	if o := req.StreamOptions; o != nil {
		c.includeUsage = o.IncludeUsage
		if o.IncludeObfuscation != nil && !*o.IncludeObfuscation {
			c.obfuscate = false
		}
	}
	for _, t := range req.Tools {
		if t.Function.Name != "" {
			c.tools = append(c.tools, toolDecl{name: t.Function.Name, schema: t.Function.Parameters})
		}
	}
	var stops []string
	if json.Unmarshal(req.Stop, &stops) != nil {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil && one != "" {
			stops = []string{one}
		}
	}
	c.stopSequences = stops
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		c.toolResults = append([]string{textOf(req.Messages[i].Content)}, c.toolResults...)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			if t := textOf(m.Content); t != "" {
				c.userText = t
				break
			}
		}
	}
	return nil
}

// chatMessage is the part of a C message the fake reads.
type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
	ToolCallID       string  `json:"tool_call_id"`
	ReasoningContent *string `json:"reasoning_content"`
}

var mistralIDRE = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// validateChat enforces the request rules of the OpenAI-compatible
// vendors that gateways are known to break: a tool message that answers
// no call of the assistant turn before it (all vendors), Mistral's
// 9-character tool call ids, DeepSeek's reasoning_content on assistant tool-call turns in
// thinking mode, Groq's n == 1.
func validateChat(vendor string, msgs []chatMessage, n *int, thinkingOff bool) error {
	if err := orphanToolMessage(vendor, msgs); err != nil {
		return err
	}
	switch vendor {
	case "groq":
		if n != nil && *n > 1 {
			return bad("'n' : number must be at most 1")
		}
	case "mistral":
		for _, m := range msgs {
			ids := []string{}
			for _, tc := range m.ToolCalls {
				ids = append(ids, tc.ID)
			}
			if m.Role == "tool" {
				ids = append(ids, m.ToolCallID)
			}
			for _, id := range ids {
				if !mistralIDRE.MatchString(id) {
					return bad("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", id)
				}
			}
		}
	case "deepseek":
		if thinkingOff {
			return nil
		}
		for i, m := range msgs {
			if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == nil {
				return bad("Missing `reasoning_content` field in the assistant message at message index %d. The reasoning_content in the thinking mode must be passed back to the API.", i)
			}
		}
	}
	return nil
}

// orphanToolMessage refuses, as the OpenAI-compatible vendors do, a tool
// message that answers no call of the assistant message before its run of
// tool messages: a conversation cut before its tool call, or a stray id.
func orphanToolMessage(vendor string, msgs []chatMessage) error {
	// A tool message answers a call of the assistant message right before
	// its run of tool messages, as every OpenAI-compatible vendor checks.
	var open []string
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			open = open[:0]
			for _, tc := range m.ToolCalls {
				open = append(open, tc.ID)
			}
		case "tool":
			if slices.Contains(open, m.ToolCallID) {
				continue
			}
			if vendor == "deepseek" {
				return bad("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'")
			}
			return bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
		default:
			open = open[:0]
		}
	}
	return nil
}

// messagesBlock is the part of a Messages content block the fake reads.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// validateMessages enforces Anthropic's conversation rules: non-empty
// content (except a final assistant prefill), non-empty text blocks, and
// every tool_use answered by a tool_result in the next message (and no
// tool_result without its tool_use).
func validateMessages(msgs []messagesMessage) error {
	blocksOf := func(i int) []messagesBlock {
		var bs []messagesBlock
		_ = json.Unmarshal(msgs[i].Content, &bs)
		return bs
	}
	for i, m := range msgs {
		var str string
		isString := json.Unmarshal(m.Content, &str) == nil
		bs := blocksOf(i)
		last := i == len(msgs)-1
		if (isString && str == "" || !isString && len(bs) == 0) && !(last && m.Role == "assistant") {
			return bad("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		for j, b := range bs {
			switch {
			case b.Type != "text":
			case b.Text == nil || *b.Text == "":
				return bad("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
			case strings.TrimSpace(*b.Text) == "":
				return bad("messages.%d.content.%d.text: text content blocks must contain non-whitespace text", i, j)
			}
		}
		if last && m.Role == "assistant" && isString && str != strings.TrimRight(str, " \t\r\n") {
			return bad("messages: final assistant content cannot end with trailing whitespace")
		}
		if m.Role == "assistant" {
			answered := map[string]bool{}
			if i+1 < len(msgs) {
				for _, b := range blocksOf(i + 1) {
					if b.Type == "tool_result" {
						answered[b.ToolUseID] = true
					}
				}
			}
			var missing []string
			for _, b := range bs {
				if b.Type == "tool_use" && !answered[b.ID] {
					missing = append(missing, b.ID)
				}
			}
			if len(missing) > 0 && !last {
				return bad("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
			}
		}
		if m.Role == "user" {
			asked := map[string]bool{}
			if i > 0 {
				for _, b := range blocksOf(i - 1) {
					if b.Type == "tool_use" {
						asked[b.ID] = true
					}
				}
			}
			for j, b := range bs {
				if b.Type == "tool_result" && !asked[b.ToolUseID] {
					return bad("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
			}
		}
	}
	return nil
}

// messagesMessage is one Messages conversation turn.
type messagesMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// decodeMessages decodes an Anthropic Messages request.
func decodeMessages(c *call) error {
	var req struct {
		Model     string            `json:"model"`
		MaxTokens *int              `json:"max_tokens"`
		Messages  []messagesMessage `json:"messages"`
		Tools     []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Stream        bool     `json:"stream"`
		StopSequences []string `json:"stop_sequences"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil {
		return bad("There was an error parsing the body of your request: %v", err)
	}
	switch {
	case req.Model == "":
		return bad("model: Field required")
	case req.MaxTokens == nil:
		return bad("max_tokens: Field required")
	case len(req.Messages) == 0:
		return bad("messages: at least one message is required")
	}
	if err := validateMessages(req.Messages); err != nil {
		return err
	}
	c.model, c.stream, c.stopSequences = req.Model, req.Stream, req.StopSequences
	for _, t := range req.Tools {
		if t.Name != "" {
			c.tools = append(c.tools, toolDecl{name: t.Name, schema: t.InputSchema})
		}
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "user" {
		var blocks []messagesBlock
		if json.Unmarshal(last.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					c.toolResults = append(c.toolResults, textOf(b.Content))
				}
			}
		}
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			if t := textOf(m.Content); t != "" {
				c.userText = t
				break
			}
		}
	}
	return nil
}

// decodeGemini decodes a generateContent request body; the model comes
// from the path.
func decodeGemini(c *call) error {
	type part struct {
		Text             string `json:"text"`
		Thought          bool   `json:"thought"`
		ThoughtSignature string `json:"thoughtSignature"`
		FunctionCall     *struct {
			Name string `json:"name"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []part `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			StopSequences []string `json:"stopSequences"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil {
		return bad("Invalid JSON payload received. %v", err)
	}
	if len(req.Contents) == 0 {
		return bad("* GenerateContentRequest.contents: contents is not specified")
	}
	if strings.HasPrefix(c.model, "gemini-3") {
		// Gemini 3 rejects a replayed function call turn whose first
		// functionCall part lost its thoughtSignature.
		for i, ct := range req.Contents {
			if ct.Role != "model" {
				continue
			}
			for j, p := range ct.Parts {
				if p.FunctionCall == nil {
					continue
				}
				if p.ThoughtSignature == "" {
					return bad("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call `default_api:%s`, position %d.", p.FunctionCall.Name, i*100+j+1)
				}
				break
			}
		}
	}
	c.stopSequences = req.GenerationConfig.StopSequences
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			c.tools = append(c.tools, toolDecl{name: f.Name, schema: schema})
		}
	}
	isUser := func(role string) bool { return role == "user" || role == "" }
	if last := req.Contents[len(req.Contents)-1]; isUser(last.Role) {
		for _, p := range last.Parts {
			if p.FunctionResponse != nil {
				c.toolResults = append(c.toolResults, geminiResult(p.FunctionResponse.Response))
			}
		}
	}
	for i := len(req.Contents) - 1; i >= 0; i-- {
		ct := req.Contents[i]
		if !isUser(ct.Role) {
			continue
		}
		var b strings.Builder
		for _, p := range ct.Parts {
			if !p.Thought {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			c.userText = b.String()
			break
		}
	}
	return nil
}

// geminiResult turns a functionResponse.response into the text the fake
// quotes: the value of its only field when that is a string, else the
// compact JSON.
func geminiResult(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && len(obj) == 1 {
		for _, v := range obj {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
