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
	"github.com/gwlabs/gateway/internal/datauri"
)

// Opener opens an encrypted_content blob: the canonical reasoning parts
// the gateway sealed into it. ours false means the blob is not the
// gateway's (another vendor's, e.g. OpenAI's own): the item is left out.
// A blob that is the gateway's but fails to open (tampered, another
// account's, another key's) is an error.
type Opener func(blob string) (parts []gw.Part, ours bool, err error)

// Refs resolves an item id of an answer the gateway kept (an
// item_reference, or a reasoning item sent back without its blob, as the
// AI SDK does when store is on) to that output item's canonical parts;
// found false when no kept answer of the account has it.
type Refs func(itemID string) (parts []gw.Part, found bool, err error)

// Messages maps the request's input items to canonical messages, in
// order: system and developer messages as RoleSystem messages (hoisted
// by Canonical when they lead), user messages and tool outputs as user
// turns (consecutive ones merged into one turn), and assistant messages,
// function and custom tool calls and reasoning items as assistant turns
// (consecutive ones merged). A reasoning item brings back what its
// encrypted_content sealed (thinking with signatures, redacted thinking);
// one without a blob of the gateway's carries nothing a vendor can use and
// is left out. open may be nil (no blob is then the gateway's).
func (r *Request) Messages(open Opener, refs Refs) ([]gw.Message, error) {
	items, err := inputItems(r.wire.Input)
	if err != nil {
		return nil, err
	}
	var msgs []gw.Message
	// appendTo adds parts to the last message when it has role, else
	// starts a message.
	appendTo := func(role gw.Role, parts ...gw.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role && role != gw.RoleSystem {
			msgs[n-1].Content = append(msgs[n-1].Content, parts...)
			return
		}
		msgs = append(msgs, gw.Message{Role: role, Content: parts})
	}
	for i := range items {
		it := &items[i]
		where := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "message":
			role := gw.RoleUser
			switch it.Role {
			case "system", "developer":
				role = gw.RoleSystem
			case "assistant":
				role = gw.RoleAssistant
			case "user":
			default:
				return nil, invalid("%s.role %q is not one of user, assistant, system, developer", where, it.Role)
			}
			parts, err := messageParts(it.Content, role, where+".content")
			if err != nil {
				return nil, err
			}
			appendTo(role, parts...)
		case "function_call", "custom_tool_call":
			if it.CallID == "" {
				return nil, invalid("%s.call_id is required", where)
			}
			if it.Name == "" {
				return nil, invalid("%s.name is required", where)
			}
			var args []byte
			if it.Type == "custom_tool_call" {
				in := ""
				if it.Input != nil {
					in = *it.Input
				}
				args, _ = json.Marshal(map[string]string{"input": in})
			} else {
				a := ""
				if it.Arguments != nil {
					a = *it.Arguments
				}
				args = bytes.TrimSpace([]byte(a))
				if len(args) == 0 {
					args = []byte("{}")
				}
				if args[0] != '{' || !json.Valid(args) {
					return nil, invalid("%s.arguments must be a JSON object", where)
				}
				var buf bytes.Buffer
				_ = json.Compact(&buf, args)
				args = buf.Bytes()
			}
			appendTo(gw.RoleAssistant, gw.Part{Type: gw.PartToolCall, ToolCallID: it.CallID, ToolName: vendorName(it.Namespace, it.Name), Arguments: args})
		case "function_call_output", "custom_tool_call_output":
			if it.CallID == "" {
				return nil, invalid("%s.call_id is required", where)
			}
			s, parts, err := contentParts(it.Output, where+".output")
			if err != nil {
				return nil, err
			}
			var content []gw.Part
			if s != nil {
				content = []gw.Part{{Type: gw.PartText, Text: *s}}
			} else {
				if content, err = inputParts(parts, where+".output"); err != nil {
					return nil, err
				}
			}
			appendTo(gw.RoleUser, gw.Part{Type: gw.PartToolResult, ToolCallID: it.CallID, Content: content})
		case "reasoning":
			if it.EncryptedContent == nil || *it.EncryptedContent == "" || open == nil {
				if it.ID != "" && refs != nil {
					parts, found, err := refs(it.ID)
					if err != nil {
						return nil, err
					}
					if found {
						appendTo(gw.RoleAssistant, parts...)
					}
				}
				continue
			}
			parts, ours, err := open(*it.EncryptedContent)
			if err != nil {
				return nil, invalid("%s.encrypted_content: %v", where, err)
			}
			if ours {
				appendTo(gw.RoleAssistant, parts...)
			}
		case "item_reference":
			if it.ID == "" {
				return nil, invalid("%s.id is required", where)
			}
			var parts []gw.Part
			found := false
			if refs != nil {
				var err error
				if parts, found, err = refs(it.ID); err != nil {
					return nil, err
				}
			}
			if !found {
				return nil, invalid("%s: no item with id %q is kept for this account (only the output items of kept responses can be referenced); send the item itself", where, it.ID)
			}
			appendTo(gw.RoleAssistant, parts...)
		default:
			return nil, invalid("%s.type %q is not supported on this route", where, it.Type)
		}
	}
	return msgs, nil
}

// messageParts maps a message's content.
func messageParts(raw jsontext.Value, role gw.Role, where string) ([]gw.Part, error) {
	s, parts, err := contentParts(raw, where)
	if err != nil {
		return nil, err
	}
	if s != nil {
		if *s == "" {
			return nil, nil
		}
		return []gw.Part{{Type: gw.PartText, Text: *s}}, nil
	}
	if role != gw.RoleUser {
		var out []gw.Part
		for j, p := range parts {
			switch p.Type {
			case "input_text", "output_text", "text":
				if p.Text != nil && *p.Text != "" {
					out = append(out, gw.Part{Type: gw.PartText, Text: *p.Text})
				}
			case "refusal":
				if p.Refusal != nil && *p.Refusal != "" {
					out = append(out, gw.Part{Type: gw.PartText, Text: *p.Refusal})
				}
			default:
				return nil, invalid("%s[%d].type %q is not supported in a %s message", where, j, p.Type, role)
			}
		}
		return out, nil
	}
	return inputParts(parts, where)
}

// inputParts maps user content parts: text, images and files.
func inputParts(parts []wirePart, where string) ([]gw.Part, error) {
	var out []gw.Part
	for j, p := range parts {
		pf := fmt.Sprintf("%s[%d]", where, j)
		switch p.Type {
		case "input_text", "output_text", "text":
			if p.Text != nil && *p.Text != "" {
				out = append(out, gw.Part{Type: gw.PartText, Text: *p.Text})
			}
		case "input_image":
			if p.ImageURL == nil || *p.ImageURL == "" {
				if p.FileID != nil {
					return nil, invalid("%s: file_id is not supported on this route; send image_url (a data: URI or an http(s) URL)", pf)
				}
				return nil, invalid("%s.image_url is required", pf)
			}
			img, err := datauri.Image(*p.ImageURL, pf+".image_url")
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		case "input_file":
			switch {
			case p.FileData != nil && *p.FileData != "":
				mt, data, ok := datauri.Parse(*p.FileData)
				if !ok {
					return nil, invalid("%s.file_data must be a base64 data: URI", pf)
				}
				out = append(out, gw.Part{Type: gw.PartDocument, MediaType: mt, Data: data, Filename: p.Filename})
			case p.FileURL != nil && *p.FileURL != "":
				out = append(out, gw.Part{Type: gw.PartDocument, URL: *p.FileURL, Filename: p.Filename})
			default:
				return nil, invalid("%s: only file_data or file_url is supported on this route (file_id is not)", pf)
			}
		default:
			return nil, invalid("%s.type %q is not supported", pf, p.Type)
		}
	}
	return out, nil
}

// Canonical builds the canonical request for a mapped route from msgs,
// the conversation (the kept turns of previous_response_id, then this
// request's Messages): instructions and the leading system and developer
// messages become System; tools are mapped (namespace members flattened
// to "<namespace>__<name>", custom tools wrapped as functions taking
// {"input": string}, hosted tools left out and listed in HostedTools and
// Dropped); the rest as on Chat Completions. Fields with no canonical
// counterpart are listed in Dropped.
func (r *Request) Canonical(msgs []gw.Message) (*gw.Request, error) {
	w := &r.wire
	c := &gw.Request{Model: r.Model, Stream: r.Stream, IncludeUsage: true}
	if w.Instructions != nil && *w.Instructions != "" {
		c.System = append(c.System, gw.Part{Type: gw.PartText, Text: *w.Instructions})
	}
	lead := 0
	for ; lead < len(msgs) && msgs[lead].Role == gw.RoleSystem; lead++ {
		for _, p := range msgs[lead].Content {
			if p.Type == gw.PartText {
				c.System = append(c.System, p)
			}
		}
	}
	c.Messages = msgs[lead:]
	if len(c.Messages) == 0 {
		return nil, invalid("input is required: at least one user message or tool output")
	}
	if w.MaxOutputTokens != nil {
		if *w.MaxOutputTokens < 1 {
			return nil, invalid("max_output_tokens must be at least 1")
		}
		v := int(min(*w.MaxOutputTokens, int64(1<<31-1)))
		c.MaxTokens = &v
	}
	c.Temperature, c.TopP = w.Temperature, w.TopP
	if w.SafetyIdentifier != nil && *w.SafetyIdentifier != "" {
		c.User = *w.SafetyIdentifier
	} else if w.User != nil {
		c.User = *w.User
	}
	if w.Reasoning != nil && w.Reasoning.Effort != nil && *w.Reasoning.Effort != "" {
		eff := *w.Reasoning.Effort
		switch eff {
		case "none", "minimal", "low", "medium", "high", "xhigh", "max":
		default:
			return nil, invalid("reasoning.effort %q is not one of none, minimal, low, medium, high, xhigh", eff)
		}
		c.Reasoning = &gw.Reasoning{Effort: eff, Disabled: eff == "none"}
	}
	if w.Text != nil {
		if f := w.Text.Format; f != nil {
			switch f.Type {
			case "text", "":
			case "json_object":
				c.ResponseFormat = &gw.ResponseFormat{Type: "json_object"}
			case "json_schema":
				if len(f.Schema) == 0 || f.Schema.Kind() != '{' {
					return nil, invalid("text.format.schema is required (a JSON Schema object)")
				}
				c.ResponseFormat = &gw.ResponseFormat{Type: "json_schema", Name: f.Name, Schema: json.RawMessage(f.Schema), Strict: f.Strict}
			default:
				return nil, invalid("text.format.type %q is not one of text, json_object, json_schema", f.Type)
			}
		}
		if w.Text.Verbosity != nil {
			c.Dropped = append(c.Dropped, "text.verbosity")
		}
	}
	switch {
	case w.Background != nil && *w.Background:
		return nil, invalid("background is not supported on this route")
	case w.Conversation.Kind() != 0 && w.Conversation.Kind() != 'n':
		return nil, invalid("conversation is not supported on this route; use previous_response_id")
	case w.Prompt.Kind() != 0 && w.Prompt.Kind() != 'n':
		return nil, invalid("prompt (a stored prompt template) is not supported on this route")
	}
	for _, f := range []struct {
		name    string
		present bool
	}{
		{"metadata", w.Metadata.Kind() != 0 && w.Metadata.Kind() != 'n'},
		{"prompt_cache_key", w.PromptCacheKey != nil},
		{"truncation", w.Truncation != nil && *w.Truncation != "disabled"},
		{"top_logprobs", w.TopLogprobs != nil && *w.TopLogprobs != 0},
	} {
		if f.present {
			c.Dropped = append(c.Dropped, f.name)
		}
	}
	for _, name := range unknownNames(w.Unknown) {
		c.Dropped = append(c.Dropped, name)
	}
	if err := r.mapTools(c); err != nil {
		return nil, err
	}
	return c, nil
}

// unknownNames lists the members of an object of unknown members.
func unknownNames(v jsontext.Value) []string {
	if v.Kind() != '{' {
		return nil
	}
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(v, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// customParameters is the schema a custom (freeform) tool is declared
// with to a vendor that has only function tools.
const customParameters = `{"type":"object","properties":{"input":{"type":"string","description":"The tool's raw input text."}},"required":["input"],"additionalProperties":false}`

func (r *Request) mapTools(c *gw.Request) error {
	r.Tools = ToolNames{}
	var add func(raw jsontext.Value, namespace, where string) error
	add = func(raw jsontext.Value, namespace, where string) error {
		var t wireTool
		if err := jsonv2.Unmarshal(raw, &t); err != nil {
			return prefixed(where, err)
		}
		desc := ""
		if t.Description != nil {
			desc = *t.Description
		}
		switch t.Type {
		case "function":
			if t.Name == "" {
				return invalid("%s.name is required", where)
			}
			params := json.RawMessage(t.Parameters)
			if len(params) == 0 || t.Parameters.Kind() == 'n' {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			vn := vendorName(namespace, t.Name)
			r.Tools[vn] = ToolName{Name: t.Name, Namespace: namespace}
			c.Tools = append(c.Tools, gw.Tool{Name: vn, Description: desc, Parameters: params, Strict: t.Strict})
		case "custom":
			if t.Name == "" {
				return invalid("%s.name is required", where)
			}
			if f := t.Format; f != nil && f.Type == "grammar" && f.Definition != "" {
				desc = strings.TrimSpace(desc + "\n\nThe input must follow this " + f.Syntax + " grammar:\n" + f.Definition)
			}
			vn := vendorName(namespace, t.Name)
			r.Tools[vn] = ToolName{Name: t.Name, Namespace: namespace, Custom: true}
			c.Tools = append(c.Tools, gw.Tool{Name: vn, Description: desc, Parameters: json.RawMessage(customParameters)})
		case "namespace":
			if namespace != "" {
				return invalid("%s: a namespace cannot hold another namespace", where)
			}
			if t.Name == "" {
				return invalid("%s.name is required", where)
			}
			for j, m := range t.Tools {
				if err := add(m, t.Name, fmt.Sprintf("%s.tools[%d]", where, j)); err != nil {
					return err
				}
			}
		case "":
			return invalid("%s.type is required", where)
		default:
			// A hosted tool (web_search, file_search, code_interpreter,
			// ...): the vendor runs no such tool for the gateway, so it
			// is left out and named, never refused.
			r.HostedTools = append(r.HostedTools, t.Type)
			c.Dropped = append(c.Dropped, "tools."+t.Type)
		}
		return nil
	}
	for i, raw := range r.wire.Tools {
		if raw.Kind() != '{' {
			return invalid("tools[%d] must be an object", i)
		}
		if err := add(raw, "", fmt.Sprintf("tools[%d]", i)); err != nil {
			return err
		}
	}
	if len(c.Tools) > 0 {
		c.ParallelToolCalls = r.wire.ParallelToolCalls
	}
	return r.mapToolChoice(c)
}

func (r *Request) mapToolChoice(c *gw.Request) error {
	raw := r.wire.ToolChoice
	switch raw.Kind() {
	case 0, 'n':
		return nil
	case '"':
		var s string
		_ = jsonv2.Unmarshal(raw, &s)
		switch s {
		case "auto", "none", "required":
			if len(c.Tools) > 0 {
				c.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceMode(s)}
			}
			return nil
		}
		return invalid("tool_choice %q is not one of auto, none, required", s)
	case '{':
	default:
		return invalid("tool_choice must be a string or an object")
	}
	var tc struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Mode      string `json:"mode"`
		Tools     []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"tools"`
	}
	if err := jsonv2.Unmarshal(raw, &tc); err != nil {
		return prefixed("tool_choice", err)
	}
	switch tc.Type {
	case "function", "custom":
		vn := vendorName(tc.Namespace, tc.Name)
		if !slices.ContainsFunc(c.Tools, func(t gw.Tool) bool { return t.Name == vn }) {
			return invalid("tool_choice names %q, which is not in tools", tc.Name)
		}
		c.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceTool, Name: vn}
	case "allowed_tools":
		allowed := map[string]bool{}
		for _, t := range tc.Tools {
			allowed[vendorName(t.Namespace, t.Name)] = true
		}
		c.Tools = slices.DeleteFunc(c.Tools, func(t gw.Tool) bool { return !allowed[t.Name] })
		switch tc.Mode {
		case "auto", "":
			c.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceAuto}
		case "required":
			c.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceRequired}
		default:
			return invalid("tool_choice.mode %q is not one of auto, required", tc.Mode)
		}
		if len(c.Tools) == 0 {
			c.ToolChoice, c.ParallelToolCalls = nil, nil
		}
	default:
		// A hosted tool's choice: the tool is not there; the model
		// chooses.
		if len(c.Tools) > 0 {
			c.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceAuto}
		}
	}
	return nil
}
