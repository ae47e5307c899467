package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/gwlabs/gateway"
)

// EncodeOptions tunes EncodeRequest to the target model. Every field may
// be nil, meaning the documented default.
type EncodeOptions struct {
	// DefaultMaxTokens gives max_tokens when the canonical request has no
	// MaxTokens (C callers need not send one; Anthropic requires it).
	// Nil: 4096.
	DefaultMaxTokens func(model string) int
	// ForcedToolChoiceUnsupported reports models that reject tool_choice
	// "any" and "tool" (Claude Opus 5.5, Fable 5.1, Sonnet 5.5). Such a
	// choice is downgraded to "auto" and "tool_choice" is recorded in
	// Dropped. Nil: no model.
	ForcedToolChoiceUnsupported func(model string) bool
	// AdaptiveThinkingOnly reports models that reject
	// thinking.type "enabled" with a budget (Claude Sonnet 5, Opus 5.5,
	// Fable 5.1, Sonnet 5.5): a reasoning request becomes
	// thinking.type "adaptive" plus output_config.effort. Nil: no model.
	AdaptiveThinkingOnly func(model string) bool
	// SamplingUnsupported reports models that reject non-default
	// temperature, top_p and top_k (Claude Sonnet 5): they are dropped
	// and recorded in Dropped. Nil: no model.
	SamplingUnsupported func(model string) bool
}

func (o *EncodeOptions) defaultMaxTokens(model string) int {
	if o.DefaultMaxTokens != nil {
		if n := o.DefaultMaxTokens(model); n > 0 {
			return n
		}
	}
	return 4096
}

func hook(f func(string) bool, model string) bool { return f != nil && f(model) }

// minThinkingBudget is Anthropic's smallest thinking.budget_tokens.
const minThinkingBudget = 1024

// effortBudget maps a reasoning effort to a thinking budget; ok false for
// an effort that turns thinking off.
func effortBudget(effort string) (budget int, ok bool, valid bool) {
	switch effort {
	case "minimal", "low":
		return 1024, true, true
	case "medium":
		return 2048, true, true
	case "high":
		return 4096, true, true
	case "xhigh":
		return 8192, true, true
	case "max":
		return 16384, true, true
	case "none":
		return 0, false, true
	}
	return 0, false, false
}

// requestOut is an M request, in a stable field order.
type requestOut struct {
	Model         string            `json:"model"`
	MaxTokens     int               `json:"max_tokens"`
	System        []textOut         `json:"system,omitempty"`
	Messages      []messageTurn     `json:"messages"`
	Metadata      *wireMetadata     `json:"metadata,omitempty"`
	StopSequences []string          `json:"stop_sequences,omitempty"`
	Stream        bool              `json:"stream,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
	TopP          *float64          `json:"top_p,omitempty"`
	TopK          *int              `json:"top_k,omitempty"`
	Tools         []toolOut         `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice   `json:"tool_choice,omitempty"`
	Thinking      *wireThinking     `json:"thinking,omitempty"`
	OutputConfig  *wireOutputConfig `json:"output_config,omitempty"`
}

type messageTurn struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type toolOut struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       *bool           `json:"strict,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// geminiSignaturePrefix starts the signatures the Gemini adapter puts on
// the thinking parts it decodes (a history that passed through Gemini).
// They are Gemini's, not Anthropic's, and are never sent to Anthropic.
const geminiSignaturePrefix = "gemini:"

// EncodeRequest encodes a canonical request as an M request for
// Anthropic (a C caller on an Anthropic model). The rules, beyond a field
// for field copy:
//
//   - System parts become system text blocks (cache_control kept);
//     RoleSystem messages found mid-conversation are hoisted into system
//     after them, in order, since the Messages API has one system prompt.
//   - Consecutive turns of one role are merged. In a user turn, tool
//     results come first, so that all results of one assistant turn sit in
//     the one user message right after it, before that turn's text.
//   - Empty text parts are left out (Anthropic rejects empty text blocks);
//     a turn left with no content is left out. Thinking parts are replayed
//     only with a signature, first in their assistant turn; thinking
//     without one is dropped, and so is thinking signed by Gemini (its
//     signatures start with "gemini:"; Anthropic would reject them).
//   - Tool call arguments must be a JSON object ("" is {}); anything else
//     is a 400 naming the call. Tool call ids are made to match
//     ^[a-zA-Z0-9_-]+$ by replacing other characters with "_", the same
//     way on calls and results.
//   - Images: inline data needs image/jpeg, png, gif or webp (else 400);
//     data: URLs are inlined; other URLs become url sources. Documents:
//     PDF data or URL, or text.
//   - max_tokens is MaxTokens, else EncodeOptions.DefaultMaxTokens. A
//     reasoning effort becomes a thinking budget (minimal and low 1024,
//     medium 2048, high 4096, xhigh 8192, max 16384; none and Disabled
//     omit thinking), kept below max_tokens: a default max_tokens grows
//     to fit the budget; a caller's max_tokens shrinks the budget, and
//     when not even 1024 fits, thinking is omitted ("reasoning_effort" in
//     Dropped).
//   - Inside an unfinished tool loop whose last assistant turn has no
//     thinking block to replay (a caller of another shape cannot keep
//     one), thinking is omitted for this step ("reasoning_effort" in
//     Dropped): Anthropic would reject the request otherwise.
//   - With thinking on, temperature, top_p and top_k are dropped, and a
//     forced tool choice becomes auto (each recorded in Dropped); else
//     temperature is clamped to at most 1 (Anthropic's range).
//   - tool_choice none/auto/required/named become {none}/{auto}/{any}/
//     {tool,name}; ParallelToolCalls false sets disable_parallel_tool_use.
//   - ResponseFormat json_schema becomes output_config.format; json_object
//     becomes a format with the schema {"type":"object"}.
//   - User becomes metadata.user_id; Seed is dropped ("seed").
//
// Fields it drops are appended to r.Dropped. Errors are *gw.Error with
// CodeInvalidRequest.
func EncodeRequest(r *gw.Request, opts EncodeOptions) ([]byte, error) {
	out := requestOut{
		Model:         r.Model,
		StopSequences: r.Stop,
		Stream:        r.Stream,
		Temperature:   r.Temperature,
		TopP:          r.TopP,
		TopK:          r.TopK,
	}
	for _, p := range r.System {
		if p.Type != gw.PartText {
			return nil, invalidf("system: %s content is not supported in a system prompt", p.Type)
		}
		if p.Text != "" {
			out.System = append(out.System, textOut{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
		}
	}
	if err := encodeMessages(&out, r.Messages); err != nil {
		return nil, err
	}
	if r.User != "" {
		out.Metadata = &wireMetadata{UserID: r.User}
	}
	if r.Seed != nil {
		r.Dropped = append(r.Dropped, "seed")
	}

	// max_tokens and thinking.
	maxTokens, callerMax := 0, r.MaxTokens != nil
	if callerMax {
		maxTokens = *r.MaxTokens
	} else {
		maxTokens = opts.defaultMaxTokens(r.Model)
	}
	thinking := false
	rs := r.Reasoning
	if rs != nil && !rs.Disabled && toolLoopWithoutThinking(out.Messages) {
		// Anthropic rejects thinking when the assistant turn of an
		// unfinished tool loop does not start with a thinking block, and
		// callers of other shapes cannot replay one: answer this step
		// without thinking.
		r.Dropped = append(r.Dropped, "reasoning_effort")
		rs = nil
	}
	if rs != nil && !rs.Disabled {
		adaptive := rs.Adaptive || hook(opts.AdaptiveThinkingOnly, r.Model)
		budget, on := rs.BudgetTokens, rs.BudgetTokens > 0
		if rs.Effort != "" {
			b, effortOn, valid := effortBudget(rs.Effort)
			if !valid {
				return nil, invalidf("reasoning_effort: unknown value %q", rs.Effort)
			}
			if !effortOn {
				on = false
			} else if budget == 0 {
				budget, on = b, true
			}
		}
		switch {
		case adaptive && (on || rs.Adaptive):
			out.Thinking = &wireThinking{Type: "adaptive"}
			if e := rs.Effort; validEffort(e) || e == "minimal" {
				if e == "minimal" {
					e = "low"
				}
				out.OutputConfig = &wireOutputConfig{Effort: e}
			}
			thinking = true
		case on:
			budget = max(budget, minThinkingBudget)
			if budget >= maxTokens {
				if callerMax {
					budget = maxTokens - 1
				} else {
					maxTokens += budget
				}
			}
			if budget >= minThinkingBudget {
				out.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
				thinking = true
			} else {
				r.Dropped = append(r.Dropped, "reasoning_effort")
			}
		}
	}
	out.MaxTokens = maxTokens

	// Sampling.
	if thinking || hook(opts.SamplingUnsupported, r.Model) {
		if out.Temperature != nil {
			r.Dropped = append(r.Dropped, "temperature")
		}
		if out.TopP != nil {
			r.Dropped = append(r.Dropped, "top_p")
		}
		if out.TopK != nil {
			r.Dropped = append(r.Dropped, "top_k")
		}
		out.Temperature, out.TopP, out.TopK = nil, nil, nil
	} else if t := out.Temperature; t != nil && *t > 1 {
		one := 1.0
		out.Temperature = &one
	}

	// Tools.
	for _, t := range r.Tools {
		schema, ok := compactObject(t.Parameters)
		if !ok {
			return nil, invalidf("tools: parameters of function %q must be a JSON Schema object", t.Name)
		}
		if string(schema) == "{}" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, toolOut{Name: t.Name, Description: t.Description, InputSchema: schema, Strict: t.Strict, CacheControl: t.CacheControl})
	}
	if err := encodeToolChoice(&out, r, opts, thinking); err != nil {
		return nil, err
	}

	if f := r.ResponseFormat; f != nil {
		var schema json.RawMessage
		switch f.Type {
		case "json_schema":
			s, ok := compactObject(f.Schema)
			if !ok || len(f.Schema) == 0 {
				return nil, invalidf("response_format.json_schema.schema: must be a JSON Schema object")
			}
			schema = s
		case "json_object":
			schema = json.RawMessage(`{"type":"object"}`)
		default:
			return nil, invalidf("response_format.type: %q is not supported for Anthropic models", f.Type)
		}
		if out.OutputConfig == nil {
			out.OutputConfig = &wireOutputConfig{}
		}
		out.OutputConfig.Format = &wireFormat{Type: "json_schema", Schema: schema}
	}

	body, err := marshal(&out)
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request cannot be encoded for Anthropic", Err: err}
	}
	return body, nil
}

// toolLoopWithoutThinking reports whether the last assistant turn calls
// tools (so the conversation is inside a tool loop) without starting with
// a thinking or redacted_thinking block.
func toolLoopWithoutThinking(turns []messageTurn) bool {
	for i := len(turns) - 1; i >= 0; i-- {
		t := &turns[i]
		if t.Role != "assistant" {
			continue
		}
		calls := false
		for _, b := range t.Content {
			if _, ok := b.(toolUseOut); ok {
				calls = true
				break
			}
		}
		if !calls {
			return false
		}
		switch t.Content[0].(type) {
		case thinkingOut, redactedOut:
			return false
		}
		return true
	}
	return false
}

func encodeToolChoice(out *requestOut, r *gw.Request, opts EncodeOptions, thinking bool) error {
	tc := r.ToolChoice
	noParallel := r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if len(out.Tools) == 0 {
		if tc != nil && (tc.Mode == gw.ToolChoiceRequired || tc.Mode == gw.ToolChoiceTool) {
			return invalidf("tool_choice: %q needs tools", tc.Mode)
		}
		// Without tools there is nothing to choose or parallelise.
		return nil
	}
	var w wireToolChoice
	mode := gw.ToolChoiceAuto
	if tc != nil {
		mode = tc.Mode
	}
	if (mode == gw.ToolChoiceRequired || mode == gw.ToolChoiceTool) &&
		(thinking || hook(opts.ForcedToolChoiceUnsupported, r.Model)) {
		// Anthropic rejects forced tool use with thinking on and on some
		// models; auto keeps the request valid.
		r.Dropped = append(r.Dropped, "tool_choice")
		mode = gw.ToolChoiceAuto
	}
	switch mode {
	case gw.ToolChoiceNone:
		w.Type = "none"
	case gw.ToolChoiceAuto, "":
		if tc == nil && !noParallel {
			return nil
		}
		w.Type = "auto"
	case gw.ToolChoiceRequired:
		w.Type = "any"
	case gw.ToolChoiceTool:
		if tc.Name == "" {
			return invalidf("tool_choice: a named tool choice needs a function name")
		}
		w.Type, w.Name = "tool", tc.Name
	default:
		return invalidf("tool_choice: unknown mode %q", mode)
	}
	if noParallel && w.Type != "none" {
		w.DisableParallelToolUse = true
	}
	out.ToolChoice = &w
	return nil
}

// encodeMessages builds the M turns: system messages hoisted, empty
// content left out, same-role turns merged, tool results first.
func encodeMessages(out *requestOut, msgs []gw.Message) error {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == gw.RoleSystem {
			for _, p := range m.Content {
				if p.Type != gw.PartText {
					return invalidf("messages[%d]: %s content is not supported in a system message", i, p.Type)
				}
				if p.Text != "" {
					out.System = append(out.System, textOut{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
				}
			}
			continue
		}
		var role string
		switch m.Role {
		case gw.RoleUser:
			role = "user"
		case gw.RoleAssistant:
			role = "assistant"
		default:
			return invalidf("messages[%d].role: unknown role %q", i, m.Role)
		}
		var thinking, results, rest []any
		for j := range m.Content {
			p := &m.Content[j]
			switch p.Type {
			case gw.PartThinking:
				if role == "assistant" && p.Signature != "" && !strings.HasPrefix(p.Signature, geminiSignaturePrefix) {
					thinking = append(thinking, thinkingOut{Type: "thinking", Thinking: p.Text, Signature: p.Signature})
				}
				continue
			case gw.PartRedactedThinking:
				if role == "assistant" && p.RedactedData != "" {
					thinking = append(thinking, redactedOut{Type: "redacted_thinking", Data: p.RedactedData})
				}
				continue
			case gw.PartToolResult:
				b, err := encodeToolResult(i, p)
				if err != nil {
					return err
				}
				results = append(results, b)
				continue
			}
			b, err := encodePart(i, p)
			if err != nil {
				return err
			}
			if b != nil {
				rest = append(rest, b)
			}
		}
		n := len(out.Messages)
		if n > 0 && out.Messages[n-1].Role == role {
			// Merge into the previous turn of the same role, keeping its
			// order rules: thinking first in an assistant turn, tool
			// results first in a user turn.
			prev := &out.Messages[n-1]
			if role == "assistant" {
				prev.Content = insertLeading(prev.Content, thinking, isThinkingBlock)
			} else {
				prev.Content = insertLeading(prev.Content, results, isToolResultBlock)
			}
			prev.Content = append(prev.Content, rest...)
			continue
		}
		content := append(append(thinking, results...), rest...)
		if len(content) == 0 {
			continue
		}
		out.Messages = append(out.Messages, messageTurn{Role: role, Content: content})
	}
	return nil
}

// insertLeading puts blocks after the blocks of their kind that already
// lead the turn and before its other content.
func insertLeading(content, blocks []any, leading func(any) bool) []any {
	if len(blocks) == 0 {
		return content
	}
	k := 0
	for k < len(content) && leading(content[k]) {
		k++
	}
	merged := make([]any, 0, len(content)+len(blocks))
	merged = append(merged, content[:k]...)
	merged = append(merged, blocks...)
	return append(merged, content[k:]...)
}

func isThinkingBlock(b any) bool {
	switch b.(type) {
	case thinkingOut, redactedOut:
		return true
	}
	return false
}

func isToolResultBlock(b any) bool {
	_, ok := b.(toolResultOut)
	return ok
}

// encodePart encodes a text, image, document or tool call part; nil for
// an empty text part.
func encodePart(i int, p *gw.Part) (any, error) {
	switch p.Type {
	case gw.PartText:
		if p.Text == "" {
			return nil, nil
		}
		return textOut{Type: "text", Text: p.Text, CacheControl: p.CacheControl}, nil
	case gw.PartImage:
		src, err := imageSource(i, p)
		if err != nil {
			return nil, err
		}
		return mediaOut{Type: "image", Source: src, CacheControl: p.CacheControl}, nil
	case gw.PartDocument:
		var src sourceOut
		switch {
		case p.Data != "":
			if p.MediaType != "" && p.MediaType != "application/pdf" {
				return nil, invalidf("messages[%d]: file of type %q is not supported for Anthropic models (PDF only)", i, p.MediaType)
			}
			src = sourceOut{Type: "base64", MediaType: "application/pdf", Data: p.Data}
		case p.URL != "":
			src = sourceOut{Type: "url", URL: p.URL}
		default:
			src = sourceOut{Type: "text", MediaType: "text/plain", Data: p.Text}
		}
		return mediaOut{Type: "document", Source: src, Title: p.Filename, CacheControl: p.CacheControl}, nil
	case gw.PartToolCall:
		in, ok := compactObject(p.Arguments)
		if !ok {
			return nil, invalidf("messages[%d]: tool call %q (%s): arguments are not a JSON object", i, p.ToolCallID, p.ToolName)
		}
		return toolUseOut{Type: "tool_use", ID: sanitizeID(p.ToolCallID), Name: p.ToolName, Input: in, CacheControl: p.CacheControl}, nil
	}
	return nil, invalidf("messages[%d]: %s content is not supported here", i, p.Type)
}

func encodeToolResult(i int, p *gw.Part) (any, error) {
	out := toolResultOut{Type: "tool_result", ToolUseID: sanitizeID(p.ToolCallID), IsError: p.IsError, CacheControl: p.CacheControl}
	if len(p.Content) == 1 && p.Content[0].Type == gw.PartText && len(p.Content[0].CacheControl) == 0 {
		out.Content = p.Content[0].Text
		return out, nil
	}
	var blocks []any
	for j := range p.Content {
		c := &p.Content[j]
		switch c.Type {
		case gw.PartText, gw.PartImage, gw.PartDocument:
		default:
			return nil, invalidf("messages[%d]: a tool result cannot contain %s content", i, c.Type)
		}
		b, err := encodePart(i, c)
		if err != nil {
			return nil, err
		}
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) > 0 {
		out.Content = blocks
	}
	return out, nil
}

func imageSource(i int, p *gw.Part) (sourceOut, error) {
	mt, data := p.MediaType, p.Data
	if data == "" && strings.HasPrefix(p.URL, "data:") {
		// data:<media type>;base64,<data>
		meta, payload, ok := strings.Cut(p.URL[len("data:"):], ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return sourceOut{}, invalidf("messages[%d]: image data URL must be base64-encoded", i)
		}
		mt, data = strings.TrimSuffix(meta, ";base64"), payload
	}
	if data != "" {
		if !imageMediaType(mt) {
			return sourceOut{}, invalidf("messages[%d]: image type %q is not supported for Anthropic models (jpeg, png, gif or webp)", i, mt)
		}
		return sourceOut{Type: "base64", MediaType: mt, Data: data}, nil
	}
	if p.URL == "" {
		return sourceOut{}, invalidf("messages[%d]: image without data or URL", i)
	}
	return sourceOut{Type: "url", URL: p.URL}, nil
}

// sanitizeID makes a tool call id match Anthropic's ^[a-zA-Z0-9_-]+$,
// deterministically, so that a call and its result still pair up.
func sanitizeID(id string) string {
	ok := true
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i := range b {
		if !idByte(b[i]) {
			b[i] = '_'
		}
	}
	return string(b)
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
