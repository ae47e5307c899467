package openai

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gwlabs/gateway"
)

// EncodeRequest renders a canonical request as the body of a chat
// completion request to the C-shaped vendor d describes.
//
// Mapping (the vendor protocol notes, sections 6.1 and 10):
//   - System parts become one leading system message (texts joined with
//     a blank line); a RoleSystem message stays a system message in place.
//   - Each tool_result part becomes its own `tool` message, emitted before
//     the rest of that user turn; is_error prefixes "Error: "; images and
//     documents inside a result move into the user message that follows.
//   - Images: base64 -> data: URI, URL -> image_url. Documents: text ->
//     a text part; binary -> a `file` part (file_data data URI) where the
//     vendor takes files (openai, openrouter), else a 400 naming the field.
//   - Assistant turns: text concatenated (content null when only tool
//     calls), tool_calls with arguments as compact JSON. Thinking goes to
//     the dialect's ThinkingField (DeepSeek reasoning_content, required on
//     tool-call turns; OpenRouter reasoning), else it is dropped.
//   - Tools become function tools; tool_choice and parallel_tool_calls are
//     sent only with tools.
//   - Reasoning: effort verbatim, or the nearest level of the dialect's
//     Efforts ("max" -> "xhigh" on OpenAI and Mistral, "minimal" -> "low"
//     and "xhigh"/"max" -> "high" on Together, Fireworks and Groq); a
//     budget maps to low (<= 2048), medium (<= 8192) or high; disabled ->
//     "none" (DeepSeek: thinking disabled; OpenRouter: reasoning.enabled
//     false, budget -> reasoning.max_tokens; a vendor without "none" in
//     its Efforts gets no reasoning_effort, listed as dropped).
//     Anthropic's thinking.display "omitted" has no equivalent and is
//     listed as dropped (except on OpenAI, which returns no reasoning
//     text anyway).
//   - Mistral: tool call ids are rewritten to 9 alphanumerics (base62 of
//     their SHA-256) in assistant tool_calls and tool messages alike, so
//     the pairs still match; responses need no mapping back, since the
//     ids Mistral mints already have that form. On the other dialects an
//     id longer than 40 characters (OpenAI's limit; Gemini ids carrying a
//     thought signature are far longer) is rewritten the same way to
//     "call_" + 24 base62 characters.
//
// Dropped by rule and recorded in r.Dropped: top_k where the vendor has
// none, temperature and top_p on OpenAI when a reasoning effort other
// than "none" is sent (its reasoning models refuse them then), user on Mistral, thinking and redacted_thinking blocks where the
// vendor cannot replay them, cache_control markers (caching is automatic
// on these vendors). The error is an *gw.Error with CodeInvalidRequest.
func EncodeRequest(r *gw.Request, d *Dialect) ([]byte, error) {
	if d == nil {
		return nil, fmt.Errorf("encode request: nil dialect")
	}
	e := reqEncoder{r: r, d: d}
	out, err := e.encode()
	if err != nil {
		return nil, err
	}
	b, err := jsonMarshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

type reqEncoder struct {
	r *gw.Request
	d *Dialect
}

func (e *reqEncoder) drop(field string) {
	if !slices.Contains(e.r.Dropped, field) {
		e.r.Dropped = append(e.r.Dropped, field)
	}
}

func (e *reqEncoder) encode() (*outRequest, error) {
	r, d := e.r, e.d
	out := &outRequest{
		Model:       r.Model,
		Temperature: r.Temperature,
		TopP:        r.TopP,
		Stop:        r.Stop,
	}
	if r.MaxTokens != nil {
		if d.MaxTokensField == "max_completion_tokens" {
			out.MaxCompletionTokens = r.MaxTokens
		} else {
			out.MaxTokens = r.MaxTokens
		}
	}
	if r.TopK != nil {
		if d.TopK {
			out.TopK = r.TopK
		} else {
			e.drop("top_k")
		}
	}
	if r.Seed != nil {
		if d.SeedField == "random_seed" {
			out.RandomSeed = r.Seed
		} else {
			out.Seed = r.Seed
		}
	}
	if r.Stream {
		out.Stream = true
		if d.StreamOptions {
			out.StreamOptions = &outStreamOptions{IncludeUsage: true}
		}
	}
	if r.User != "" {
		switch d.UserField {
		case "safety_identifier":
			out.SafetyIdentifier = truncateUTF8(r.User, 64)
		case "user":
			out.User = r.User
		default:
			e.drop("user")
		}
	}

	msgs, err := e.messages()
	if err != nil {
		return nil, err
	}
	out.Messages = msgs

	if len(r.Tools) > 0 {
		for i, t := range r.Tools {
			if t.Name == "" {
				return nil, invalid("tools[%d].name is required", i)
			}
			params := t.Parameters
			if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			if len(t.CacheControl) > 0 {
				e.drop("cache_control")
			}
			out.Tools = append(out.Tools, outTool{Type: "function", Function: outFunction{
				Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict,
			}})
		}
		if tc := r.ToolChoice; tc != nil {
			switch tc.Mode {
			case gw.ToolChoiceAuto, gw.ToolChoiceNone, gw.ToolChoiceRequired:
				out.ToolChoice, _ = jsonMarshal(string(tc.Mode))
			case gw.ToolChoiceTool:
				if tc.Name == "" {
					return nil, invalid("tool_choice.name is required")
				}
				out.ToolChoice, _ = jsonMarshal(struct {
					Type     string `json:"type"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				}{Type: "function", Function: struct {
					Name string `json:"name"`
				}{tc.Name}})
			case "":
			default:
				return nil, invalid("tool_choice %q is not supported", tc.Mode)
			}
		}
		out.ParallelToolCalls = r.ParallelToolCalls
	} else if r.ToolChoice != nil && r.ToolChoice.Mode != gw.ToolChoiceNone && r.ToolChoice.Mode != gw.ToolChoiceAuto && r.ToolChoice.Mode != "" {
		return nil, invalid("tool_choice %q needs tools", r.ToolChoice.Mode)
	}

	if rs := r.Reasoning; rs != nil {
		e.reasoning(out, rs)
	}
	if d.SamplingOnlyWithoutReasoning && out.ReasoningEffort != "" && out.ReasoningEffort != "none" {
		if out.Temperature != nil {
			out.Temperature = nil
			e.drop("temperature")
		}
		if out.TopP != nil {
			out.TopP = nil
			e.drop("top_p")
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			out.ResponseFormat = &outResponseFormat{Type: "json_object"}
		case "json_schema":
			name := rf.Name
			if name == "" {
				name = "response"
			}
			out.ResponseFormat = &outResponseFormat{Type: "json_schema", JSONSchema: &outJSONSchema{
				Name: name, Schema: rf.Schema, Strict: rf.Strict,
			}}
		case "text", "":
		default:
			return nil, invalid("response_format.type %q is not supported", rf.Type)
		}
	}
	return out, nil
}

// effortForBudget maps an explicit thinking budget to an effort level.
func effortForBudget(budget int) string {
	switch {
	case budget <= 2048:
		return "low"
	case budget <= 8192:
		return "medium"
	}
	return "high"
}

func (e *reqEncoder) reasoning(out *outRequest, rs *gw.Reasoning) {
	effort := rs.Effort
	if effort == "" && rs.BudgetTokens > 0 {
		effort = effortForBudget(rs.BudgetTokens)
	}
	disabled := rs.Disabled || effort == "none"
	switch e.d.Reasoning {
	case ReasoningDeepSeek:
		if disabled {
			out.Thinking = &outThinking{Type: "disabled"}
			return
		}
		if effort == "" && !rs.Adaptive {
			return
		}
		out.Thinking = &outThinking{Type: "enabled"}
		switch effort {
		case "minimal", "low":
			out.ReasoningEffort = "low"
		case "medium", "high":
			out.ReasoningEffort = "high"
		case "xhigh", "max":
			out.ReasoningEffort = "max"
		}
	case ReasoningOpenRouter:
		switch {
		case disabled:
			f := false
			out.Reasoning = &outReasoning{Enabled: &f}
		case rs.Effort != "":
			eff := rs.Effort
			if v := e.d.Efforts; v != nil && !slices.Contains(v, eff) {
				eff = nearestEffort(v, eff)
			}
			out.Reasoning = &outReasoning{Effort: eff}
		case rs.BudgetTokens > 0:
			out.Reasoning = &outReasoning{MaxTokens: rs.BudgetTokens}
		case rs.Adaptive:
			t := true
			out.Reasoning = &outReasoning{Enabled: &t}
		}
	default:
		if disabled {
			out.ReasoningEffort = "none"
		} else {
			out.ReasoningEffort = effort
		}
		if v := e.d.Efforts; v != nil && out.ReasoningEffort != "" && !slices.Contains(v, out.ReasoningEffort) {
			if out.ReasoningEffort == "none" {
				// The vendor cannot switch reasoning off: leave its default.
				out.ReasoningEffort = ""
				e.drop("reasoning_effort")
			} else {
				out.ReasoningEffort = nearestEffort(v, out.ReasoningEffort)
			}
		}
	}
	if rs.Display == "omitted" && e.d.Vendor != "openai" {
		// Anthropic's "no thinking text" has no request field here (OpenAI
		// returns none anyway); the vendor's reasoning text is relayed.
		e.drop("thinking.display")
	}
}

// effortOrder ranks the canonical effort levels.
var effortOrder = [...]string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// nearestEffort returns the level of vocab (weakest first; "none" is
// never chosen) closest to effort: the strongest level not above it, or
// the weakest level when all are above it.
func nearestEffort(vocab []string, effort string) string {
	rank := slices.Index(effortOrder[:], effort)
	best := ""
	for _, v := range vocab {
		if v == "none" {
			continue
		}
		r := slices.Index(effortOrder[:], v)
		if best == "" || r <= rank {
			best = v
		}
	}
	return best
}

func (e *reqEncoder) messages() ([]outMessage, error) {
	r := e.r
	var msgs []outMessage
	if len(r.System) > 0 {
		var texts []string
		for i, p := range r.System {
			if p.Type != gw.PartText && p.Type != "" {
				return nil, invalid("system[%d]: only text is supported in system content", i)
			}
			if len(p.CacheControl) > 0 {
				e.drop("cache_control")
			}
			texts = append(texts, p.Text)
		}
		msgs = append(msgs, outMessage{Role: "system", Content: outContent{Text: strings.Join(texts, "\n\n")}})
	}
	for i, m := range r.Messages {
		var err error
		switch m.Role {
		case gw.RoleSystem:
			var texts []string
			for j, p := range m.Content {
				if p.Type != gw.PartText {
					return nil, invalid("messages[%d].content[%d]: only text is supported in a system message", i, j)
				}
				if len(p.CacheControl) > 0 {
					e.drop("cache_control")
				}
				texts = append(texts, p.Text)
			}
			msgs = append(msgs, outMessage{Role: "system", Content: outContent{Text: strings.Join(texts, "\n\n")}})
		case gw.RoleUser:
			msgs, err = e.userTurn(msgs, i, m)
		case gw.RoleAssistant:
			msgs, err = e.assistantTurn(msgs, i, m)
		default:
			return nil, invalid("messages[%d].role %q is not supported", i, m.Role)
		}
		if err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// userTurn emits one tool message per tool result, then the rest of the
// turn (and any media from the results) as one user message.
func (e *reqEncoder) userTurn(msgs []outMessage, i int, m gw.Message) ([]outMessage, error) {
	var parts []outPart
	for j, p := range m.Content {
		if len(p.CacheControl) > 0 {
			e.drop("cache_control")
		}
		switch p.Type {
		case gw.PartToolResult:
			var texts []string
			for k, c := range p.Content {
				switch c.Type {
				case gw.PartText:
					texts = append(texts, c.Text)
				case gw.PartImage, gw.PartDocument:
					// C tool messages hold text only: media move into the
					// user message that follows the tool messages.
					op, err := e.mediaPart(c, fmt.Sprintf("messages[%d].content[%d].content[%d]", i, j, k))
					if err != nil {
						return nil, err
					}
					parts = append(parts, op)
				default:
					return nil, invalid("messages[%d].content[%d].content[%d]: %s is not supported in a tool result", i, j, k, c.Type)
				}
			}
			text := strings.Join(texts, "\n")
			if p.IsError {
				text = "Error: " + text
			}
			msgs = append(msgs, outMessage{Role: "tool", ToolCallID: e.toolID(p.ToolCallID), Content: outContent{Text: text}})
		case gw.PartText:
			if p.Text == "" {
				continue
			}
			parts = append(parts, outPart{Type: "text", Text: p.Text})
		case gw.PartImage, gw.PartDocument:
			op, err := e.mediaPart(p, fmt.Sprintf("messages[%d].content[%d]", i, j))
			if err != nil {
				return nil, err
			}
			parts = append(parts, op)
		default:
			return nil, invalid("messages[%d].content[%d]: %s is not supported in a user message", i, j, p.Type)
		}
	}
	if len(parts) == 0 {
		if len(m.Content) == 0 {
			// An empty user turn stays a turn: the vendor decides.
			msgs = append(msgs, outMessage{Role: "user", Content: outContent{Text: ""}})
		}
		return msgs, nil
	}
	if len(parts) == 1 && parts[0].Type == "text" {
		return append(msgs, outMessage{Role: "user", Content: outContent{Text: parts[0].Text}}), nil
	}
	return append(msgs, outMessage{Role: "user", Content: outContent{Parts: parts}}), nil
}

// mediaPart renders an image or document part; field names it in errors.
func (e *reqEncoder) mediaPart(p gw.Part, field string) (outPart, error) {
	if p.Type == gw.PartImage {
		switch {
		case p.Data != "":
			if p.MediaType == "" {
				return outPart{}, invalid("%s: image media type is required", field)
			}
			return outPart{Type: "image_url", ImageURL: &outImageURL{URL: "data:" + p.MediaType + ";base64," + p.Data}}, nil
		case p.URL != "":
			return outPart{Type: "image_url", ImageURL: &outImageURL{URL: p.URL}}, nil
		}
		return outPart{}, invalid("%s: image has neither data nor url", field)
	}
	// Document.
	switch {
	case p.Data == "" && p.URL == "":
		return outPart{Type: "text", Text: p.Text}, nil
	case !e.d.Documents:
		return outPart{}, invalid("%s: document input is not supported by %s", field, e.d.Vendor)
	case p.Data == "":
		return outPart{}, invalid("%s: document url is not supported by %s (send the data inline)", field, e.d.Vendor)
	}
	mt := p.MediaType
	if mt == "" {
		mt = "application/pdf"
	}
	return outPart{Type: "file", File: &outFile{FileData: "data:" + mt + ";base64," + p.Data, Filename: p.Filename}}, nil
}

func (e *reqEncoder) assistantTurn(msgs []outMessage, i int, m gw.Message) ([]outMessage, error) {
	var text, thinking strings.Builder
	hasThinking := false
	var calls []outToolCall
	for j, p := range m.Content {
		if len(p.CacheControl) > 0 {
			e.drop("cache_control")
		}
		switch p.Type {
		case gw.PartText:
			text.WriteString(p.Text)
		case gw.PartToolCall:
			args, err := compactArgs(p.Arguments)
			if err != nil {
				return nil, invalid("messages[%d].content[%d]: tool call arguments must be a JSON object", i, j)
			}
			calls = append(calls, outToolCall{ID: e.toolID(p.ToolCallID), Type: "function",
				Function: outFunctionCall{Name: p.ToolName, Arguments: args}})
		case gw.PartThinking:
			if e.d.ThinkingField == "" {
				e.drop("thinking")
				continue
			}
			thinking.WriteString(p.Text)
			hasThinking = true
		case gw.PartRedactedThinking:
			e.drop("redacted_thinking")
		default:
			return nil, invalid("messages[%d].content[%d]: %s is not supported in an assistant message", i, j, p.Type)
		}
	}
	om := outMessage{Role: "assistant", ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		om.Content = outContent{Text: text.String()}
	} else {
		om.Content = outContent{Null: true}
	}
	if hasThinking || (e.d.ReasoningOnToolCalls && len(calls) > 0) {
		s := thinking.String()
		switch e.d.ThinkingField {
		case "reasoning_content":
			om.ReasoningContent = &s
		case "reasoning":
			om.Reasoning = &s
		}
	}
	return append(msgs, om), nil
}

// maxToolIDLen is the longest tool call id OpenAI accepts in a request
// (longer ones are a 400 "string too long"); OpenRouter routes to OpenAI
// share the limit.
const maxToolIDLen = 40

// toolID returns the id to send for a tool call id: on dialects with
// ShortToolIDs a deterministic 9-character rewrite; else the id itself,
// or, when longer than maxToolIDLen (ids from other vendors, such as
// Gemini's, which carry a thought signature), a deterministic rewrite
// "call_" + 24 base62 characters of its SHA-256.
func (e *reqEncoder) toolID(id string) string {
	if e.d.ShortToolIDs {
		return ShortToolID(id)
	}
	if len(id) <= maxToolIDLen {
		return id
	}
	return "call_" + hashBase62(id, 24)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ShortToolID returns id if it already matches ^[a-zA-Z0-9]{9}$ (Mistral's
// rule), else 9 base62 characters of its SHA-256, so the same id always
// maps to the same short one within and across requests.
func ShortToolID(id string) string {
	if len(id) == 9 && isAlnum(id) {
		return id
	}
	return hashBase62(id, 9)
}

// hashBase62 returns n (at most 43) base62 characters of id's SHA-256.
func hashBase62(id string, n int) string {
	sum := sha256.Sum256([]byte(id))
	v := new(big.Int).SetBytes(sum[:])
	buf := make([]byte, n)
	mod := new(big.Int)
	b62 := big.NewInt(62)
	for i := range buf {
		v.DivMod(v, b62, mod)
		buf[i] = base62[mod.Int64()]
	}
	return string(buf)
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// compactArgs returns a tool call's arguments as compact JSON object
// text; empty arguments are "{}".
func compactArgs(args json.RawMessage) (string, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 {
		return "{}", nil
	}
	if t[0] != '{' {
		return "", fmt.Errorf("arguments are not a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return "", fmt.Errorf("compact arguments: %w", err)
	}
	return buf.String(), nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
