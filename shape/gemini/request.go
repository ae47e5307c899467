package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/reqbody"
)

// MaxModelBytes bounds the model named in the path, as on the other
// endpoints.
const MaxModelBytes = 256

// Methods of the model resource the gateway serves.
const (
	MethodGenerate    = "generateContent"
	MethodStream      = "streamGenerateContent"
	MethodCountTokens = "countTokens"
)

// SplitPath reads a model path, "/v1beta/models/{model}:{method}" or
// "/v1/models/{model}:{method}" (method "" for a GET of the model
// itself). The model is everything between "models/" and the last ":",
// slashes and all ("anthropic/claude-sonnet-5-5"); a path-escaped model
// is unescaped first. ok is false for a path that is not under a models
// collection.
func SplitPath(path string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		if rest, found = strings.CutPrefix(path, "/v1/models/"); !found {
			return "", "", false
		}
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		model, method = rest[:i], rest[i+1:]
	} else {
		model = rest
	}
	if strings.Contains(model, "%") {
		// A client that escaped the slashes ("anthropic%2Fclaude").
		if u, err := unescape(model); err == nil {
			model = u
		}
	}
	return model, method, true
}

func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// Parsed is what the gateway reads of a G request before routing: the
// canonical request (for mapped routes), the text the guard reads, the
// caller's output cap and what only google/ can serve.
type Parsed struct {
	Canonical *gw.Request
	// Text is every piece of text with its source (system instruction,
	// user and model turns, function calls and responses), never nil.
	Text []gw.Text
	// MaxOutput is generationConfig.maxOutputTokens, 0 when absent.
	MaxOutput int64
	// IncludeThoughts is thinkingConfig.includeThoughts: the caller
	// wants thought parts in the answer.
	IncludeThoughts bool
	// GoogleOnly names what another vendor cannot serve (cachedContent,
	// a hosted tool, candidateCount above 1): refused on mapped routes,
	// passed to google/ as sent.
	GoogleOnly string
}

func invalidf(format string, args ...any) *gw.Error {
	return &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// knownTop are the top-level members Decode reads or drops by rule.
var knownTop = []string{"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings", "cachedContent", "labels", "model"}

// Parse validates a generateContent body and maps it to the canonical
// request. JSON is read strictly, as Google reads it: member names are
// case-sensitive, a duplicate member or invalid UTF-8 is a 400. Every
// error is a *gw.Error with CodeInvalidRequest naming the field.
func Parse(body []byte) (*Parsed, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, invalidf("request body is empty; send a JSON object")
	}
	var top map[string]jsontextValue
	if err := jsonv2.Unmarshal(body, &top); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a valid JSON object: " + errText(err), Err: err}
	}
	var w Request
	if err := jsonv2.Unmarshal(body, &w); err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "invalid request: " + errText(err), Err: err}
	}
	r := &gw.Request{}
	for k := range top {
		if !slices.Contains(knownTop, k) {
			r.Dropped = append(r.Dropped, k)
		}
	}
	p := &Parsed{Canonical: r, Text: []gw.Text{}}
	if len(w.SafetySettings) > 0 && string(w.SafetySettings) != "null" {
		// No other vendor has per-category thresholds.
		r.Dropped = append(r.Dropped, "safetySettings")
	}
	if len(w.Labels) > 0 && string(w.Labels) != "null" {
		r.Dropped = append(r.Dropped, "labels")
	}
	if w.CachedContent != "" {
		p.GoogleOnly = "cachedContent"
	}
	if w.SystemInstruction != nil {
		for i, part := range w.SystemInstruction.Parts {
			if part.Text == nil {
				return nil, invalidf("systemInstruction.parts[%d]: only text parts are allowed", i)
			}
			if *part.Text != "" {
				r.System = append(r.System, gw.Part{Type: gw.PartText, Text: *part.Text})
				p.Text = append(p.Text, gw.Text{Source: gw.TextSystem, Text: *part.Text})
			}
		}
	}
	if len(w.Contents) == 0 {
		return nil, invalidf("contents: at least one content is required")
	}
	d := &decoder{p: p, r: r}
	for i := range w.Contents {
		if err := d.content(i, &w.Contents[i]); err != nil {
			return nil, err
		}
	}
	if err := d.tools(w.Tools, w.ToolConfig); err != nil {
		return nil, err
	}
	if err := d.generation(w.GenerationConfig); err != nil {
		return nil, err
	}
	slices.Sort(r.Dropped)
	r.Dropped = slices.Compact(r.Dropped)
	return p, nil
}

// DecodeRequest maps a generateContent body to the canonical request (see
// Parse). A request only google/ can serve is refused here: this is the
// mapped route.
func DecodeRequest(body []byte) (*gw.Request, error) {
	p, err := Parse(body)
	if err != nil {
		return nil, err
	}
	if err := p.Mappable(); err != nil {
		return nil, err
	}
	return p.Canonical, nil
}

// Mappable refuses, naming the field, a request that only google/ can
// serve.
func (p *Parsed) Mappable() error {
	if p.GoogleOnly == "" {
		return nil
	}
	return invalidf("%s is served only on google/ models; this model's vendor has no equivalent", p.GoogleOnly)
}

// jsontextValue keeps a member unread.
type jsontextValue = json.RawMessage

func errText(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	s = strings.TrimPrefix(s, "jsontext: ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

type decoder struct {
	p *Parsed
	r *gw.Request
	// calls are the function calls of the history, in order, for
	// function responses that carry no id; answered marks those matched.
	calls    []pendingCall
	ordinals int
}

type pendingCall struct {
	id, name string
	answered bool
}

func (d *decoder) text(src gw.TextSource, s string) {
	if s != "" {
		d.p.Text = append(d.p.Text, gw.Text{Source: src, Text: s})
	}
}

func (d *decoder) content(i int, c *Content) error {
	role := gw.RoleUser
	src := gw.TextUser
	switch c.Role {
	case "", "user":
	case "model":
		role, src = gw.RoleAssistant, gw.TextAssistant
	default:
		return invalidf("contents[%d].role: must be \"user\" or \"model\", not %q", i, trunc(c.Role))
	}
	if len(c.Parts) == 0 {
		return invalidf("contents[%d].parts: at least one part is required", i)
	}
	var out []gw.Part
	for j := range c.Parts {
		part := &c.Parts[j]
		where := fmt.Sprintf("contents[%d].parts[%d]", i, j)
		switch {
		case part.FunctionCall != nil:
			if role != gw.RoleAssistant {
				return invalidf("%s.functionCall: only a model turn calls functions", where)
			}
			fc := part.FunctionCall
			if fc.Name == "" {
				return invalidf("%s.functionCall.name: required", where)
			}
			args, err := objectJSON(fc.Args)
			if err != nil {
				return invalidf("%s.functionCall.args: %s", where, err)
			}
			d.ordinals++
			id := fc.ID
			if id == "" {
				id = "call_" + strconv.Itoa(d.ordinals)
			}
			d.calls = append(d.calls, pendingCall{id: id, name: fc.Name})
			out = append(out, gw.Part{Type: gw.PartToolCall, ToolCallID: id, ToolName: fc.Name, Arguments: args})
			d.text(gw.TextAssistant, nonEmptyArgs(args))
		case part.FunctionResponse != nil:
			fr := part.FunctionResponse
			if fr.Name == "" {
				return invalidf("%s.functionResponse.name: required", where)
			}
			id := d.answer(fr.ID, fr.Name)
			if id == "" {
				return invalidf("%s.functionResponse: no earlier functionCall named %q is waiting for its response", where, trunc(fr.Name))
			}
			text, isErr, err := responseText(fr.Response)
			if err != nil {
				return invalidf("%s.functionResponse.response: %s", where, err)
			}
			d.text(gw.TextTool, text)
			out = append(out, gw.Part{Type: gw.PartToolResult, ToolCallID: id, ToolName: fr.Name, IsError: isErr,
				Content: []gw.Part{{Type: gw.PartText, Text: text}}})
		case part.InlineData != nil:
			b := part.InlineData
			if b.MimeType == "" || b.Data == "" {
				return invalidf("%s.inlineData: mimeType and data are required", where)
			}
			out = append(out, gw.Part{Type: mediaKind(b.MimeType), MediaType: b.MimeType, Data: b.Data})
			// text/plain (and other text) data is read by the model
			d.p.Text = reqbody.FileText(d.p.Text, "", b.MimeType, b.Data)
		case part.FileData != nil:
			f := part.FileData
			if f.FileURI == "" {
				return invalidf("%s.fileData.fileUri: required", where)
			}
			out = append(out, gw.Part{Type: mediaKind(f.MimeType), MediaType: f.MimeType, URL: f.FileURI})
		case len(part.ExecutableCode) > 0 || len(part.CodeExecutionResult) > 0:
			return invalidf("%s: code execution parts are served only on google/ models", where)
		case part.Text != nil && part.Thought:
			// Thought summaries are the model's own; other vendors
			// neither take nor need them back (Gemini ignores them too).
			continue
		case part.Text != nil:
			if *part.Text == "" {
				continue
			}
			out = append(out, gw.Part{Type: gw.PartText, Text: *part.Text})
			d.text(src, *part.Text)
		case part.ThoughtSignature != "":
			// A bare signature: meaningful to Gemini only.
			continue
		default:
			return invalidf("%s: a part needs text, inlineData, fileData, functionCall or functionResponse", where)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if n := len(d.r.Messages); n > 0 && d.r.Messages[n-1].Role == role {
		// Gemini lets consecutive turns of one role stand; the
		// canonical form merges them.
		d.r.Messages[n-1].Content = append(d.r.Messages[n-1].Content, out...)
		return nil
	}
	d.r.Messages = append(d.r.Messages, gw.Message{Role: role, Content: out})
	return nil
}

// answer finds the call a function response answers: by id, else the
// first unanswered call with its name.
func (d *decoder) answer(id, name string) string {
	for i := range d.calls {
		c := &d.calls[i]
		if id != "" && c.id == id {
			c.answered = true
			return c.id
		}
	}
	// No id, or one the history's calls do not carry (Gemini CLI
	// numbers responses itself when a call came without an id): the
	// first unanswered call of that name.
	for i := range d.calls {
		c := &d.calls[i]
		if !c.answered && c.name == name {
			c.answered = true
			return c.id
		}
	}
	// Its call is not in the history: the id as sent, the vendor
	// decides.
	return id
}

func mediaKind(mime string) gw.PartType {
	if strings.HasPrefix(mime, "image/") {
		return gw.PartImage
	}
	return gw.PartDocument
}

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func nonEmptyArgs(a json.RawMessage) string {
	if string(a) == "{}" {
		return ""
	}
	return string(a)
}

// objectJSON returns args compacted, "{}" when absent; anything but an
// object is an error.
func objectJSON(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("must be an object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("not valid JSON")
	}
	return buf.Bytes(), nil
}

// responseText is a function response as a tool result's text: the
// "output" (or "result", "content") member when it is the only one and a
// string, the "error" member's text as a failed call, else the whole
// response object as JSON.
func responseText(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	if raw[0] != '{' {
		return "", false, fmt.Errorf("must be an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", false, fmt.Errorf("not valid JSON")
	}
	if len(m) == 1 {
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				switch k {
				case "output", "result", "content":
					return s, false, nil
				case "error":
					return s, true, nil
				}
			}
		}
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	return buf.String(), false, nil
}

func (d *decoder) tools(ts []Tool, tc *ToolConfig) error {
	for i, t := range ts {
		for name, raw := range map[string]json.RawMessage{"googleSearch": t.GoogleSearch, "googleSearchRetrieval": t.GoogleSearchRetrieval,
			"codeExecution": t.CodeExecution, "urlContext": t.URLContext, "fileSearch": t.FileSearch, "googleMaps": t.GoogleMaps,
			"computerUse": t.ComputerUse, "retrieval": t.Retrieval} {
			if len(raw) > 0 && string(raw) != "null" && d.p.GoogleOnly == "" {
				d.p.GoogleOnly = fmt.Sprintf("tools[%d].%s", i, name)
			}
		}
		for j, fd := range t.FunctionDeclarations {
			if fd.Name == "" {
				return invalidf("tools[%d].functionDeclarations[%d].name: required", i, j)
			}
			var params json.RawMessage
			switch {
			case len(fd.ParametersJSONSchema) > 0 && string(fd.ParametersJSONSchema) != "null":
				params = compact(fd.ParametersJSONSchema)
			case len(fd.Parameters) > 0 && string(fd.Parameters) != "null":
				s, err := JSONSchema(fd.Parameters)
				if err != nil {
					return invalidf("tools[%d].functionDeclarations[%d].parameters: %s", i, j, err)
				}
				params = s
			default:
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			d.r.Tools = append(d.r.Tools, gw.Tool{Name: fd.Name, Description: fd.Description, Parameters: params})
			// the declaration's texts are third-party text, as on
			// the other shapes
			if fd.Description != "" {
				d.p.Text = append(d.p.Text, gw.Text{Source: gw.TextToolSpec, Text: fd.Description})
			}
			d.p.Text = reqbody.ToolSpecText(d.p.Text, fd.Parameters)
			d.p.Text = reqbody.ToolSpecText(d.p.Text, fd.ParametersJSONSchema)
		}
	}
	if tc == nil || tc.FunctionCallingConfig == nil {
		return nil
	}
	fc := tc.FunctionCallingConfig
	switch fc.Mode {
	case "", "MODE_UNSPECIFIED", "AUTO", "VALIDATED":
		if len(fc.AllowedFunctionNames) > 0 {
			d.r.Dropped = append(d.r.Dropped, "toolConfig.functionCallingConfig.allowedFunctionNames")
		}
		if fc.Mode != "" && fc.Mode != "MODE_UNSPECIFIED" {
			d.r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceAuto}
		}
	case "NONE":
		d.r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceNone}
	case "ANY":
		switch len(fc.AllowedFunctionNames) {
		case 0:
			d.r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceRequired}
		case 1:
			d.r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceTool, Name: fc.AllowedFunctionNames[0]}
		default:
			// Several allowed: any call is required; the narrowing
			// has no equivalent elsewhere.
			d.r.ToolChoice = &gw.ToolChoice{Mode: gw.ToolChoiceRequired}
			d.r.Dropped = append(d.r.Dropped, "toolConfig.functionCallingConfig.allowedFunctionNames")
		}
	default:
		return invalidf("toolConfig.functionCallingConfig.mode: must be AUTO, ANY, NONE or VALIDATED, not %q", trunc(fc.Mode))
	}
	return nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

func (d *decoder) generation(g *GenerationConfig) error {
	if g == nil {
		return nil
	}
	r := d.r
	// a structured output's schema is read like a tool's
	d.p.Text = reqbody.ToolSpecText(d.p.Text, g.ResponseSchema)
	d.p.Text = reqbody.ToolSpecText(d.p.Text, g.ResponseJSONSchema)
	if g.MaxOutputTokens != nil {
		if *g.MaxOutputTokens < 1 {
			return invalidf("generationConfig.maxOutputTokens: must be at least 1")
		}
		v := *g.MaxOutputTokens
		r.MaxTokens = &v
		d.p.MaxOutput = int64(v)
	}
	if g.Temperature != nil {
		if *g.Temperature < 0 || *g.Temperature > 2 {
			return invalidf("generationConfig.temperature: must be between 0 and 2")
		}
		r.Temperature = g.Temperature
	}
	if g.TopP != nil {
		if *g.TopP < 0 || *g.TopP > 1 {
			return invalidf("generationConfig.topP: must be between 0 and 1")
		}
		r.TopP = g.TopP
	}
	if g.TopK != nil {
		if *g.TopK < 1 || *g.TopK != float64(int(*g.TopK)) {
			return invalidf("generationConfig.topK: must be a positive integer")
		}
		k := int(*g.TopK)
		r.TopK = &k
	}
	if g.CandidateCount != nil && *g.CandidateCount != 1 {
		if *g.CandidateCount < 1 {
			return invalidf("generationConfig.candidateCount: must be at least 1")
		}
		if d.p.GoogleOnly == "" {
			d.p.GoogleOnly = "generationConfig.candidateCount above 1"
		}
	}
	if len(g.StopSequences) > 0 {
		r.Stop = g.StopSequences
	}
	r.Seed = g.Seed
	for name, set := range map[string]bool{
		"generationConfig.presencePenalty":  g.PresencePenalty != nil,
		"generationConfig.frequencyPenalty": g.FrequencyPenalty != nil,
		"generationConfig.responseLogprobs": g.ResponseLogprobs != nil,
		"generationConfig.logprobs":         g.Logprobs != nil,
		"generationConfig.mediaResolution":  g.MediaResolution != "",
	} {
		if set {
			r.Dropped = append(r.Dropped, name)
		}
	}
	if len(g.SpeechConfig) > 0 && string(g.SpeechConfig) != "null" && d.p.GoogleOnly == "" {
		d.p.GoogleOnly = "generationConfig.speechConfig"
	}
	for _, m := range g.ResponseModalities {
		if !strings.EqualFold(m, "TEXT") && d.p.GoogleOnly == "" {
			d.p.GoogleOnly = "generationConfig.responseModalities " + trunc(m)
		}
	}
	switch g.ResponseMimeType {
	case "", "text/plain":
		if len(g.ResponseSchema) > 0 || len(g.ResponseJSONSchema) > 0 {
			return invalidf("generationConfig.responseSchema: needs responseMimeType application/json")
		}
	case "application/json":
		rf := &gw.ResponseFormat{Type: "json_object"}
		switch {
		case len(g.ResponseJSONSchema) > 0 && string(g.ResponseJSONSchema) != "null":
			rf.Type, rf.Name, rf.Schema = "json_schema", "response", compact(g.ResponseJSONSchema)
		case len(g.ResponseSchema) > 0 && string(g.ResponseSchema) != "null":
			s, err := JSONSchema(g.ResponseSchema)
			if err != nil {
				return invalidf("generationConfig.responseSchema: %s", err)
			}
			rf.Type, rf.Name, rf.Schema = "json_schema", "response", s
		}
		r.ResponseFormat = rf
	default:
		return invalidf("generationConfig.responseMimeType: %q is served only on google/ models; use application/json or text/plain", trunc(g.ResponseMimeType))
	}
	if tc := g.ThinkingConfig; tc != nil {
		d.p.IncludeThoughts = tc.IncludeThoughts != nil && *tc.IncludeThoughts
		switch {
		case tc.ThinkingLevel != "":
			switch lv := strings.ToLower(tc.ThinkingLevel); lv {
			case "minimal", "low", "medium", "high":
				r.Reasoning = &gw.Reasoning{Effort: lv}
			default:
				return invalidf("generationConfig.thinkingConfig.thinkingLevel: must be MINIMAL, LOW, MEDIUM or HIGH, not %q", trunc(tc.ThinkingLevel))
			}
			if tc.ThinkingBudget != nil {
				return invalidf("generationConfig.thinkingConfig: set thinkingLevel or thinkingBudget, not both")
			}
		case tc.ThinkingBudget == nil:
		case *tc.ThinkingBudget == 0:
			r.Reasoning = &gw.Reasoning{Disabled: true}
		case *tc.ThinkingBudget == -1:
			r.Reasoning = &gw.Reasoning{Adaptive: true}
		case *tc.ThinkingBudget > 0:
			r.Reasoning = &gw.Reasoning{BudgetTokens: *tc.ThinkingBudget}
		default:
			return invalidf("generationConfig.thinkingConfig.thinkingBudget: must be -1, 0 or positive")
		}
	}
	return nil
}

// JSONSchema turns a Gemini Schema (an OpenAPI 3.0 subset: upper-case
// type names, "nullable") into the JSON Schema the other vendors take:
// type names lower-cased, nullable folded into the type, Gemini's
// propertyOrdering left out.
func JSONSchema(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not valid JSON")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("must be an object")
	}
	out, err := json.Marshal(schemaNode(v, 0))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxSchemaDepth bounds the recursion over a hostile schema.
const maxSchemaDepth = 64

func schemaNode(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		switch k {
		case "type":
			if s, ok := x.(string); ok {
				x = strings.ToLower(s)
			}
		case "nullable", "propertyOrdering":
			continue
		case "properties":
			if ps, ok := x.(map[string]any); ok {
				np := make(map[string]any, len(ps))
				for pk, pv := range ps {
					np[pk] = schemaNode(pv, depth+1)
				}
				x = np
			}
		case "items", "not", "additionalProperties":
			x = schemaNode(x, depth+1)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if xs, ok := x.([]any); ok {
				nx := make([]any, len(xs))
				for i, e := range xs {
					nx[i] = schemaNode(e, depth+1)
				}
				x = nx
			}
		}
		out[k] = x
	}
	if n, ok := m["nullable"].(bool); ok && n {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return out
}
