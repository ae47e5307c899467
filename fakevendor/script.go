package fakevendor

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// family is a wire shape: C (chat completions), M (messages), G (Gemini).
type family int

const (
	famChat family = iota
	famMessages
	famGemini
)

func familyOf(vendor string) family {
	switch vendor {
	case "anthropic":
		return famMessages
	case "google":
		return famGemini
	}
	return famChat
}

// toolDecl is a tool the request declared.
type toolDecl struct {
	name   string
	schema json.RawMessage
}

// call is one decoded request, whatever its wire shape.
type call struct {
	vendor        string
	model         string
	stream        bool
	includeUsage  bool // C: stream_options.include_usage
	obfuscate     bool // OpenAI: obfuscation padding on chunks
	body          []byte
	userText      string   // text of the last user message with text
	toolResults   []string // set when the last message carries tool results
	tools         []toolDecl
	stopSequences []string
	dirs          directives
	cached        bool   // the prefix cache reported reads or writes
	reply         string // the reply model's text, when hasReply
	hasReply      bool
	seed          [32]byte // hash of vendor, model and body: ids derive from it
	thinking      bool     // DeepSeek: thinking mode (on unless the request turns it off)
}

// namedCall is a [fake:call=NAME:ARGS] directive: call the declared tool
// NAME with ARGS (a JSON object; empty: arguments from its schema).
type namedCall struct {
	name string
	args string
}

// directives are the [fake:...] instructions of a call.
type directives struct {
	raw        []string // every directive as written, in order
	text       string
	hasText    bool
	tools      int
	calls      []namedCall // [fake:call=NAME:ARGS], in order
	reasoning  bool
	cache      bool
	cacheRead  int // -1: default
	cache5m    int
	cache1h    int
	stop       string
	status     int
	retry      int
	failFirst  int
	failStatus int
	slow       time.Duration
	delay      time.Duration
	hang       bool
	breakAt    int // -1: off
	errorAt    int // -1: off
	malformed  bool
	chunks     int
	cost       string
	retryMs    int    // -1: off
	reset      bool   // close the connection with a reset, answering nothing
	silent     bool   // send 200 headers, then nothing
	on         string // the faults apply only to this vendor, model or vendor/model
	searches   int    // hosted web searches the answer reports ([fake:searches=N])
	fetches    int    // hosted web fetches ([fake:fetches=N], Anthropic)
	container  bool   // the answer ran code in a container ([fake:container], Anthropic)
	tier       string // the service tier the answer says served it ([fake:tier=NAME])
}

// clearFaults drops the failures d scripts (for a call that on does not
// name).
func (d *directives) clearFaults() {
	d.hang, d.slow, d.failFirst, d.status, d.reset, d.silent = false, 0, 0, 0, false, false
	d.breakAt, d.errorAt = -1, -1
}

var directiveRE = regexp.MustCompile(`\[fake:([a-z0-9-]+)(?:=([^\]]*))?\]`)

// parseDirectives reads every [fake:NAME] and [fake:NAME=VALUE] in text.
func parseDirectives(text string) (directives, error) {
	d := directives{cacheRead: -1, cache5m: -1, cache1h: -1, retry: 2, failStatus: 503, breakAt: -1, errorAt: -1, retryMs: -1}
	for _, m := range directiveRE.FindAllStringSubmatch(text, -1) {
		name, val, hasVal := m[1], m[2], strings.Contains(m[0], "=")
		d.raw = append(d.raw, m[0])
		var err error
		num := func(min int) int {
			n, e := strconv.Atoi(val)
			if e != nil || n < min {
				err = fmt.Errorf("directive %s: want an integer >= %d, got %q", m[0], min, val)
			}
			return n
		}
		word := func(what string) string {
			if val == "" {
				err = fmt.Errorf("directive %s: want %s", m[0], what)
			}
			return val
		}
		dur := func() time.Duration {
			t, e := time.ParseDuration(val)
			if e != nil || t < 0 {
				err = fmt.Errorf("directive %s: want a duration like 250ms, got %q", m[0], val)
			}
			return t
		}
		switch name {
		case "text":
			d.text, d.hasText = val, true
		case "tool":
			d.tools = 1
			if hasVal {
				d.tools = num(1)
			}
		case "tools":
			d.tools = num(1)
		case "call":
			name, args, _ := strings.Cut(val, ":")
			if name == "" {
				err = fmt.Errorf("directive %s: want NAME or NAME:{json object}", m[0])
				break
			}
			if args != "" {
				var obj map[string]any
				if e := json.Unmarshal([]byte(args), &obj); e != nil || obj == nil {
					err = fmt.Errorf("directive %s: the arguments must be a JSON object", m[0])
					break
				}
				b, _ := json.Marshal(obj)
				args = string(b)
			}
			d.calls = append(d.calls, namedCall{name: name, args: args})
		case "reasoning":
			d.reasoning = true
		case "cache":
			d.cache = true
			if hasVal {
				parts := strings.Split(val, "/")
				if len(parts) > 3 {
					err = fmt.Errorf("directive %s: want READ[/WRITE5M[/WRITE1H]]", m[0])
					break
				}
				nums := []*int{&d.cacheRead, &d.cache5m, &d.cache1h}
				for i, p := range parts {
					n, e := strconv.Atoi(p)
					if e != nil || n < 0 {
						err = fmt.Errorf("directive %s: want READ[/WRITE5M[/WRITE1H]] of integers >= 0", m[0])
						break
					}
					*nums[i] = n
				}
			}
		case "stop":
			d.stop = word("a finish reason")
		case "status":
			d.status = num(400)
		case "retry":
			d.retry = num(0)
		case "retry-ms":
			d.retryMs = num(0)
		case "reset":
			d.reset = true
		case "silent":
			d.silent = true
		case "on":
			d.on = word("a vendor, model or vendor/model")
		case "searches":
			d.searches = num(0)
		case "fetches":
			d.fetches = num(0)
		case "container":
			d.container = true
		case "tier":
			d.tier = word("a service tier name")
		case "id":
		case "fail-first":
			d.failFirst = num(1)
		case "fail-status":
			d.failStatus = num(400)
		case "slow":
			d.slow = dur()
		case "delay":
			d.delay = dur()
		case "hang":
			d.hang = true
		case "break":
			d.breakAt = num(0)
		case "error-after":
			d.errorAt = num(0)
		case "malformed":
			d.malformed = true
		case "chunks":
			d.chunks = num(1)
		case "cost":
			if _, e := strconv.ParseFloat(val, 64); e != nil || !json.Valid([]byte(val)) {
				err = fmt.Errorf("directive %s: want a decimal number", m[0])
			}
			d.cost = val
		default:
			err = fmt.Errorf("unknown directive %s", m[0])
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

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

// Tokens is the fake's token count for a text of n bytes: ceil(n/4).
func Tokens(n int) int { return (n + 3) / 4 }

// PromptTokens is the input token count the fake reports for a request
// body: ceil(len(body)/4), at least 1.
func PromptTokens(body []byte) int { return max(1, Tokens(len(body))) }

// toolCall is one planned tool call.
type toolCall struct {
	id     string
	name   string
	args   string   // JSON object
	pieces []string // args split for streaming
}

// reply is the planned answer, before any vendor encoding.
type reply struct {
	id           string
	reasoning    string
	reasonPieces []string
	text         string
	textPieces   []string
	calls        []toolCall
	stop         string // vendor-native finish reason
	stopSequence string // Anthropic stop_sequence echo
	signature    string // thinking / thought signature
	usage        counts
}

// counts are the token counts of a reply.
type counts struct {
	prompt    int // all input, cached included
	cacheRead int
	cache5m   int // cache writes, 5-minute TTL (Anthropic) / all writes elsewhere
	cache1h   int
	text      int
	tool      int
	reasoning int
}

func (u counts) output() int     { return u.text + u.tool + u.reasoning }
func (u counts) cacheWrite() int { return u.cache5m + u.cache1h }

// DefaultText returns the reply text the fake sends when no directive or
// tool result says otherwise.
func DefaultText(vendor, model string) string {
	return "Hello from " + vendor + " " + model + ". This is a deterministic fake reply."
}

// ReasoningText returns the reasoning text the fake sends for [fake:reasoning].
func ReasoningText(model string) string {
	return "The user wants a short reply from " + model + "; answer plainly."
}

// plan builds the reply for c.
func plan(c *call) *reply {
	r := &reply{}
	d := c.dirs
	switch {
	case d.hasText:
		r.text = d.text
	case c.toolResults != nil:
		r.text = "Tool said: " + strings.Join(c.toolResults, " | ")
	case len(d.calls) > 0 && len(c.tools) > 0:
		for _, nc := range d.calls {
			i := slices.IndexFunc(c.tools, func(t toolDecl) bool { return t.name == nc.name })
			if i < 0 {
				// A model can only call a declared tool.
				continue
			}
			args := nc.args
			if args == "" {
				args = argsFor(c.tools[i].schema)
			}
			r.calls = append(r.calls, toolCall{id: toolID(c, len(r.calls)), name: nc.name, args: args, pieces: splitN(args, 3)})
		}
		if len(r.calls) == 0 {
			r.text = DefaultText(c.vendor, c.model)
		}
	case d.tools > 0 && len(c.tools) > 0:
		for i := range d.tools {
			t := c.tools[i%len(c.tools)]
			args := argsFor(t.schema)
			r.calls = append(r.calls, toolCall{id: toolID(c, i), name: t.name, args: args, pieces: splitN(args, 3)})
		}
	case c.hasReply:
		r.text = c.reply
	default:
		r.text = DefaultText(c.vendor, c.model)
	}
	if d.chunks > 0 {
		r.textPieces = splitN(r.text, d.chunks)
	} else {
		r.textPieces = splitWords(r.text)
	}
	if d.reasoning || c.thinking {
		// DeepSeek reasons on every answer in thinking mode, its default.
		r.reasoning = ReasoningText(c.model)
		r.reasonPieces = splitWords(r.reasoning)
		r.signature = "sig_" + idFrom(c.seed, "signature", 40)
	}
	u := counts{prompt: PromptTokens(c.body), text: Tokens(len(r.text)), reasoning: Tokens(len(r.reasoning))}
	for _, tc := range r.calls {
		u.tool += Tokens(len(tc.name) + len(tc.args))
	}
	if d.cache {
		u.cacheRead, u.cache5m, u.cache1h = u.prompt/2, u.prompt/4, 0
		if d.cacheRead >= 0 {
			u.cacheRead = d.cacheRead
		}
		if d.cache5m >= 0 {
			u.cache5m = d.cache5m
		}
		if d.cache1h >= 0 {
			u.cache1h = d.cache1h
		}
		// Clamp so cached parts never exceed the prompt.
		u.cacheRead = min(u.cacheRead, u.prompt)
		u.cache5m = min(u.cache5m, u.prompt-u.cacheRead)
		u.cache1h = min(u.cache1h, u.prompt-u.cacheRead-u.cache5m)
	}
	r.usage = u
	r.stop, r.stopSequence = stopReason(c, len(r.calls) > 0)
	r.id = responseID(c)
	return r
}

// stopReason maps the stop directive (or the default) to the vendor's own
// finish reason.
func stopReason(c *call, tools bool) (reason, sequence string) {
	fam := familyOf(c.vendor)
	g := c.dirs.stop
	if g == "" {
		switch {
		case fam == famMessages && tools:
			return "tool_use", ""
		case fam == famMessages:
			return "end_turn", ""
		case fam == famGemini:
			return "STOP", ""
		case tools:
			return "tool_calls", ""
		case c.vendor == "together":
			// Together's models end a natural stop with "eos".
			return "eos", ""
		}
		return "stop", ""
	}
	switch fam {
	case famMessages:
		switch g {
		case "length", "max_tokens":
			return "max_tokens", ""
		case "content_filter", "refusal":
			return "refusal", ""
		case "stop", "end_turn", "eos":
			return "end_turn", ""
		case "tool_calls", "tool_use":
			return "tool_use", ""
		case "stop_sequence":
			seq := "STOP"
			if len(c.stopSequences) > 0 {
				seq = c.stopSequences[0]
			}
			return "stop_sequence", seq
		}
	case famGemini:
		switch g {
		case "length", "max_tokens":
			return "MAX_TOKENS", ""
		case "content_filter", "refusal":
			return "SAFETY", ""
		case "stop", "end_turn", "stop_sequence", "eos", "tool_calls", "tool_use":
			return "STOP", ""
		}
	default:
		switch g {
		case "length", "max_tokens":
			return "length", ""
		case "content_filter", "refusal":
			return "content_filter", ""
		case "stop", "end_turn", "stop_sequence":
			return "stop", ""
		case "tool_calls", "tool_use":
			return "tool_calls", ""
		case "eos":
			if c.vendor == "together" {
				return "eos", ""
			}
			return "stop", ""
		}
	}
	return g, ""
}

// argsFor builds tool arguments from a JSON schema: required properties
// only, strings "x", numbers 1, booleans true, arrays [], objects
// recursively, enums their first value.
func argsFor(schema json.RawMessage) string {
	var s map[string]any
	_ = json.Unmarshal(schema, &s)
	v := sample(s)
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sample(s map[string]any) any {
	if s == nil {
		return map[string]any{}
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return sample(m)
			}
		}
	}
	typ := ""
	switch t := s["type"].(type) {
	case string:
		typ = t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && !strings.EqualFold(x, "null") {
				typ = x
				break
			}
		}
	}
	switch strings.ToLower(typ) {
	case "string":
		return "x"
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "null":
		return nil
	case "object", "":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			p, _ := props[name].(map[string]any)
			if p == nil {
				obj[name] = "x"
				continue
			}
			obj[name] = sample(p)
		}
		return obj
	}
	return "x"
}

// splitWords splits s before every space that follows a non-space, so
// "Hello big world" becomes "Hello", " big", " world".
func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitN splits s into n pieces of nearly equal rune counts (fewer when s
// has fewer runes; none when s is empty).
func splitN(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 {
		return nil
	}
	n = min(n, len(rs))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(rs[i*len(rs)/n:(i+1)*len(rs)/n]))
	}
	return out
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idFrom derives n base62 characters from seed and salt.
func idFrom(seed [32]byte, salt string, n int) string {
	h := sha256.Sum256(append(seed[:], salt...))
	b := make([]byte, n)
	for i := range n {
		if i > 0 && i%32 == 0 {
			h = sha256.Sum256(h[:])
		}
		b[i] = base62[int(h[i%32])%62]
	}
	return string(b)
}

func hexFrom(seed [32]byte, salt string, n int) string {
	h := sha256.Sum256(append(seed[:], salt...))
	return fmt.Sprintf("%x", h[:])[:n]
}

func uuidFrom(seed [32]byte, salt string) string {
	x := hexFrom(seed, salt, 32)
	return x[0:8] + "-" + x[8:12] + "-4" + x[13:16] + "-a" + x[17:20] + "-" + x[20:32]
}

// toolID returns the i-th tool call id in the vendor's style.
func toolID(c *call, i int) string {
	salt := "tool" + strconv.Itoa(i)
	switch c.vendor {
	case "anthropic":
		return "toolu_01" + idFrom(c.seed, salt, 22)
	case "mistral":
		return idFrom(c.seed, salt, 9)
	case "google":
		return strings.ToLower(idFrom(c.seed, salt, 8))
	case "deepseek":
		return "call_0" + strconv.Itoa(i) + "_" + idFrom(c.seed, salt, 24)
	}
	return "call_" + idFrom(c.seed, salt, 24)
}

// responseID returns the response id in the vendor's style.
func responseID(c *call) string {
	switch c.vendor {
	case "anthropic":
		return "msg_01" + idFrom(c.seed, "id", 22)
	case "google":
		return idFrom(c.seed, "id", 22)
	case "mistral":
		return hexFrom(c.seed, "id", 32)
	case "deepseek", "fireworks":
		return uuidFrom(c.seed, "id")
	case "together":
		return idFrom(c.seed, "id", 7) + "-" + hexFrom(c.seed, "id2", 16)
	case "openrouter":
		return "gen-1767225600-" + idFrom(c.seed, "id", 20)
	case "groq":
		return "chatcmpl-" + uuidFrom(c.seed, "id")
	}
	return "chatcmpl-" + idFrom(c.seed, "id", 29)
}

// servedTier is the service tier the answer names, as OpenAI-dialect
// vendors answer: [fake:tier=NAME] when given, else the tier the request
// asked for when it is one the vendor serves apart ("priority", "flex"),
// else def (the vendor's standard tier name).
func (c *call) servedTier(def string) string {
	if c.dirs.tier != "" {
		return c.dirs.tier
	}
	var v struct {
		ServiceTier string `json:"service_tier"`
	}
	if json.Unmarshal(c.body, &v) == nil && (v.ServiceTier == "priority" || v.ServiceTier == "flex") {
		return v.ServiceTier
	}
	return def
}

// fastMode reports an Anthropic request for fast mode (speed "fast").
func (c *call) fastMode() bool {
	var v struct {
		Speed string `json:"speed"`
	}
	return json.Unmarshal(c.body, &v) == nil && v.Speed == "fast"
}
