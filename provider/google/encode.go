package google

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/gemini"
)

// maxStopSequences is Gemini's limit on generationConfig.stopSequences.
const maxStopSequences = 5

// Dropped field names this encoder records in gw.Request.Dropped.
const (
	droppedCacheControl     = "cache_control"
	droppedUser             = "user"
	droppedParallelToolCall = "parallel_tool_calls"
	droppedStrict           = "tools.strict"
	droppedThinking         = "thinking"
	droppedRedacted         = "redacted_thinking"
	droppedReasoning        = "reasoning"
)

// EncodeRequest maps a canonical request to a generateContent body (the
// same body serves the streaming call; Stream only changes the URL). It
// appends the names of fields it leaves out by rule to r.Dropped and
// returns an *gw.Error with CodeInvalidRequest naming the field for a
// request Gemini cannot honour.
func EncodeRequest(r *gw.Request) ([]byte, error) {
	e := encoder{r: r, fam: familyOf(r.Model)}
	out, err := e.request()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request cannot be encoded for google", Err: fmt.Errorf("encode gemini request: %w", err)}
	}
	return b, nil
}

// encoder holds one request's mapping state.
type encoder struct {
	r   *gw.Request
	fam family
	// names maps tool-call ids (as the caller holds them) to function
	// names, for functionResponse.name.
	names map[string]string
}

func invalid(format string, args ...any) *gw.Error {
	return gw.Errorf(gw.CodeInvalidRequest, format, args...)
}

func (e *encoder) drop(field string) {
	for _, d := range e.r.Dropped {
		if d == field {
			return
		}
	}
	e.r.Dropped = append(e.r.Dropped, field)
}

func (e *encoder) request() (*genRequest, error) {
	r := e.r
	out := &genRequest{}
	if err := e.system(out); err != nil {
		return nil, err
	}
	if err := e.contents(out); err != nil {
		return nil, err
	}
	if err := e.tools(out); err != nil {
		return nil, err
	}
	gc, err := e.generation()
	if err != nil {
		return nil, err
	}
	out.GenerationConfig = gc
	if r.User != "" {
		e.drop(droppedUser)
	}
	return out, nil
}

// system hoists Request.System and any mid-conversation system message
// into systemInstruction, in order: Gemini has no system turn.
func (e *encoder) system(out *genRequest) error {
	var parts []outPart
	add := func(ps []gw.Part, where string) error {
		for _, p := range ps {
			if len(p.CacheControl) > 0 {
				e.drop(droppedCacheControl)
			}
			switch p.Type {
			case gw.PartText, gw.PartDocument:
				if p.Type == gw.PartDocument && p.Text == "" {
					return invalid("%s: google takes only text in system instructions", where)
				}
				if p.Text != "" {
					parts = append(parts, textPart(p.Text))
				}
			default:
				return invalid("%s: google takes only text in system instructions, not %s", where, p.Type)
			}
		}
		return nil
	}
	if err := add(e.r.System, "system"); err != nil {
		return err
	}
	for i, m := range e.r.Messages {
		if m.Role == gw.RoleSystem {
			if err := add(m.Content, fmt.Sprintf("messages[%d]", i)); err != nil {
				return err
			}
		}
	}
	if len(parts) > 0 {
		out.SystemInstruction = &content{Parts: parts}
	}
	return nil
}

func textPart(s string) outPart { return outPart{Text: &s} }

// loc names a content part in error messages: messages[m].content[c],
// then .content[k] inside a tool result when k >= 0. It is formatted only
// when an error is returned.
type loc struct{ m, c, k int }

func (l loc) String() string {
	s := fmt.Sprintf("messages[%d].content[%d]", l.m, l.c)
	if l.k >= 0 {
		s += fmt.Sprintf(".content[%d]", l.k)
	}
	return s
}

// contents maps the conversation. Consecutive turns of one role merge into
// one content; the user content after a model turn with function calls
// starts with their functionResponse parts, one per call, in call order.
func (e *encoder) contents(out *genRequest) error {
	e.names = make(map[string]string)
	for _, m := range e.r.Messages {
		if m.Role != gw.RoleAssistant {
			continue
		}
		for _, p := range m.Content {
			if p.Type == gw.PartToolCall && p.ToolCallID != "" {
				e.names[p.ToolCallID] = p.ToolName
				if core, _ := SplitToolCallID(p.ToolCallID); core != p.ToolCallID {
					e.names[core] = p.ToolName
				}
			}
		}
	}
	var cs []content
	var calls [][]string // per content: the caller ids of its function calls
	for i, m := range e.r.Messages {
		var role string
		var parts []outPart
		var ids []string
		var err error
		switch m.Role {
		case gw.RoleSystem:
			continue
		case gw.RoleUser:
			role = "user"
			parts, err = e.userParts(i, m.Content)
		case gw.RoleAssistant:
			role = "model"
			parts, ids, err = e.modelParts(i, m.Content)
		default:
			return invalid("messages[%d].role: unknown role %q", i, m.Role)
		}
		if err != nil {
			return err
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(cs); n > 0 && cs[n-1].Role == role {
			cs[n-1].Parts = append(cs[n-1].Parts, parts...)
			calls[n-1] = append(calls[n-1], ids...)
			continue
		}
		cs = append(cs, content{Role: role, Parts: parts})
		calls = append(calls, ids)
	}
	if len(cs) == 0 {
		return invalid("messages: at least one message with content is required")
	}
	for i := range cs {
		if cs[i].Role == "model" {
			e.signModelTurn(&cs[i])
			if len(calls[i]) > 0 && i+1 < len(cs) {
				if err := orderResponses(&cs[i+1], calls[i]); err != nil {
					return err
				}
			}
		}
	}
	out.Contents = cs
	return nil
}

// signModelTurn gives a model turn whose function calls carry no thought
// signature at all (a history from another vendor) the documented skip
// placeholder on its first call: Gemini 3 refuses such calls otherwise.
// Older families do not validate signatures and get nothing.
func (e *encoder) signModelTurn(c *content) {
	if e.fam != familyLevel {
		return
	}
	first := -1
	for i, p := range c.Parts {
		if p.FunctionCall == nil {
			continue
		}
		if p.ThoughtSignature != "" {
			return
		}
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		c.Parts[first].ThoughtSignature = SkipSignature
	}
}

// orderResponses moves the functionResponse parts answering calls (caller
// ids, in call order) to the front of the user content u, in that order,
// and checks that each call has exactly one.
func orderResponses(u *content, calls []string) error {
	byID := make(map[string]int, len(calls))
	for i, id := range calls {
		byID[id] = i
	}
	answered := make([]*outPart, len(calls))
	rest := make([]outPart, 0, len(u.Parts))
	for i := range u.Parts {
		p := &u.Parts[i]
		if p.FunctionResponse != nil {
			if k, ok := byID[p.FunctionResponse.callerID]; ok {
				if answered[k] != nil {
					return invalid("messages: tool call %q has more than one tool result", calls[k])
				}
				answered[k] = p
				continue
			}
		}
		rest = append(rest, *p)
	}
	parts := make([]outPart, 0, len(u.Parts))
	for k, p := range answered {
		if p == nil {
			return invalid("messages: tool call %q has no tool result in the following user turn (google needs one result per call)", calls[k])
		}
		parts = append(parts, *p)
	}
	u.Parts = append(parts, rest...)
	return nil
}

// userParts maps a user turn: text, images, documents and tool results.
func (e *encoder) userParts(mi int, ps []gw.Part) ([]outPart, error) {
	var out, media []outPart
	for j, p := range ps {
		where := loc{m: mi, c: j, k: -1}
		if len(p.CacheControl) > 0 {
			e.drop(droppedCacheControl)
		}
		switch p.Type {
		case gw.PartToolResult:
			fr, extra, err := e.toolResult(where, p)
			if err != nil {
				return nil, err
			}
			out = append(out, fr)
			// Images and documents returned by a tool follow the
			// responses as ordinary parts of the same user turn.
			media = append(media, extra...)
		case gw.PartThinking, gw.PartRedactedThinking:
			e.drop(droppedThinking)
		default:
			op, ok, err := mediaPart(where, p)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, op)
			}
		}
	}
	return append(out, media...), nil
}

// mediaPart maps a text, image or document part; ok is false for an empty
// text.
func mediaPart(where loc, p gw.Part) (outPart, bool, error) {
	switch p.Type {
	case gw.PartText:
		if p.Text == "" {
			return outPart{}, false, nil
		}
		return textPart(p.Text), true, nil
	case gw.PartImage, gw.PartDocument:
		if p.Type == gw.PartDocument && p.Data == "" && p.URL == "" {
			if p.Text == "" {
				return outPart{}, false, nil
			}
			return textPart(p.Text), true, nil
		}
		if p.Data != "" {
			mt := p.MediaType
			if mt == "" && p.Type == gw.PartDocument {
				mt = "application/pdf"
			}
			if mt == "" {
				return outPart{}, false, invalid("%s: google needs the media type of an inline %s", where, p.Type)
			}
			return outPart{InlineData: &gemini.Blob{MimeType: mt, Data: p.Data}}, true, nil
		}
		if mt, data, ok := parseDataURL(p.URL); ok {
			if mt == "" {
				mt = p.MediaType
			}
			if mt == "" {
				return outPart{}, false, invalid("%s: google needs the media type of an inline %s", where, p.Type)
			}
			return outPart{InlineData: &gemini.Blob{MimeType: mt, Data: data}}, true, nil
		}
		mt := p.MediaType
		if mt == "" {
			mt = mimeFromURL(p.URL)
		}
		if mt == "" {
			return outPart{}, false, invalid("%s: google needs the media type of a linked %s and none can be told from its URL; send it inline (base64)", where, p.Type)
		}
		return outPart{FileData: &gemini.FileData{MimeType: mt, FileURI: p.URL}}, true, nil
	}
	return outPart{}, false, invalid("%s: google cannot take a %s part here", where, p.Type)
}

// parseDataURL splits a base64 data: URL.
func parseDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	meta, isB64 := strings.CutSuffix(meta, ";base64")
	if !isB64 {
		return "", "", false
	}
	mt, _, _ := strings.Cut(meta, ";")
	return mt, data, true
}

// mimeFromURL tells a linked file's media type from its extension: the
// types Gemini reads (images, PDF, plain text, audio and video).
func mimeFromURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	switch strings.ToLower(path.Ext(u)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".heic":
		return "image/heic"
	case ".heif":
		return "image/heif"
	case ".gif":
		return "image/gif"
	case ".pdf":
		return "application/pdf"
	case ".txt":
		return "text/plain"
	case ".mp3":
		return "audio/mpeg"
	case ".wav":
		return "audio/wav"
	case ".mp4":
		return "video/mp4"
	}
	if strings.Contains(u, "youtube.com/") || strings.Contains(u, "youtu.be/") {
		return "video/*"
	}
	return ""
}

// toolResult maps a tool result to a functionResponse and returns the
// result's images and documents as extra parts. The response is an
// object, by Google's documented convention: {"output": text}, or
// {"error": text} for a failed call (Anthropic is_error, or a C tool
// message with the "is_error" extension).
func (e *encoder) toolResult(where loc, p gw.Part) (outPart, []outPart, error) {
	name := p.ToolName
	if name == "" {
		name = e.names[p.ToolCallID]
	}
	if name == "" {
		return outPart{}, nil, invalid("%s: tool result %q answers no tool call of this conversation (google needs the function name)", where, p.ToolCallID)
	}
	var text strings.Builder
	var extra []outPart
	for k, c := range p.Content {
		switch c.Type {
		case gw.PartText:
			if text.Len() > 0 && c.Text != "" {
				text.WriteByte('\n')
			}
			text.WriteString(c.Text)
		case gw.PartImage, gw.PartDocument:
			op, ok, err := mediaPart(loc{m: where.m, c: where.c, k: k}, c)
			if err != nil {
				return outPart{}, nil, err
			}
			if ok && op.Text != nil {
				if text.Len() > 0 {
					text.WriteByte('\n')
				}
				text.WriteString(*op.Text)
				continue
			}
			if ok {
				extra = append(extra, op)
			}
		default:
			return outPart{}, nil, invalid("%s.content[%d]: google cannot take a %s part in a tool result", where, k, c.Type)
		}
	}
	key := "output"
	if p.IsError {
		key = "error"
	}
	resp, err := json.Marshal(map[string]string{key: text.String()})
	if err != nil {
		return outPart{}, nil, fmt.Errorf("encode tool result: %w", err)
	}
	core, _ := SplitToolCallID(p.ToolCallID)
	fr := &outResponse{Name: name, Response: resp, ID: core, callerID: p.ToolCallID}
	return outPart{FunctionResponse: fr}, extra, nil
}

// modelParts maps an assistant turn and returns the caller ids of its tool
// calls, in order.
func (e *encoder) modelParts(mi int, ps []gw.Part) ([]outPart, []string, error) {
	var out []outPart
	var ids []string
	for j, p := range ps {
		where := loc{m: mi, c: j, k: -1}
		if len(p.CacheControl) > 0 {
			e.drop(droppedCacheControl)
		}
		switch p.Type {
		case gw.PartToolCall:
			op, err := toolCall(where, p)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, op)
			ids = append(ids, p.ToolCallID)
		case gw.PartThinking:
			sig, ours := strings.CutPrefix(p.Signature, SignaturePrefix)
			if !ours {
				// Another vendor's reasoning: its signature means
				// nothing to Gemini (and would be refused).
				if p.Text != "" || p.Signature != "" {
					e.drop(droppedThinking)
				}
				continue
			}
			if p.Text == "" {
				if sig == "" {
					continue
				}
				// A signature Gemini sent on an ordinary part: back
				// onto the text part it followed, when there is one.
				if n := len(out); n > 0 && !out[n-1].Thought && out[n-1].Text != nil && out[n-1].ThoughtSignature == "" {
					out[n-1].ThoughtSignature = sig
					continue
				}
				out = append(out, outPart{Text: new(string), ThoughtSignature: sig})
				continue
			}
			op := textPart(p.Text)
			op.Thought = true
			op.ThoughtSignature = sig
			out = append(out, op)
		case gw.PartRedactedThinking:
			e.drop(droppedRedacted)
		default:
			op, ok, err := mediaPart(where, p)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				out = append(out, op)
			}
		}
	}
	return out, ids, nil
}

// toolCall maps an assistant tool call, restoring its thought signature
// from the part or from the id.
func toolCall(where loc, p gw.Part) (outPart, error) {
	if p.ToolName == "" {
		return outPart{}, invalid("%s: tool call without a name", where)
	}
	args, err := objectJSON(p.Arguments)
	if err != nil {
		return outPart{}, invalid("%s: tool call %q arguments must be a JSON object", where, p.ToolName)
	}
	core, sig := SplitToolCallID(p.ToolCallID)
	if s, ours := strings.CutPrefix(p.Signature, SignaturePrefix); ours && s != "" {
		sig = s
	}
	return outPart{FunctionCall: &outCall{Name: p.ToolName, Args: args, ID: core}, ThoughtSignature: sig}, nil
}

// objectJSON returns compact JSON object text; empty input, null and ""
// are "{}", and a JSON string holding an object is that object.
func objectJSON(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		// Arguments kept as the Chat Completions string: its text.
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return objectJSON(json.RawMessage(s))
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tools maps function declarations and the tool choice.
//
// Schemas go in parametersJsonSchema, unchanged: Gemini reads full JSON
// Schema there, while the older "parameters" field takes only an OpenAPI
// subset and refuses $schema, additionalProperties, const, oneOf and more.
// Sanitising for "parameters" would silently loosen the contract (drop
// enums-by-const, alternatives, closed objects); passing the schema whole
// keeps required fields and every constraint.
func (e *encoder) tools(out *genRequest) error {
	r := e.r
	declared := make(map[string]bool, len(r.Tools))
	var decls []gemini.FunctionDeclaration
	for i, t := range r.Tools {
		if !validFunctionName(t.Name) {
			return invalid("tools[%d].name: %q is not a valid google function name (letters, digits, _ . : -, starting with a letter or _, at most 128)", i, t.Name)
		}
		if len(t.CacheControl) > 0 {
			e.drop(droppedCacheControl)
		}
		if t.Strict != nil && *t.Strict {
			e.drop(droppedStrict)
		}
		d := gemini.FunctionDeclaration{Name: t.Name, Description: t.Description}
		schema := bytes.TrimSpace(t.Parameters)
		if len(schema) > 0 && !bytes.Equal(schema, []byte("null")) {
			var buf bytes.Buffer
			if err := json.Compact(&buf, schema); err != nil || schema[0] != '{' {
				return invalid("tools[%d].parameters: must be a JSON Schema object", i)
			}
			if !emptySchema(buf.Bytes()) {
				d.ParametersJSONSchema = buf.Bytes()
			}
		}
		declared[t.Name] = true
		decls = append(decls, d)
	}
	if len(decls) > 0 {
		out.Tools = []gemini.Tool{{FunctionDeclarations: decls}}
	}
	if r.ParallelToolCalls != nil && !*r.ParallelToolCalls && len(decls) > 0 {
		// Gemini has no switch for parallel calls.
		e.drop(droppedParallelToolCall)
	}
	tc := r.ToolChoice
	if tc == nil {
		return nil
	}
	var fc gemini.FunctionCallingConfig
	switch tc.Mode {
	case gw.ToolChoiceAuto, "":
		fc.Mode = "AUTO"
	case gw.ToolChoiceNone:
		fc.Mode = "NONE"
	case gw.ToolChoiceRequired:
		fc.Mode = "ANY"
	case gw.ToolChoiceTool:
		if !declared[tc.Name] {
			return invalid("tool_choice: %q is not one of the declared tools", tc.Name)
		}
		fc.Mode = "ANY"
		fc.AllowedFunctionNames = []string{tc.Name}
	default:
		return invalid("tool_choice: unknown mode %q", tc.Mode)
	}
	if len(decls) == 0 {
		if fc.Mode == "ANY" {
			return invalid("tool_choice: %q needs tools", tc.Mode)
		}
		return nil
	}
	out.ToolConfig = &gemini.ToolConfig{FunctionCallingConfig: &fc}
	return nil
}

// emptySchema reports a schema that declares nothing ({} or an object
// type without properties): the function then takes no parameters.
func emptySchema(b []byte) bool {
	switch string(b) {
	case `{}`, `{"type":"object"}`, `{"type":"object","properties":{}}`, `{"properties":{},"type":"object"}`:
		return true
	}
	return false
}

// validFunctionName checks Gemini's function-name rule:
// [A-Za-z_][A-Za-z0-9_.:-]{0,127}.
func validFunctionName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// generation maps sampling, output and reasoning controls.
func (e *encoder) generation() (*generationCf, error) {
	r := e.r
	gc := &generationCf{
		MaxOutputTokens: r.MaxTokens,
		Temperature:     r.Temperature,
		TopP:            r.TopP,
		TopK:            r.TopK,
		CandidateCount:  1,
	}
	if r.MaxTokens != nil && *r.MaxTokens < 1 {
		return nil, invalid("max_tokens: google needs at least 1, got %d", *r.MaxTokens)
	}
	if len(r.Stop) > maxStopSequences {
		return nil, invalid("stop: google takes at most %d stop sequences, got %d", maxStopSequences, len(r.Stop))
	}
	for _, s := range r.Stop {
		if s != "" {
			gc.StopSequences = append(gc.StopSequences, s)
		}
	}
	if r.Seed != nil {
		if *r.Seed < math.MinInt32 || *r.Seed > math.MaxInt32 {
			return nil, invalid("seed: google takes a 32-bit seed, got %d", *r.Seed)
		}
		gc.Seed = r.Seed
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			gc.ResponseMimeType = "application/json"
		case "json_schema":
			gc.ResponseMimeType = "application/json"
			schema := bytes.TrimSpace(rf.Schema)
			if len(schema) > 0 {
				var buf bytes.Buffer
				if err := json.Compact(&buf, schema); err != nil || schema[0] != '{' {
					return nil, invalid("response_format.schema: must be a JSON Schema object")
				}
				gc.ResponseJSONSchema = buf.Bytes()
			}
		case "text", "":
		default:
			return nil, invalid("response_format.type: google cannot produce %q", rf.Type)
		}
	}
	tc, err := e.thinking()
	if err != nil {
		return nil, err
	}
	gc.ThinkingConfig = tc
	return gc, nil
}
