package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/datauri"
)

// inRequest is a chat completion request as a C client sends it.
type inRequest struct {
	Model               string            `json:"model"`
	Messages            []inReqMessage    `json:"messages"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	MaxTokens           *int              `json:"max_tokens"`
	Temperature         *float64          `json:"temperature"`
	TopP                *float64          `json:"top_p"`
	TopK                *int              `json:"top_k"`
	Stop                json.RawMessage   `json:"stop"`
	Seed                *int64            `json:"seed"`
	N                   *int              `json:"n"`
	Logprobs            *bool             `json:"logprobs"`
	Stream              *bool             `json:"stream"`
	StreamOptions       *inStreamOptions  `json:"stream_options"`
	Tools               []inTool          `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	ReasoningEffort     *string           `json:"reasoning_effort"`
	ResponseFormat      *inResponseFormat `json:"response_format"`
	User                *string           `json:"user"`
	SafetyIdentifier    *string           `json:"safety_identifier"`
}

type inStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type inTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type inResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

type inReqMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []inReqToolCall `json:"tool_calls"`
	ToolCallID *string         `json:"tool_call_id"`
	// IsError marks a tool message as a failed call (a gateway extension
	// mirroring Anthropic's tool_result is_error; C has no such flag).
	IsError          bool            `json:"is_error"`
	ReasoningContent *string         `json:"reasoning_content"`
	FunctionCall     json.RawMessage `json:"function_call"`
}

type inReqToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type inReqPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	File *struct {
		FileData string `json:"file_data"`
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
	} `json:"file"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// fieldClass says what DecodeRequest does with a top-level field.
type fieldClass int

const (
	fieldUnknown fieldClass = iota // dropped, recorded
	fieldKnown                     // decoded
	fieldRefused                   // 400 unless null or empty
	fieldDropped                   // dropped by rule, recorded unless null
)

func classify(k string) fieldClass {
	switch k {
	case "model", "messages", "max_completion_tokens", "max_tokens", "temperature", "top_p", "top_k",
		"stop", "seed", "n", "logprobs", "stream", "stream_options", "tools", "tool_choice", "parallel_tool_calls",
		"reasoning_effort", "response_format", "user", "safety_identifier":
		return fieldKnown
	case "logit_bias", "top_logprobs", "audio", "modalities", "prediction", "functions", "function_call", "web_search_options":
		return fieldRefused
	case "presence_penalty", "frequency_penalty", "service_tier", "store", "metadata", "verbosity",
		"prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "moderation":
		return fieldDropped
	}
	return fieldUnknown
}

// DecodeRequest decodes a C client's chat completion request into the
// canonical request. Errors are *gw.Error with CodeInvalidRequest naming
// the field.
//
// Rules (the vendor protocol notes, section 6.2):
//   - system and developer messages before the first other message are
//     hoisted into System in order; later ones stay in place as
//     RoleSystem messages.
//   - tool messages become tool_result parts of one user turn
//     (consecutive ones merged); a user message right after them is
//     appended to that same turn.
//   - image_url: a data: URI becomes a base64 image (jpeg, png, gif or
//     webp only), http(s) a URL image; file parts with file_data become
//     documents; input_audio, file_id and other parts are refused.
//   - assistant reasoning_content comes back as a thinking part (no
//     signature) before the text; tool call arguments must be a JSON
//     object ("" means {}).
//   - max_completion_tokens wins over max_tokens; stop is a string or a
//     list; reasoning_effort "none" disables reasoning; tool_choice
//     allowed_tools filters the tools.
//   - Refused: n other than 1, logprobs true, top_logprobs, logit_bias,
//     audio, modalities, prediction, legacy functions/function_call,
//     web_search_options.
//   - Dropped (recorded in Dropped): presence_penalty, frequency_penalty,
//     service_tier, store, metadata, verbosity, prompt_cache_*,
//     include_obfuscation, moderation, message names, and any unknown
//     top-level field.
func DecodeRequest(body []byte) (*gw.Request, error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return nil, invalid("request body must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(t, &fields); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not valid JSON", Err: err}
	}
	var in inRequest
	if err := json.Unmarshal(t, &in); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: jsonErrText(err), Err: err}
	}
	r := &gw.Request{Model: in.Model}
	if in.Model == "" {
		return nil, invalid("model is required")
	}

	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := fields[k]
		null := bytes.Equal(bytes.TrimSpace(v), []byte("null"))
		switch classify(k) {
		case fieldKnown:
		case fieldRefused:
			if !null && !isEmptyJSON(v) {
				return nil, invalid("%s is not supported on this route", k)
			}
		case fieldDropped:
			if !null {
				r.Dropped = append(r.Dropped, k)
			}
		default:
			r.Dropped = append(r.Dropped, k)
		}
	}

	if in.N != nil && *in.N != 1 {
		return nil, invalid("n must be 1 (got %d)", *in.N)
	}
	if in.Logprobs != nil && *in.Logprobs {
		return nil, invalid("logprobs is not supported on this route")
	}
	r.MaxTokens = in.MaxCompletionTokens
	if r.MaxTokens == nil {
		r.MaxTokens = in.MaxTokens
	}
	if r.MaxTokens != nil && *r.MaxTokens < 1 {
		return nil, invalid("max_tokens must be at least 1")
	}
	r.Temperature, r.TopP, r.TopK, r.Seed = in.Temperature, in.TopP, in.TopK, in.Seed
	stop, err := decodeStop(in.Stop)
	if err != nil {
		return nil, err
	}
	r.Stop = stop
	if in.Stream != nil && *in.Stream {
		r.Stream = true
		if in.StreamOptions != nil {
			r.IncludeUsage = in.StreamOptions.IncludeUsage
		}
	}
	if in.SafetyIdentifier != nil && *in.SafetyIdentifier != "" {
		r.User = *in.SafetyIdentifier
	} else if in.User != nil {
		r.User = *in.User
	}
	if in.ReasoningEffort != nil && *in.ReasoningEffort != "" {
		eff := *in.ReasoningEffort
		switch eff {
		case "none", "minimal", "low", "medium", "high", "xhigh", "max":
		default:
			return nil, invalid("reasoning_effort %q is not one of none, minimal, low, medium, high, xhigh, max", eff)
		}
		r.Reasoning = &gw.Reasoning{Effort: eff, Disabled: eff == "none"}
	}
	if rf := in.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text", "":
		case "json_object":
			r.ResponseFormat = &gw.ResponseFormat{Type: "json_object"}
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return nil, invalid("response_format.json_schema.schema is required")
			}
			r.ResponseFormat = &gw.ResponseFormat{Type: "json_schema", Name: rf.JSONSchema.Name,
				Schema: rf.JSONSchema.Schema, Strict: rf.JSONSchema.Strict}
		default:
			return nil, invalid("response_format.type %q is not supported", rf.Type)
		}
	}
	if err := decodeTools(r, &in); err != nil {
		return nil, err
	}
	if err := decodeMessages(r, in.Messages); err != nil {
		return nil, err
	}
	return r, nil
}

// jsonErrText names the field of a JSON type error without internal Go
// type names.
func jsonErrText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s has the wrong type (%s)", te.Field, te.Value)
	}
	return "malformed JSON"
}

func isEmptyJSON(v json.RawMessage) bool {
	s := string(bytes.TrimSpace(v))
	return s == "{}" || s == "[]" || s == "false"
}

func decodeStop(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("stop must be a string or a list of strings")
		}
		if s == "" {
			return nil, nil
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalid("stop must be a string or a list of strings")
	}
	return list, nil
}

func decodeTools(r *gw.Request, in *inRequest) error {
	for i, t := range in.Tools {
		if t.Type != "function" && t.Type != "" {
			return invalid("tools[%d].type %q is not supported (only function tools)", i, t.Type)
		}
		if t.Function == nil || t.Function.Name == "" {
			return invalid("tools[%d].function.name is required", i)
		}
		params := t.Function.Parameters
		if len(params) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, gw.Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: params, Strict: t.Function.Strict, CacheControl: t.CacheControl})
	}
	if len(in.Tools) > 0 {
		r.ParallelToolCalls = in.ParallelToolCalls
	}
	raw := bytes.TrimSpace(in.ToolChoice)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto", "none", "required":
			r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceMode(s)}
			return nil
		}
		return invalid("tool_choice %q is not one of auto, none, required", s)
	}
	var tc struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools *struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return invalid("tool_choice is malformed")
	}
	switch tc.Type {
	case "function":
		if tc.Function == nil || tc.Function.Name == "" {
			return invalid("tool_choice.function.name is required")
		}
		if !slices.ContainsFunc(r.Tools, func(t gw.Tool) bool { return t.Name == tc.Function.Name }) {
			return invalid("tool_choice names %q, which is not in tools", tc.Function.Name)
		}
		r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceTool, Name: tc.Function.Name}
	case "allowed_tools":
		if tc.AllowedTools == nil {
			return invalid("tool_choice.allowed_tools is required")
		}
		allowed := map[string]bool{}
		for _, t := range tc.AllowedTools.Tools {
			allowed[t.Function.Name] = true
		}
		r.Tools = slices.DeleteFunc(r.Tools, func(t gw.Tool) bool { return !allowed[t.Name] })
		switch tc.AllowedTools.Mode {
		case "auto", "":
			r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceAuto}
		case "required":
			r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceRequired}
		default:
			return invalid("tool_choice.allowed_tools.mode %q is not one of auto, required", tc.AllowedTools.Mode)
		}
		if len(r.Tools) == 0 {
			r.ToolChoice, r.ParallelToolCalls = nil, nil
		}
	default:
		return invalid("tool_choice.type %q is not supported", tc.Type)
	}
	return nil
}

func decodeMessages(r *gw.Request, msgs []inReqMessage) error {
	if len(msgs) == 0 {
		return invalid("messages is required and must not be empty")
	}
	leading := true   // still in the leading run of system messages
	toolTurn := false // the last message is a user turn of tool results
	droppedName := false
	for i, m := range msgs {
		if m.Name != "" && !droppedName {
			r.Dropped = append(r.Dropped, "messages.name")
			droppedName = true
		}
		if len(m.FunctionCall) > 0 && string(bytes.TrimSpace(m.FunctionCall)) != "null" {
			return invalid("messages[%d].function_call is not supported; use tool_calls", i)
		}
		switch m.Role {
		case "system", "developer":
			parts, err := textParts(m.Content, fmt.Sprintf("messages[%d].content", i))
			if err != nil {
				return err
			}
			if leading {
				r.System = append(r.System, parts...)
			} else {
				r.Messages = append(r.Messages, gw.Message{Role: gw.RoleSystem, Content: parts})
			}
			toolTurn = false
			continue
		case "user":
			parts, err := userParts(m.Content, i)
			if err != nil {
				return err
			}
			if toolTurn {
				last := &r.Messages[len(r.Messages)-1]
				last.Content = append(last.Content, parts...)
			} else {
				r.Messages = append(r.Messages, gw.Message{Role: gw.RoleUser, Content: parts})
			}
			toolTurn = false
		case "assistant":
			msg, err := assistantMessage(m, i)
			if err != nil {
				return err
			}
			r.Messages = append(r.Messages, msg)
			toolTurn = false
		case "tool":
			if m.ToolCallID == nil || *m.ToolCallID == "" {
				return invalid("messages[%d].tool_call_id is required", i)
			}
			content, err := textParts(m.Content, fmt.Sprintf("messages[%d].content", i))
			if err != nil {
				return err
			}
			part := gw.Part{Type: gw.PartToolResult, ToolCallID: *m.ToolCallID, Content: content, IsError: m.IsError}
			if toolTurn {
				last := &r.Messages[len(r.Messages)-1]
				last.Content = append(last.Content, part)
			} else {
				r.Messages = append(r.Messages, gw.Message{Role: gw.RoleUser, Content: []gw.Part{part}})
			}
			toolTurn = true
		case "function":
			return invalid("messages[%d].role function is not supported; use tool", i)
		case "":
			return invalid("messages[%d].role is required", i)
		default:
			return invalid("messages[%d].role %q is not one of system, developer, user, assistant, tool", i, m.Role)
		}
		leading = false
	}
	return nil
}

// rawParts decodes content given as a string (one text part; an empty
// string gives none) or a list of parts.
func rawParts(raw json.RawMessage, field string) (text *string, parts []inReqPart, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, invalid("%s is malformed", field)
		}
		return &s, nil, nil
	case '[':
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, nil, invalid("%s has a malformed part", field)
		}
		return nil, parts, nil
	}
	return nil, nil, invalid("%s must be a string or a list of parts", field)
}

// textParts decodes content that may hold text only (system, developer,
// tool).
func textParts(raw json.RawMessage, field string) ([]gw.Part, error) {
	s, parts, err := rawParts(raw, field)
	if err != nil {
		return nil, err
	}
	if s != nil {
		if *s == "" {
			return nil, nil
		}
		return []gw.Part{{Type: gw.PartText, Text: *s}}, nil
	}
	var out []gw.Part
	for j, p := range parts {
		if p.Type != "text" {
			return nil, invalid("%s[%d].type %q is not supported here (text only)", field, j, p.Type)
		}
		if p.Text == "" {
			continue
		}
		out = append(out, gw.Part{Type: gw.PartText, Text: p.Text, CacheControl: p.CacheControl})
	}
	return out, nil
}

func userParts(raw json.RawMessage, i int) ([]gw.Part, error) {
	field := fmt.Sprintf("messages[%d].content", i)
	s, parts, err := rawParts(raw, field)
	if err != nil {
		return nil, err
	}
	if s != nil {
		if *s == "" {
			return nil, nil
		}
		return []gw.Part{{Type: gw.PartText, Text: *s}}, nil
	}
	var out []gw.Part
	for j, p := range parts {
		pf := fmt.Sprintf("%s[%d]", field, j)
		switch p.Type {
		case "text":
			if p.Text == "" {
				continue
			}
			out = append(out, gw.Part{Type: gw.PartText, Text: p.Text, CacheControl: p.CacheControl})
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, invalid("%s.image_url.url is required", pf)
			}
			img, err := datauri.Image(p.ImageURL.URL, pf+".image_url.url")
			if err != nil {
				return nil, err
			}
			img.CacheControl = p.CacheControl
			out = append(out, img)
		case "file":
			if p.File == nil {
				return nil, invalid("%s.file is required", pf)
			}
			if p.File.FileData == "" {
				return nil, invalid("%s.file: only file_data is supported on this route (file_id is not)", pf)
			}
			mt, data, ok := datauri.Parse(p.File.FileData)
			if !ok {
				return nil, invalid("%s.file.file_data must be a base64 data: URI", pf)
			}
			out = append(out, gw.Part{Type: gw.PartDocument, MediaType: mt, Data: data, Filename: p.File.Filename, CacheControl: p.CacheControl})
		case "input_audio":
			return nil, invalid("%s: input_audio is not supported on this route", pf)
		default:
			return nil, invalid("%s.type %q is not supported", pf, p.Type)
		}
	}
	return out, nil
}

func assistantMessage(m inReqMessage, i int) (gw.Message, error) {
	msg := gw.Message{Role: gw.RoleAssistant}
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		msg.Content = append(msg.Content, gw.Part{Type: gw.PartThinking, Text: *m.ReasoningContent})
	}
	field := fmt.Sprintf("messages[%d].content", i)
	s, parts, err := rawParts(m.Content, field)
	if err != nil {
		return msg, err
	}
	if s != nil && *s != "" {
		msg.Content = append(msg.Content, gw.Part{Type: gw.PartText, Text: *s})
	}
	for j, p := range parts {
		switch p.Type {
		case "text", "refusal":
			if p.Text != "" {
				msg.Content = append(msg.Content, gw.Part{Type: gw.PartText, Text: p.Text, CacheControl: p.CacheControl})
			}
		default:
			return msg, invalid("%s[%d].type %q is not supported in an assistant message", field, j, p.Type)
		}
	}
	for j, tc := range m.ToolCalls {
		f := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
		if tc.Type != "" && tc.Type != "function" {
			return msg, invalid("%s.type %q is not supported", f, tc.Type)
		}
		if tc.ID == "" {
			return msg, invalid("%s.id is required", f)
		}
		if tc.Function.Name == "" {
			return msg, invalid("%s.function.name is required", f)
		}
		args := bytes.TrimSpace([]byte(tc.Function.Arguments))
		if len(args) == 0 {
			args = []byte("{}")
		}
		if args[0] != '{' || !json.Valid(args) {
			return msg, invalid("%s.function.arguments must be a JSON object", f)
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, args)
		msg.Content = append(msg.Content, gw.Part{Type: gw.PartToolCall, ToolCallID: tc.ID, ToolName: tc.Function.Name, Arguments: buf.Bytes()})
	}
	return msg, nil
}
