package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/reqbody"
)

// MaxModelBytes bounds the model field (as on the other endpoints).
const MaxModelBytes = 256

// wireRequest is a Responses create request as clients send it. Members
// are matched case-sensitively, duplicates and invalid UTF-8 refused (the
// JSON v2 decoder's defaults): the gateway reads what the vendor reads.
type wireRequest struct {
	Model              *string          `json:"model"`
	Input              jsontext.Value   `json:"input"`
	Instructions       *string          `json:"instructions"`
	Tools              []jsontext.Value `json:"tools"`
	ToolChoice         jsontext.Value   `json:"tool_choice"`
	ParallelToolCalls  *bool            `json:"parallel_tool_calls"`
	Reasoning          *wireReasoning   `json:"reasoning"`
	Text               *wireText        `json:"text"`
	MaxOutputTokens    *int64           `json:"max_output_tokens"`
	Temperature        *float64         `json:"temperature"`
	TopP               *float64         `json:"top_p"`
	Metadata           jsontext.Value   `json:"metadata"`
	Store              *bool            `json:"store"`
	Include            []string         `json:"include"`
	PreviousResponseID *string          `json:"previous_response_id"`
	PromptCacheKey     *string          `json:"prompt_cache_key"`
	Truncation         *string          `json:"truncation"`
	User               *string          `json:"user"`
	SafetyIdentifier   *string          `json:"safety_identifier"`
	Stream             *bool            `json:"stream"`
	Background         *bool            `json:"background"`
	Conversation       jsontext.Value   `json:"conversation"`
	Prompt             jsontext.Value   `json:"prompt"`
	TopLogprobs        *int64           `json:"top_logprobs"`
	// Everything else (client_metadata, service_tier, stream_options,
	// max_tool_calls, ...) is kept by name only, for Dropped.
	Unknown jsontext.Value `json:",unknown"`
}

type wireReasoning struct {
	Effort          *string `json:"effort"`
	Summary         *string `json:"summary"`
	GenerateSummary *string `json:"generate_summary"`
}

type wireText struct {
	Format    *wireFormat `json:"format"`
	Verbosity *string     `json:"verbosity"`
}

type wireFormat struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Schema      jsontext.Value `json:"schema"`
	Strict      *bool          `json:"strict"`
	Description string         `json:"description"`
}

// wireItem is one input item; which members mean something depends on
// Type ("" with a role: an easy input message).
type wireItem struct {
	Type             string         `json:"type"`
	ID               string         `json:"id"`
	Role             string         `json:"role"`
	Content          jsontext.Value `json:"content"`
	CallID           string         `json:"call_id"`
	Name             string         `json:"name"`
	Namespace        string         `json:"namespace"`
	Arguments        *string        `json:"arguments"`
	Input            *string        `json:"input"`
	Output           jsontext.Value `json:"output"`
	Summary          []wireSummary  `json:"summary"`
	EncryptedContent *string        `json:"encrypted_content"`
	Status           string         `json:"status"`
	Unknown          jsontext.Value `json:",unknown"`
	raw              jsontext.Value
}

type wireSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// wirePart is a content part of a message or of a tool output.
type wirePart struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text"`
	Refusal  *string        `json:"refusal"`
	ImageURL *string        `json:"image_url"`
	FileID   *string        `json:"file_id"`
	FileData *string        `json:"file_data"`
	FileURL  *string        `json:"file_url"`
	Filename string         `json:"filename"`
	Detail   string         `json:"detail"`
	Unknown  jsontext.Value `json:",unknown"`
}

type wireTool struct {
	Type        string           `json:"type"`
	Name        string           `json:"name"`
	Description *string          `json:"description"`
	Parameters  jsontext.Value   `json:"parameters"`
	Strict      *bool            `json:"strict"`
	Format      *wireToolFormat  `json:"format"`
	Tools       []jsontext.Value `json:"tools"`
}

type wireToolFormat struct {
	Type       string `json:"type"`
	Syntax     string `json:"syntax"`
	Definition string `json:"definition"`
}

func invalid(format string, args ...any) *gw.Error {
	return gw.Errorf(gw.CodeInvalidRequest, format, args...)
}

// Request is a parsed Responses request: what the gateway reads for
// routing, holds and the guard, and, on a mapped route, the canonical
// request and what the answer must echo or restore.
type Request struct {
	Model     string
	Stream    bool
	MaxOutput int64
	// Text is every piece of text, in order, with its source (the guard's
	// input): instructions and system/developer messages as system text,
	// user messages and tool outputs as user and tool text, assistant
	// messages and tool-call arguments as assistant text.
	Text []gw.Text

	// Store is the caller's store (true when absent, as on OpenAI).
	Store bool
	// IncludeEncrypted: include has "reasoning.encrypted_content".
	IncludeEncrypted   bool
	PreviousResponseID string

	// Tools maps the names the vendor sees back to the caller's tools
	// (namespace members flattened, custom tools wrapped).
	Tools ToolNames

	// Echo holds the request members a response object repeats.
	Echo Echo

	// HostedTools names the hosted tools left out of a mapped request.
	HostedTools []string

	wire wireRequest
}

// Echo is what a response object repeats of its request, as sent.
type Echo struct {
	Instructions       *string
	MaxOutputTokens    *int64
	Metadata           jsontext.Value
	ParallelToolCalls  *bool
	PreviousResponseID *string
	Reasoning          *wireReasoning
	Store              bool
	Temperature        *float64
	TopP               *float64
	Text               *wireText
	ToolChoice         jsontext.Value
	Tools              []jsontext.Value
	Truncation         *string
	User               *string
	SafetyIdentifier   *string
	PromptCacheKey     *string
}

// ToolName is how a vendor-side function name maps back.
type ToolName struct {
	Name      string // the caller's tool name
	Namespace string // its namespace group, "" for a top-level tool
	Custom    bool   // a custom (freeform) tool: arguments {"input": ...}
}

// ToolNames maps vendor-side function names to the caller's tools.
type ToolNames map[string]ToolName

// NamespaceSep joins a namespace and a member tool's name into the one
// function name vendors without namespaces see.
const NamespaceSep = "__"

// vendorName is the function name a vendor sees for a tool.
func vendorName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + NamespaceSep + name
}

// Lookup returns how the vendor-side name maps back (a plain function
// tool when it is not in the map).
func (t ToolNames) Lookup(vendorName string) ToolName {
	if n, ok := t[vendorName]; ok {
		return n
	}
	return ToolName{Name: vendorName}
}

// Parse reads a Responses request body strictly (duplicate keys, invalid
// UTF-8 and wrong types are 400s naming the field) for what the gateway
// decides before the vendor call. Canonical maps it for another vendor.
func Parse(body []byte) (*Request, error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return nil, invalid("request body is empty; send a JSON object")
	}
	if t[0] != '{' {
		return nil, invalid("request body must be a JSON object")
	}
	r := &Request{}
	if err := jsonv2.Unmarshal(t, &r.wire); err != nil {
		return nil, decodeError(err)
	}
	w := &r.wire
	if w.Model == nil || *w.Model == "" {
		return nil, invalid("model is required, in the form <vendor>/<model>, e.g. openai/gpt-5")
	}
	if len(*w.Model) > MaxModelBytes {
		return nil, invalid("model is %d bytes long; model ids are at most %d bytes", len(*w.Model), MaxModelBytes)
	}
	r.Model = *w.Model
	r.Stream = w.Stream != nil && *w.Stream
	if w.MaxOutputTokens != nil {
		if *w.MaxOutputTokens < 0 {
			return nil, invalid("max_output_tokens must be a non-negative integer")
		}
		r.MaxOutput = *w.MaxOutputTokens
	}
	r.Store = w.Store == nil || *w.Store
	r.IncludeEncrypted = slices.Contains(w.Include, "reasoning.encrypted_content")
	if w.PreviousResponseID != nil {
		r.PreviousResponseID = *w.PreviousResponseID
	}
	if w.Instructions != nil && *w.Instructions != "" {
		r.Text = append(r.Text, gw.Text{Source: gw.TextSystem, Text: *w.Instructions})
	}
	for _, t := range w.Tools {
		r.Text = reqbody.ToolSpecText(r.Text, t)
	}
	if w.Text != nil && w.Text.Format != nil {
		// a structured output's schema is read like a tool's
		if f := w.Text.Format; f.Description != "" {
			r.Text = append(r.Text, gw.Text{Source: gw.TextToolSpec, Text: f.Description})
		}
		r.Text = reqbody.ToolSpecText(r.Text, w.Text.Format.Schema)
	}
	items, err := inputItems(w.Input)
	if err != nil {
		return nil, err
	}
	for i := range items {
		if err := itemText(&r.Text, &items[i], i); err != nil {
			return nil, err
		}
	}
	if r.Text == nil {
		r.Text = []gw.Text{}
	}
	r.Echo = Echo{
		Instructions: w.Instructions, MaxOutputTokens: w.MaxOutputTokens, Metadata: w.Metadata,
		ParallelToolCalls: w.ParallelToolCalls, PreviousResponseID: w.PreviousResponseID, Reasoning: w.Reasoning,
		Store: r.Store, Temperature: w.Temperature, TopP: w.TopP, Text: w.Text, ToolChoice: w.ToolChoice,
		Tools: w.Tools, Truncation: w.Truncation, User: w.User, SafetyIdentifier: w.SafetyIdentifier,
		PromptCacheKey: w.PromptCacheKey,
	}
	return r, nil
}

func decodeError(err error) error {
	msg := err.Error()
	if se, ok := err.(*jsonv2.SemanticError); ok && se.JSONPointer != "" {
		return &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf("%s has the wrong type", strings.TrimPrefix(string(se.JSONPointer), "/")), Err: err}
	}
	if strings.Contains(msg, "duplicate") {
		return &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body has a duplicate key; send each key once", Err: err}
	}
	return &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not valid JSON", Err: err}
}

// inputItems returns input as items: a string is one user message.
func inputItems(raw jsontext.Value) ([]wireItem, error) {
	switch raw.Kind() {
	case 0, 'n':
		return nil, nil
	case '"':
		var s string
		if err := jsonv2.Unmarshal(raw, &s); err != nil {
			return nil, decodeError(err)
		}
		c, _ := jsonv2.Marshal(s)
		return []wireItem{{Type: "message", Role: "user", Content: c}}, nil
	case '[':
	default:
		return nil, invalid("input must be a string or an array of input items")
	}
	var raws []jsontext.Value
	if err := jsonv2.Unmarshal(raw, &raws); err != nil {
		return nil, decodeError(err)
	}
	items := make([]wireItem, len(raws))
	for i, rv := range raws {
		if rv.Kind() != '{' {
			return nil, invalid("input[%d] must be an object", i)
		}
		if err := jsonv2.Unmarshal(rv, &items[i]); err != nil {
			return nil, prefixed(fmt.Sprintf("input[%d]", i), err)
		}
		it := &items[i]
		it.raw = rv
		if it.Type == "" {
			if it.Role == "" {
				return nil, invalid("input[%d].type is required", i)
			}
			it.Type = "message"
		}
	}
	return items, nil
}

func prefixed(where string, err error) error {
	e := decodeError(err).(*gw.Error)
	if se, ok := err.(*jsonv2.SemanticError); ok && se.JSONPointer != "" {
		e.Message = fmt.Sprintf("%s.%s has the wrong type", where, strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", "."))
	} else {
		e.Message = where + ": " + e.Message
	}
	return e
}

// contentParts returns a message's content: a string is one text part.
func contentParts(raw jsontext.Value, where string) (text *string, parts []wirePart, err error) {
	switch raw.Kind() {
	case 0, 'n':
		return nil, nil, nil
	case '"':
		var s string
		if err := jsonv2.Unmarshal(raw, &s); err != nil {
			return nil, nil, prefixed(where, err)
		}
		return &s, nil, nil
	case '[':
		if err := jsonv2.Unmarshal(raw, &parts); err != nil {
			return nil, nil, prefixed(where, err)
		}
		return nil, parts, nil
	}
	return nil, nil, invalid("%s must be a string or an array of content parts", where)
}

// itemText appends an item's text to the guard's input.
func itemText(out *[]gw.Text, it *wireItem, i int) error {
	add := func(src gw.TextSource, s string) {
		if s != "" {
			*out = append(*out, gw.Text{Source: src, Text: s})
		}
	}
	where := fmt.Sprintf("input[%d]", i)
	switch it.Type {
	case "message":
		src := gw.TextUser
		switch it.Role {
		case "system", "developer":
			src = gw.TextSystem
		case "assistant":
			src = gw.TextAssistant
		case "user":
		default:
			return invalid("%s.role %q is not one of user, assistant, system, developer", where, it.Role)
		}
		s, parts, err := contentParts(it.Content, where+".content")
		if err != nil {
			return err
		}
		if s != nil {
			add(src, *s)
		}
		for _, p := range parts {
			if p.Text != nil {
				add(src, *p.Text)
			}
			if p.Refusal != nil {
				add(src, *p.Refusal)
			}
			if p.Type == "input_file" {
				data := ""
				if p.FileData != nil {
					data = *p.FileData
				}
				*out = reqbody.FileText(*out, p.Filename, "", data)
			}
		}
	case "function_call":
		if it.Arguments != nil {
			add(gw.TextAssistant, *it.Arguments)
		}
	case "custom_tool_call":
		if it.Input != nil {
			add(gw.TextAssistant, *it.Input)
		}
	case "function_call_output", "custom_tool_call_output":
		s, parts, err := contentParts(it.Output, where+".output")
		if err != nil {
			return err
		}
		if s != nil {
			add(gw.TextTool, *s)
		}
		for _, p := range parts {
			if p.Text != nil {
				add(gw.TextTool, *p.Text)
			}
		}
	}
	return nil
}

// InputItems returns the request's input items as the caller sent them
// (a string input as one user message item), for listing.
func (r *Request) InputItems() []json.RawMessage {
	raw := r.wire.Input
	switch raw.Kind() {
	case '"':
		var s string
		_ = jsonv2.Unmarshal(raw, &s)
		b, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []any{map[string]string{"type": "input_text", "text": s}}})
		return []json.RawMessage{b}
	case '[':
		var items []jsontext.Value
		if jsonv2.Unmarshal(raw, &items) != nil {
			return nil
		}
		out := make([]json.RawMessage, len(items))
		for i, it := range items {
			out[i] = json.RawMessage(it)
		}
		return out
	}
	return nil
}
