package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gwlabs/gateway"
)

// wireRequest is an M request's known top-level fields.
type wireRequest struct {
	Model         string            `json:"model"`
	MaxTokens     *int              `json:"max_tokens"`
	System        json.RawMessage   `json:"system"`
	Messages      []wireMessage     `json:"messages"`
	Metadata      *wireMetadata     `json:"metadata"`
	StopSequences []string          `json:"stop_sequences"`
	Stream        bool              `json:"stream"`
	Temperature   *float64          `json:"temperature"`
	TopP          *float64          `json:"top_p"`
	TopK          *int              `json:"top_k"`
	Tools         []wireTool        `json:"tools"`
	ToolChoice    *wireToolChoice   `json:"tool_choice"`
	Thinking      *wireThinking     `json:"thinking"`
	OutputConfig  *wireOutputConfig `json:"output_config"`
}

// knownField reports whether DecodeRequest maps the top-level field k;
// any other field is reported in Request.Dropped.
func knownField(k string) bool {
	switch k {
	case "model", "max_tokens", "system", "messages", "metadata", "stop_sequences", "stream",
		"temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "output_config":
		return true
	}
	return false
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireMetadata struct {
	UserID string `json:"user_id"`
}

type wireTool struct {
	Type         string          `json:"type"`
	DeferLoading *bool           `json:"defer_loading"`
	Eager        *bool           `json:"eager_input_streaming"`
	Examples     json.RawMessage `json:"input_examples"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       *bool           `json:"strict"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

type wireOutputConfig struct {
	Effort string      `json:"effort,omitempty"`
	Format *wireFormat `json:"format,omitempty"`
}

type wireFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// serverToolName reports whether a schema-less tool's name is one of
// Anthropic's server-side tools, which only Anthropic can run.
func serverToolName(name string) bool {
	for _, p := range [...]string{
		"web_search", "web_fetch", "bash", "code_execution", "computer", "text_editor",
		"memory", "tool_search", "mcp",
	} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// DecodeRequest decodes an M request body into the canonical request. It
// is used on mapped routes (an M caller, a vendor of another shape). Top-
// level fields it does not map are listed in Request.Dropped. Every error
// is a *gw.Error with CodeInvalidRequest naming the offending field.
func DecodeRequest(body []byte) (*gw.Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a JSON object", Err: err}
	}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: jsonErrText(err), Err: err}
	}
	r := &gw.Request{
		Model:       w.Model,
		MaxTokens:   w.MaxTokens,
		Temperature: w.Temperature,
		TopP:        w.TopP,
		TopK:        w.TopK,
		Stream:      w.Stream,
	}
	for k := range top {
		if !knownField(k) {
			r.Dropped = append(r.Dropped, k)
		}
	}
	slices.Sort(r.Dropped)
	if w.Model == "" {
		return nil, invalidf("model: field required")
	}
	if w.MaxTokens == nil {
		return nil, invalidf("max_tokens: field required")
	}
	if *w.MaxTokens < 0 {
		return nil, invalidf("max_tokens: must be at least 0")
	}
	if w.Temperature != nil && (*w.Temperature < 0 || *w.Temperature > 1) {
		return nil, invalidf("temperature: must be between 0 and 1")
	}
	if w.TopK != nil && *w.TopK < 0 {
		return nil, invalidf("top_k: must be at least 0")
	}
	if len(w.StopSequences) > 0 {
		r.Stop = w.StopSequences
	}
	if w.Metadata != nil {
		r.User = w.Metadata.UserID
	}
	var err error
	if r.System, err = decodeSystem(w.System); err != nil {
		return nil, err
	}
	if len(w.Messages) == 0 {
		return nil, invalidf("messages: at least one message is required")
	}
	for i, m := range w.Messages {
		if err := decodeMessage(r, i, m); err != nil {
			return nil, err
		}
	}
	if err := decodeTools(r, w.Tools, w.ToolChoice); err != nil {
		return nil, err
	}
	if err := decodeReasoning(r, w.Thinking, w.OutputConfig); err != nil {
		return nil, err
	}
	return r, nil
}

func decodeSystem(raw json.RawMessage) ([]gw.Part, error) {
	switch firstByte(raw) {
	case 0, 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalidf("system: %s", jsonErrText(err))
		}
		if s == "" {
			return nil, nil
		}
		return []gw.Part{{Type: gw.PartText, Text: s}}, nil
	case '[':
		return decodeTextBlocks("system", raw)
	}
	return nil, invalidf("system: must be a string or a list of text blocks")
}

// decodeTextBlocks decodes a string or a list of text blocks (system,
// mid_conv_system content).
func decodeTextBlocks(path string, raw json.RawMessage) ([]gw.Part, error) {
	if firstByte(raw) == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalidf("%s: %s", path, jsonErrText(err))
		}
		return []gw.Part{{Type: gw.PartText, Text: s}}, nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, invalidf("%s: %s", path, jsonErrText(err))
	}
	parts := make([]gw.Part, 0, len(blocks))
	for j, b := range blocks {
		if b.Type != "text" {
			return nil, invalidf("%s[%d].type: must be \"text\", got %q", path, j, b.Type)
		}
		if b.Text == nil {
			return nil, invalidf("%s[%d].text: field required", path, j)
		}
		parts = append(parts, gw.Part{Type: gw.PartText, Text: *b.Text, CacheControl: b.CacheControl})
	}
	return parts, nil
}

func decodeMessage(r *gw.Request, i int, m wireMessage) error {
	var role gw.Role
	switch m.Role {
	case "user":
		role = gw.RoleUser
	case "assistant":
		role = gw.RoleAssistant
	case "system":
		// A per-turn system message (Anthropic's mid-conversation system
		// messages; Claude Code sends them): text only, kept at its place.
		path := fmt.Sprintf("messages[%d].content", i)
		if firstByte(m.Content) == 0 {
			return invalidf("%s: field required", path)
		}
		sys, err := decodeTextBlocks(path, m.Content)
		if err != nil {
			return err
		}
		r.Messages = append(r.Messages, gw.Message{Role: gw.RoleSystem, Content: sys})
		return nil
	default:
		return invalidf("messages[%d].role: must be \"user\", \"assistant\" or \"system\", got %q", i, m.Role)
	}
	path := fmt.Sprintf("messages[%d].content", i)
	switch firstByte(m.Content) {
	case '"':
		var s string
		if err := json.Unmarshal(m.Content, &s); err != nil {
			return invalidf("%s: %s", path, jsonErrText(err))
		}
		r.Messages = append(r.Messages, gw.Message{Role: role, Content: []gw.Part{{Type: gw.PartText, Text: s}}})
		return nil
	case '[':
	case 0:
		return invalidf("%s: field required", path)
	default:
		return invalidf("%s: must be a string or a list of content blocks", path)
	}
	var blocks []wireBlock
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return invalidf("%s: %s", path, jsonErrText(err))
	}
	msg := gw.Message{Role: role, Content: make([]gw.Part, 0, len(blocks))}
	for j := range blocks {
		b := &blocks[j]
		bpath := loc{msg: i, blk: j, sub: -1}
		if b.Type == "mid_conv_system" {
			// A system instruction in the middle of the conversation: split
			// the message around it so that it keeps its place.
			sys, err := decodeTextBlocks(bpath.String()+".content", b.Content)
			if err != nil {
				return err
			}
			if len(msg.Content) > 0 {
				r.Messages = append(r.Messages, msg)
			}
			r.Messages = append(r.Messages, gw.Message{Role: gw.RoleSystem, Content: sys})
			msg = gw.Message{Role: role}
			continue
		}
		p, err := decodeBlock(bpath, role, b)
		if err != nil {
			return err
		}
		msg.Content = append(msg.Content, p)
	}
	if len(msg.Content) > 0 || len(blocks) == 0 {
		r.Messages = append(r.Messages, msg)
	}
	return nil
}

// loc locates a content block for error messages, formatted only when
// one is needed: messages[msg].content[blk], plus .content[sub] inside a
// tool result when sub >= 0.
type loc struct{ msg, blk, sub int }

func (l loc) String() string {
	if l.sub >= 0 {
		return fmt.Sprintf("messages[%d].content[%d].content[%d]", l.msg, l.blk, l.sub)
	}
	return fmt.Sprintf("messages[%d].content[%d]", l.msg, l.blk)
}

func decodeBlock(path loc, role gw.Role, b *wireBlock) (gw.Part, error) {
	switch b.Type {
	case "text":
		if b.Text == nil {
			return gw.Part{}, invalidf("%s.text: field required", path)
		}
		return gw.Part{Type: gw.PartText, Text: *b.Text, CacheControl: b.CacheControl}, nil
	case "image":
		return decodeImage(path, b)
	case "document":
		return decodeDocument(path, b)
	case "tool_use":
		if role != gw.RoleAssistant {
			return gw.Part{}, invalidf("%s: tool_use blocks belong in assistant messages", path)
		}
		if b.ID == "" || b.Name == "" {
			return gw.Part{}, invalidf("%s: tool_use needs id and name", path)
		}
		args, ok := compactObject(b.Input)
		if !ok {
			return gw.Part{}, invalidf("%s.input: must be a JSON object", path)
		}
		return gw.Part{Type: gw.PartToolCall, ToolCallID: b.ID, ToolName: b.Name, Arguments: args, CacheControl: b.CacheControl}, nil
	case "tool_result":
		if role != gw.RoleUser {
			return gw.Part{}, invalidf("%s: tool_result blocks belong in user messages", path)
		}
		if b.ToolUseID == "" {
			return gw.Part{}, invalidf("%s.tool_use_id: field required", path)
		}
		content, err := decodeToolResultContent(path, b.Content)
		if err != nil {
			return gw.Part{}, err
		}
		return gw.Part{Type: gw.PartToolResult, ToolCallID: b.ToolUseID, Content: content, IsError: b.IsError, CacheControl: b.CacheControl}, nil
	case "thinking":
		if role != gw.RoleAssistant {
			return gw.Part{}, invalidf("%s: thinking blocks belong in assistant messages", path)
		}
		p := gw.Part{Type: gw.PartThinking, Signature: b.Signature}
		if b.Thinking != nil {
			p.Text = *b.Thinking
		}
		return p, nil
	case "redacted_thinking":
		if role != gw.RoleAssistant {
			return gw.Part{}, invalidf("%s: redacted_thinking blocks belong in assistant messages", path)
		}
		return gw.Part{Type: gw.PartRedactedThinking, RedactedData: b.Data}, nil
	case "":
		return gw.Part{}, invalidf("%s.type: field required", path)
	}
	return gw.Part{}, invalidf("%s: content block type %q is not supported for this model's vendor", path, b.Type)
}

func decodeImage(path loc, b *wireBlock) (gw.Part, error) {
	s := b.Source
	if s == nil {
		return gw.Part{}, invalidf("%s.source: field required", path)
	}
	p := gw.Part{Type: gw.PartImage, CacheControl: b.CacheControl}
	switch s.Type {
	case "base64":
		if !imageMediaType(s.MediaType) {
			return gw.Part{}, invalidf("%s.source.media_type: must be image/jpeg, image/png, image/gif or image/webp", path)
		}
		if s.Data == "" {
			return gw.Part{}, invalidf("%s.source.data: field required", path)
		}
		p.MediaType, p.Data = s.MediaType, s.Data
	case "url":
		if s.URL == "" {
			return gw.Part{}, invalidf("%s.source.url: field required", path)
		}
		p.URL = s.URL
	default:
		return gw.Part{}, invalidf("%s.source.type: %q is not supported for this model's vendor (use base64 or url)", path, s.Type)
	}
	return p, nil
}

func decodeDocument(path loc, b *wireBlock) (gw.Part, error) {
	s := b.Source
	if s == nil {
		return gw.Part{}, invalidf("%s.source: field required", path)
	}
	p := gw.Part{Type: gw.PartDocument, Filename: b.Title, CacheControl: b.CacheControl}
	switch s.Type {
	case "base64":
		if s.MediaType != "application/pdf" {
			return gw.Part{}, invalidf("%s.source.media_type: must be application/pdf", path)
		}
		p.MediaType, p.Data = s.MediaType, s.Data
	case "url":
		if s.URL == "" {
			return gw.Part{}, invalidf("%s.source.url: field required", path)
		}
		p.MediaType, p.URL = "application/pdf", s.URL
	case "text":
		p.MediaType, p.Text = "text/plain", s.Data
	case "content":
		parts, err := decodeTextBlocks(path.String()+".source.content", s.Content)
		if err != nil {
			return gw.Part{}, err
		}
		texts := make([]string, len(parts))
		for i, q := range parts {
			texts[i] = q.Text
		}
		p.MediaType, p.Text = "text/plain", strings.Join(texts, "\n\n")
	default:
		return gw.Part{}, invalidf("%s.source.type: %q is not supported for this model's vendor", path, s.Type)
	}
	return p, nil
}

// decodeToolResultContent decodes the content of the tool_result block at
// at.
func decodeToolResultContent(at loc, raw json.RawMessage) ([]gw.Part, error) {
	switch firstByte(raw) {
	case 0, 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalidf("%s.content: %s", at, jsonErrText(err))
		}
		if s == "" {
			return nil, nil
		}
		return []gw.Part{{Type: gw.PartText, Text: s}}, nil
	case '[':
	default:
		return nil, invalidf("%s.content: must be a string or a list of content blocks", at)
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, invalidf("%s.content: %s", at, jsonErrText(err))
	}
	parts := make([]gw.Part, 0, len(blocks))
	for j := range blocks {
		b := &blocks[j]
		bpath := loc{msg: at.msg, blk: at.blk, sub: j}
		switch b.Type {
		case "text", "image", "document":
		default:
			return nil, invalidf("%s: content block type %q is not allowed in a tool result", bpath, b.Type)
		}
		p, err := decodeBlock(bpath, gw.RoleUser, b)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func decodeTools(r *gw.Request, tools []wireTool, tc *wireToolChoice) error {
	for i, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			return invalidf("tools[%d]: server tool %q (type %s) can only run on Anthropic models", i, t.Name, t.Type)
		}
		if t.Name == "" {
			return invalidf("tools[%d].name: field required", i)
		}
		if t.InputSchema == nil && serverToolName(t.Name) {
			return invalidf("tools[%d]: server tool %q can only run on Anthropic models", i, t.Name)
		}
		schema, ok := compactObject(t.InputSchema)
		if !ok || t.InputSchema == nil {
			return invalidf("tools[%d].input_schema: must be a JSON Schema object", i)
		}
		// Anthropic-only tool options with no equivalent elsewhere: the
		// tool is declared in full (a deferred tool is then simply
		// loaded up front) and the option is reported as dropped.
		if t.DeferLoading != nil {
			dropOnce(r, "tools.defer_loading")
		}
		if t.Eager != nil {
			dropOnce(r, "tools.eager_input_streaming")
		}
		if firstByte(t.Examples) != 0 && firstByte(t.Examples) != 'n' {
			dropOnce(r, "tools.input_examples")
		}
		r.Tools = append(r.Tools, gw.Tool{
			Name:         t.Name,
			Description:  t.Description,
			Parameters:   schema,
			Strict:       t.Strict,
			CacheControl: t.CacheControl,
		})
	}
	if tc == nil {
		return nil
	}
	switch tc.Type {
	case "auto":
		r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceAuto}
	case "any":
		r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceRequired}
	case "none":
		r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceNone}
	case "tool":
		if tc.Name == "" {
			return invalidf("tool_choice.name: field required with type \"tool\"")
		}
		r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceTool, Name: tc.Name}
	default:
		return invalidf("tool_choice.type: must be auto, any, none or tool, got %q", tc.Type)
	}
	if tc.DisableParallelToolUse {
		f := false
		r.ParallelToolCalls = &f
	}
	return nil
}

// effortLevels are the M output_config.effort values.
const effortLevels = "low, medium, high, xhigh, max"

func validEffort(e string) bool {
	switch e {
	case "low", "medium", "high", "xhigh", "max":
		return true
	}
	return false
}

func decodeReasoning(r *gw.Request, th *wireThinking, oc *wireOutputConfig) error {
	var rs gw.Reasoning
	set := false
	if th != nil {
		switch th.Type {
		case "enabled":
			if th.BudgetTokens <= 0 {
				return invalidf("thinking.budget_tokens: field required with type \"enabled\"")
			}
			rs.BudgetTokens = th.BudgetTokens
		case "adaptive":
			rs.Adaptive = true
		case "disabled":
			rs.Disabled = true
		default:
			return invalidf("thinking.type: must be enabled, adaptive or disabled, got %q", th.Type)
		}
		switch th.Display {
		case "", "summarized", "omitted":
			rs.Display = th.Display
		default:
			return invalidf("thinking.display: must be summarized or omitted, got %q", th.Display)
		}
		set = true
	}
	if oc != nil {
		if oc.Effort != "" {
			if !validEffort(oc.Effort) {
				return invalidf("output_config.effort: must be one of %s, got %q", effortLevels, oc.Effort)
			}
			rs.Effort = oc.Effort
			set = true
		}
		if f := oc.Format; f != nil {
			if f.Type != "json_schema" {
				return invalidf("output_config.format.type: must be \"json_schema\", got %q", f.Type)
			}
			schema, ok := compactObject(f.Schema)
			if !ok || f.Schema == nil {
				return invalidf("output_config.format.schema: must be a JSON Schema object")
			}
			r.ResponseFormat = &gw.ResponseFormat{Type: "json_schema", Schema: schema}
		}
	}
	if set {
		r.Reasoning = &rs
	}
	return nil
}

// dropOnce records field in r.Dropped unless it is there already.
func dropOnce(r *gw.Request, field string) {
	if !slices.Contains(r.Dropped, field) {
		r.Dropped = append(r.Dropped, field)
	}
}

func imageMediaType(mt string) bool {
	switch mt {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// jsonErrText describes a JSON decoding error without Go type names.
func jsonErrText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s: wrong type (got %s)", te.Field, te.Value)
		}
		return fmt.Sprintf("wrong type (got %s)", te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at offset %d", se.Offset)
	}
	return "malformed JSON"
}
