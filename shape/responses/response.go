package responses

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	gw "github.com/gwlabs/gateway"
)

// Meta is what a mapped response says about itself beside the canonical
// answer: its id ("resp_..."), the vendor model id, the creation time
// (Unix seconds), the request it answers (echoed members, tool names to
// restore), and Seal, which turns canonical reasoning parts into an
// encrypted_content blob (nil: reasoning items carry none).
type Meta struct {
	ID        string
	Model     string
	CreatedAt int64
	Req       *Request
	Seal      func(parts []gw.Part) (string, error)
}

// itemID is the id of the n-th output item of kind prefix ("msg",
// "fc", "ctc", "rs"): the response id's random part and the index, so
// that a stream and its replay give the same ids.
func (m *Meta) itemID(prefix string, n int) string {
	base := m.ID
	if i := bytes.IndexByte([]byte(base), '_'); i >= 0 {
		base = base[i+1:]
	}
	return prefix + "_" + base + "_" + strconv.Itoa(n)
}

// ParseItemID reads an output item id the gateway gave ("msg_", "fc_",
// "ctc_" or "rs_", the response id's random part, "_" and the item's
// index): the response id and the index.
func ParseItemID(itemID string) (responseID string, n int, ok bool) {
	prefix, rest, found := strings.Cut(itemID, "_")
	switch prefix {
	case "msg", "fc", "ctc", "rs":
	default:
		return "", 0, false
	}
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != rest[i+1:] {
		return "", 0, false
	}
	return "resp_" + rest[:i], n, true
}

// OutputPart returns the canonical part of a kept answer's content that
// became output item n (parts that render no item are not counted).
func OutputPart(content []gw.Part, n int) (gw.Part, bool) {
	k := 0
	for _, p := range content {
		switch p.Type {
		case gw.PartText, gw.PartToolCall, gw.PartThinking, gw.PartRedactedThinking:
			if k == n {
				return p, true
			}
			k++
		}
	}
	return gw.Part{}, false
}

// Object is a response object: what the create call answers, what
// response.completed carries and what GET /v1/responses/{id} returns.
type Object struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              *ObjectError    `json:"error"`
	IncompleteDetails  *Incomplete     `json:"incomplete_details"`
	Instructions       *string         `json:"instructions"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
	Metadata           json.RawMessage `json:"metadata"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	PromptCacheKey     *string         `json:"prompt_cache_key"`
	Reasoning          reasoningEcho   `json:"reasoning"`
	SafetyIdentifier   *string         `json:"safety_identifier"`
	ServiceTier        string          `json:"service_tier"`
	Store              bool            `json:"store"`
	Temperature        float64         `json:"temperature"`
	Text               textEcho        `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              []any           `json:"tools"`
	TopP               float64         `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              *Usage          `json:"usage"`
	User               *string         `json:"user"`
}

// ObjectError is a failed response's error.
type ObjectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Incomplete says why a response is incomplete.
type Incomplete struct {
	Reason string `json:"reason"`
}

type reasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textEcho struct {
	Format    json.RawMessage `json:"format"`
	Verbosity *string         `json:"verbosity,omitempty"`
}

// Usage is a response's usage: input_tokens counts every prompt token
// (cached_tokens of them read from the cache), output_tokens every
// generated one (reasoning_tokens of them reasoning).
type Usage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// EncodeUsage renders canonical usage.
func EncodeUsage(u gw.Usage) *Usage {
	out := &Usage{InputTokens: u.PromptTokens(), OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens()}
	out.InputTokensDetails.CachedTokens = u.CacheReadTokens
	out.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return out
}

// Output items.
type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type customCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Input     string `json:"input"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type reasoningItem struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	Summary          []summaryText `json:"summary"`
	EncryptedContent *string       `json:"encrypted_content,omitempty"`
}

type summaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func newOutputText(text string) outputText {
	return outputText{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

// customInput reads the input of a wrapped custom tool's call arguments
// ({"input": "..."}); arguments of another form are passed as their
// JSON text.
func customInput(args []byte) string {
	var v struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(args, &v) == nil && v.Input != nil {
		return *v.Input
	}
	return string(args)
}

// item renders one canonical part as an output item (n is its index).
func (m *Meta) item(p *gw.Part, n int, status string) (any, error) {
	switch p.Type {
	case gw.PartText:
		return messageItem{ID: m.itemID("msg", n), Type: "message", Status: status, Role: "assistant", Content: []outputText{newOutputText(p.Text)}}, nil
	case gw.PartToolCall:
		tn := ToolName{Name: p.ToolName}
		if m.Req != nil {
			tn = m.Req.Tools.Lookup(p.ToolName)
		}
		if tn.Custom {
			return customCallItem{ID: m.itemID("ctc", n), Type: "custom_tool_call", Status: status, CallID: p.ToolCallID, Input: customInput(p.Arguments), Name: tn.Name, Namespace: tn.Namespace}, nil
		}
		args := string(p.Arguments)
		if args == "" {
			args = "{}"
		}
		return functionCallItem{ID: m.itemID("fc", n), Type: "function_call", Status: status, Arguments: args, CallID: p.ToolCallID, Name: tn.Name, Namespace: tn.Namespace}, nil
	case gw.PartThinking, gw.PartRedactedThinking:
		it := reasoningItem{ID: m.itemID("rs", n), Type: "reasoning", Summary: []summaryText{}}
		if p.Type == gw.PartThinking && p.Text != "" {
			it.Summary = append(it.Summary, summaryText{Type: "summary_text", Text: p.Text})
		}
		if m.Seal != nil {
			blob, err := m.Seal([]gw.Part{*p})
			if err != nil {
				return nil, err
			}
			it.EncryptedContent = &blob
		}
		return it, nil
	}
	return nil, nil
}

// outcome maps a stop reason to the response status and its details.
func outcome(s gw.StopReason) (string, *Incomplete) {
	switch s {
	case gw.StopMaxTokens, gw.StopContextLimit:
		return "incomplete", &Incomplete{Reason: "max_output_tokens"}
	case gw.StopRefusal:
		return "incomplete", &Incomplete{Reason: "content_filter"}
	case gw.StopError:
		return "failed", nil
	}
	return "completed", nil
}

// base returns the response object with the request's echoed members
// and no output yet.
func (m *Meta) base(status string) *Object {
	o := &Object{
		ID: m.ID, Object: "response", CreatedAt: m.CreatedAt, Status: status, Model: m.Model,
		Output: []any{}, Tools: []any{}, ParallelToolCalls: true, Temperature: 1, TopP: 1,
		Truncation: "disabled", Metadata: json.RawMessage("{}"), ToolChoice: json.RawMessage(`"auto"`),
		ServiceTier: "default", Store: true,
		Text: textEcho{Format: json.RawMessage(`{"type":"text"}`)},
	}
	if m.Req == nil {
		return o
	}
	e := &m.Req.Echo
	o.Instructions, o.MaxOutputTokens = e.Instructions, e.MaxOutputTokens
	if raw := rawOf(e.Metadata); raw != nil {
		o.Metadata = raw
	}
	if e.ParallelToolCalls != nil {
		o.ParallelToolCalls = *e.ParallelToolCalls
	}
	o.PreviousResponseID, o.PromptCacheKey = e.PreviousResponseID, e.PromptCacheKey
	if e.Reasoning != nil {
		o.Reasoning = reasoningEcho{Effort: e.Reasoning.Effort, Summary: e.Reasoning.Summary}
	}
	o.SafetyIdentifier, o.User = e.SafetyIdentifier, e.User
	o.Store = e.Store
	if e.Temperature != nil {
		o.Temperature = *e.Temperature
	}
	if e.TopP != nil {
		o.TopP = *e.TopP
	}
	if e.Text != nil {
		if e.Text.Format != nil {
			f, _ := json.Marshal(e.Text.Format)
			o.Text.Format = trimFormat(f, e.Text.Format)
		}
		o.Text.Verbosity = e.Text.Verbosity
	}
	if raw := rawOf(e.ToolChoice); raw != nil {
		o.ToolChoice = raw
	}
	for _, t := range e.Tools {
		o.Tools = append(o.Tools, json.RawMessage(t))
	}
	if e.Truncation != nil {
		o.Truncation = *e.Truncation
	}
	return o
}

// trimFormat renders text.format as the caller gave it (only the
// members of its type).
func trimFormat(_ []byte, f *wireFormat) json.RawMessage {
	switch f.Type {
	case "json_schema":
		v := map[string]any{"type": f.Type, "name": f.Name, "schema": json.RawMessage(f.Schema)}
		if f.Strict != nil {
			v["strict"] = *f.Strict
		}
		if f.Description != "" {
			v["description"] = f.Description
		}
		b, _ := json.Marshal(v)
		return b
	case "":
		return json.RawMessage(`{"type":"text"}`)
	}
	b, _ := json.Marshal(map[string]string{"type": f.Type})
	return b
}

func rawOf(v jsontext.Value) json.RawMessage {
	if v.Kind() == 0 || v.Kind() == 'n' {
		return nil
	}
	return json.RawMessage(v)
}

// Build returns the response object of a canonical answer.
func Build(r *gw.Response, meta Meta) (*Object, error) {
	status, inc := outcome(r.StopReason)
	o := meta.base(status)
	o.IncompleteDetails = inc
	for i := range r.Content {
		it, err := meta.item(&r.Content[i], len(o.Output), "completed")
		if err != nil {
			return nil, err
		}
		if it != nil {
			o.Output = append(o.Output, it)
		}
	}
	o.Usage = EncodeUsage(r.Usage)
	return o, nil
}

// EncodeResponse renders a canonical answer as a Responses body.
func EncodeResponse(r *gw.Response, meta Meta) ([]byte, error) {
	o, err := Build(r, meta)
	if err != nil {
		return nil, err
	}
	return json.Marshal(o)
}
