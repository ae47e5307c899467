package fakevendor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// OpenAI's Responses API (POST /openai/v1/responses and its companions),
// served by the openai fake beside chat completions. See the package
// documentation, section "OpenAI Responses API", for the rules.

// respCreateParams are the top-level members OpenAI's Responses API
// accepts; any other is a 400 unknown_parameter, as the real one answers.
// client_metadata is what Codex sends and the real API takes.
var respCreateParams = map[string]bool{
	"access_programs": true, "background": true, "client_metadata": true, "context_management": true,
	"conversation": true, "image": true, "include": true, "input": true, "instructions": true,
	"max_output_tokens": true, "max_tool_calls": true, "metadata": true, "model": true,
	"moderation": true, "parallel_tool_calls": true, "previous_response_id": true, "prompt": true,
	"prompt_cache_key": true, "prompt_cache_options": true, "prompt_cache_retention": true,
	"reasoning": true, "safety_identifier": true, "service_tier": true, "store": true, "stream": true,
	"stream_options": true, "temperature": true, "text": true, "tool_choice": true, "tools": true,
	"top_logprobs": true, "top_p": true, "truncation": true, "user": true,
}

// respItem is the part of a Responses input item the fake reads.
type respItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Output           json.RawMessage `json:"output"`
	EncryptedContent *string         `json:"encrypted_content"`
}

// respTool is a declared Responses tool.
type respTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	Tools      []respTool      `json:"tools"` // namespace members
}

// respRequest is what the fake keeps of a Responses request beyond call.
type respRequest struct {
	raw       map[string]json.RawMessage
	store     bool
	encrypted bool   // include has "reasoning.encrypted_content"
	summary   bool   // reasoning.summary asks for summaries
	prevID    string // previous_response_id
	items     []json.RawMessage
	kinds     map[string]string // tool name -> "function" or "custom"
	spaces    map[string]string // tool name -> its namespace
}

// responsesPath reports whether path is under the Responses API.
func responsesPath(path string) bool {
	return path == "/v1/responses" || strings.HasPrefix(path, "/v1/responses/")
}

// serveResponses answers the Responses API routes of the openai fake.
func (ex *exchange) serveResponses() {
	rest := strings.TrimPrefix(strings.TrimPrefix(ex.path, "/v1/responses"), "/")
	if ex.r.Header.Get("Upgrade") != "" {
		// OpenAI serves a Responses WebSocket mode; the fake does not,
		// and refuses the upgrade with 426, on which Codex falls back
		// to HTTP at once.
		ex.writeError(respError(nil, http.StatusUpgradeRequired, "WebSocket upgrades are not served by this fake.", "invalid_request_error", nil, nil))
		return
	}
	if e := ex.checkAuth(); e != nil {
		ex.writeError(e)
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	switch {
	case rest == "" && ex.r.Method == http.MethodPost:
		ex.createResponse()
	case rest == "input_tokens" && ex.r.Method == http.MethodPost:
		ex.countResponseTokens()
	case id != "" && sub == "" && ex.r.Method == http.MethodGet:
		st, ok := ex.srv.responses.get(id)
		if !ok {
			ex.writeError(responseNotFound(id))
			return
		}
		ex.writeJSON(st.response)
	case id != "" && sub == "" && ex.r.Method == http.MethodDelete:
		if !ex.srv.responses.delete(id) {
			ex.writeError(responseNotFound(id))
			return
		}
		b, _ := json.Marshal(map[string]any{"id": id, "object": "response.deleted", "deleted": true})
		ex.writeJSON(b)
	case id != "" && sub == "input_items" && ex.r.Method == http.MethodGet:
		st, ok := ex.srv.responses.get(id)
		if !ok {
			ex.writeError(responseNotFound(id))
			return
		}
		ex.writeJSON(inputItemsList(st.input, ex.r.URL.Query().Get("order") == "asc"))
	case id != "" && (sub == "" || sub == "input_items" || sub == "cancel"):
		ex.writePlain(http.StatusMethodNotAllowed, "fake vendor: method not allowed")
	default:
		ex.writePlain(http.StatusNotFound, "fake vendor: unknown path")
	}
}

// writeJSON writes a 200 JSON answer.
func (ex *exchange) writeJSON(body []byte) {
	ex.w.Header().Set("Content-Type", "application/json")
	ex.setIDHeaders(nil)
	ex.status = http.StatusOK
	ex.w.WriteHeader(http.StatusOK)
	_, err := ex.w.Write(body)
	ex.complete = err == nil
}

// inputItemsList is the GET .../input_items answer: OpenAI lists the
// items newest first unless order=asc.
func inputItemsList(items []json.RawMessage, asc bool) []byte {
	data := slices.Clone(items)
	if !asc {
		slices.Reverse(data)
	}
	list := map[string]any{"object": "list", "data": data, "has_more": false, "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		list["first_id"] = itemID(data[0])
		list["last_id"] = itemID(data[len(data)-1])
	}
	b, _ := json.Marshal(list)
	return b
}

func itemID(raw json.RawMessage) string {
	var it respItem
	_ = json.Unmarshal(raw, &it)
	return it.ID
}

// respError builds an OpenAI error answer with the given fields.
func respError(c *call, status int, msg, typ string, param, code any) *vendorError {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": param, "code": code}})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &vendorError{status: status, body: body, header: h}
}

func responseNotFound(id string) *vendorError {
	return respError(nil, http.StatusNotFound, "Response with id '"+id+"' not found.", "invalid_request_error", nil, nil)
}

// countResponseTokens answers POST /v1/responses/input_tokens.
func (ex *exchange) countResponseTokens() {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(ex.body, &req); err != nil {
		ex.writeError(respError(nil, 400, "We could not parse the JSON body of your request.", "invalid_request_error", nil, nil))
		return
	}
	b, _ := json.Marshal(map[string]any{"object": "response.input_tokens", "input_tokens": PromptTokens(ex.body)})
	ex.writeJSON(b)
}

// createResponse answers POST /v1/responses, in the order of the other
// routes: validation, directives, then the reply.
func (ex *exchange) createResponse() {
	c := &call{vendor: ex.vendor, body: ex.body}
	rq, verr := ex.decodeResponses(c)
	if verr != nil {
		ex.writeError(verr)
		return
	}
	c.seed = sha256.Sum256([]byte(c.vendor + "\x00" + c.model + "\x00" + string(c.body)))
	var err error
	if c.dirs, err = parseDirectives(c.userText); err != nil {
		ex.writeError(respError(c, 400, "fake vendor: "+err.Error(), "invalid_request_error", nil, nil))
		return
	}
	if strings.Contains(c.model, "missing") {
		ex.writeError(respError(c, 404, "The model `"+c.model+"` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found"))
		return
	}
	d := c.dirs
	ctx := ex.r.Context()
	if d.hang {
		ex.wait(ctx, -1)
		return
	}
	if d.slow > 0 && !ex.wait(ctx, d.slow) {
		return
	}
	if d.failFirst > 0 && ex.srv.failFirst(c.vendor+"\x00responses\x00"+strings.Join(d.raw, ""), d.failFirst) {
		ex.writeError(newVendorError(c, ex.vendor, d.failStatus, defaultMessage(d.failStatus), d.retry))
		return
	}
	if d.status != 0 {
		ex.writeError(newVendorError(c, ex.vendor, d.status, defaultMessage(d.status), d.retry))
		return
	}
	if on, directive := ex.srv.replyModel(); on {
		modelReply(c, directive)
	}
	r := plan(c)
	if pc := ex.srv.prefixCache(); pc != nil && !d.cache {
		pc.apply(c, ex.credential(), &r.usage)
	}
	r.id = "resp_" + hexFrom(c.seed, "resp", 48)
	rs := newRespState(c, rq, r)
	final := rs.response(rs.finalStatus(), rs.output(true))
	if rq.store && !d.malformed {
		ex.srv.responses.put(r.id, storedResponse{response: final, input: rs.inputItems(), items: rs.outputItems()})
	}
	if !c.stream {
		if d.malformed {
			final = []byte("<html><body>upstream hiccup: {\"id\": </body></html>")
		}
		ex.writeJSON(final)
		return
	}
	ex.writeStream(ctx, c, rs.frames(final), rs.errorFrames(d.errorAt))
}

// decodeResponses reads and validates a Responses request, expanding
// previous_response_id from the kept responses.
func (ex *exchange) decodeResponses(c *call) (*respRequest, *vendorError) {
	invalid := func(msg string, param any, code any) *vendorError {
		return respError(c, 400, msg, "invalid_request_error", param, code)
	}
	rq := &respRequest{store: true, kinds: map[string]string{}, spaces: map[string]string{}}
	if err := json.Unmarshal(c.body, &rq.raw); err != nil || rq.raw == nil {
		return nil, invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", nil, nil)
	}
	names := make([]string, 0, len(rq.raw))
	for k := range rq.raw {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !respCreateParams[k] {
			return nil, invalid("Unknown parameter: '"+k+"'.", k, "unknown_parameter")
		}
	}
	if so := rq.raw["stream_options"]; len(so) > 0 && string(so) != "null" {
		var opts map[string]json.RawMessage
		if json.Unmarshal(so, &opts) != nil {
			return nil, invalid("Invalid type for 'stream_options': expected an object.", "stream_options", "invalid_type")
		}
		for k := range opts {
			if k != "include_obfuscation" {
				return nil, invalid("Unknown parameter: 'stream_options."+k+"'.", "stream_options."+k, "unknown_parameter")
			}
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(rq.raw[k], &s)
		return s
	}
	c.model = str("model")
	if c.model == "" {
		return nil, invalid("Missing required parameter: 'model'.", "model", "missing_required_parameter")
	}
	_ = json.Unmarshal(rq.raw["stream"], &c.stream)
	if s := rq.raw["store"]; len(s) > 0 && string(s) != "null" {
		_ = json.Unmarshal(s, &rq.store)
	}
	var include []string
	_ = json.Unmarshal(rq.raw["include"], &include)
	rq.encrypted = slices.Contains(include, "reasoning.encrypted_content")
	var reasoning struct {
		Summary string `json:"summary"`
	}
	_ = json.Unmarshal(rq.raw["reasoning"], &reasoning)
	rq.summary = reasoning.Summary != "" && reasoning.Summary != "none"
	if m := rq.raw["max_output_tokens"]; len(m) > 0 && string(m) != "null" {
		n, err := strconv.Atoi(string(m))
		if err != nil {
			return nil, invalid("Invalid type for 'max_output_tokens': expected an integer, but got a decimal number instead.", "max_output_tokens", "invalid_type")
		}
		if n < 16 {
			return nil, invalid(fmt.Sprintf("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got %d instead.", n), "max_output_tokens", "integer_below_min_value")
		}
	}
	c.obfuscate = true
	var so struct {
		IncludeObfuscation *bool `json:"include_obfuscation"`
	}
	if json.Unmarshal(rq.raw["stream_options"], &so) == nil && so.IncludeObfuscation != nil {
		c.obfuscate = *so.IncludeObfuscation
	}
	var tools []respTool
	if t := rq.raw["tools"]; len(t) > 0 && json.Unmarshal(t, &tools) != nil {
		return nil, invalid("Invalid type for 'tools': expected an array of objects.", "tools", "invalid_type")
	}
	for _, t := range tools {
		if err := rq.declare(c, t, ""); err != nil {
			return nil, err
		}
	}
	// The input: a string is one user message.
	var items []json.RawMessage
	if in := rq.raw["input"]; len(in) > 0 && string(in) != "null" {
		var s string
		if json.Unmarshal(in, &s) == nil {
			b, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": s})
			items = []json.RawMessage{b}
		} else if json.Unmarshal(in, &items) != nil {
			return nil, invalid("Invalid type for 'input': expected one of a string or array of objects.", "input", "invalid_type")
		}
	}
	rq.prevID = str("previous_response_id")
	var history []json.RawMessage
	if rq.prevID != "" {
		prev, ok := ex.srv.responses.get(rq.prevID)
		if !ok {
			return nil, invalid("Previous response with id '"+rq.prevID+"' not found.", "previous_response_id", "previous_response_not_found")
		}
		history = append(slices.Clone(prev.input), prev.items...)
	} else if len(items) == 0 {
		return nil, invalid("Missing required parameter: 'input'.", "input", "missing_required_parameter")
	}
	// Items given by reference (item_reference, or a reasoning item with
	// only its id) must be kept items; with store false nothing was kept.
	for i, raw := range items {
		var it respItem
		if json.Unmarshal(raw, &it) != nil {
			return nil, invalid(fmt.Sprintf("Invalid type for 'input[%d]': expected an object.", i), fmt.Sprintf("input[%d]", i), "invalid_type")
		}
		byRef := it.Type == "item_reference" || (it.Type == "reasoning" && it.EncryptedContent == nil)
		if it.Type == "reasoning" && it.EncryptedContent != nil && !validEncrypted(*it.EncryptedContent) {
			return nil, invalid("The encrypted content for item "+it.ID+" could not be verified. Reason: Encrypted content could not be decrypted or parsed.", nil, "invalid_encrypted_content")
		}
		if !byRef {
			continue
		}
		kept, ok := ex.srv.responses.item(it.ID)
		if !ok {
			msg := "Item with id '" + it.ID + "' not found."
			if !rq.store {
				msg += " Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
			}
			return nil, respError(c, 404, msg, "invalid_request_error", "input", nil)
		}
		items[i] = kept
	}
	rq.items = items
	all := append(history, items...)
	if err := checkToolPairs(all); err != nil {
		return nil, invalid(err.Error(), "input", nil)
	}
	// Tool results: the outputs that end the new input.
	for i := len(items) - 1; i >= 0; i-- {
		var it respItem
		_ = json.Unmarshal(items[i], &it)
		if it.Type != "function_call_output" && it.Type != "custom_tool_call_output" {
			break
		}
		c.toolResults = append([]string{outputText(it.Output)}, c.toolResults...)
	}
	for i := len(all) - 1; i >= 0; i-- {
		var it respItem
		_ = json.Unmarshal(all[i], &it)
		if (it.Type == "message" || it.Type == "") && it.Role == "user" {
			if t := respText(it.Content); t != "" {
				c.userText = t
				break
			}
		}
	}
	return rq, nil
}

// declare adds a tool to c; namespace members are declared under their
// own names and remembered with their namespace.
func (rq *respRequest) declare(c *call, t respTool, space string) *vendorError {
	switch t.Type {
	case "function", "custom":
		if t.Name == "" {
			return respError(c, 400, "Missing required parameter: 'tools[].name'.", "invalid_request_error", "tools", "missing_required_parameter")
		}
		c.tools = append(c.tools, toolDecl{name: t.Name, schema: t.Parameters})
		rq.kinds[t.Name] = t.Type
		if space != "" {
			rq.spaces[t.Name] = space
		}
	case "namespace":
		if space != "" {
			return respError(c, 400, "Invalid value: 'namespace'. Namespaces cannot be nested.", "invalid_request_error", "tools", "invalid_value")
		}
		for _, m := range t.Tools {
			if err := rq.declare(c, m, t.Name); err != nil {
				return err
			}
		}
	case "":
		return respError(c, 400, "Missing required parameter: 'tools[].type'.", "invalid_request_error", "tools", "missing_required_parameter")
	}
	// Hosted tools (web_search, file_search, ...) are OpenAI's to run;
	// the fake never calls them.
	return nil
}

// checkToolPairs enforces OpenAI's pairing of tool calls and outputs in
// the (expanded) input: an output needs an earlier call with its call_id,
// and a call needs an output after it.
func checkToolPairs(items []json.RawMessage) error {
	calls := map[string]string{}
	answered := map[string]bool{}
	var order []string
	for _, raw := range items {
		var it respItem
		_ = json.Unmarshal(raw, &it)
		switch it.Type {
		case "function_call", "custom_tool_call":
			calls[it.CallID] = it.Type
			order = append(order, it.CallID)
		case "function_call_output", "custom_tool_call_output":
			if _, ok := calls[it.CallID]; !ok {
				kind := "function call"
				if it.Type == "custom_tool_call_output" {
					kind = "custom tool call"
				}
				return fmt.Errorf("No tool call found for %s output with call_id %s.", kind, it.CallID)
			}
			answered[it.CallID] = true
		}
	}
	for _, id := range order {
		if !answered[id] {
			kind := "function call"
			if calls[id] == "custom_tool_call" {
				kind = "custom tool call"
			}
			return fmt.Errorf("No tool output found for %s %s.", kind, id)
		}
	}
	return nil
}

// respText is the text of a message's content: a string or input_text /
// output_text parts.
func respText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// outputText is the text of a tool output: a string, or input_text parts.
func outputText(raw json.RawMessage) string {
	return respText(raw)
}

// encryptedPrefix starts every encrypted_content the fake makes, as the
// real one's Fernet tokens start with "gAAAAA".
const encryptedPrefix = "gAAAAAB"

// encryptReasoning seals the reasoning text the fake hands out as
// encrypted_content: the text and a check value, so that the fake can
// verify what comes back.
func encryptReasoning(model, text string) string {
	payload, _ := json.Marshal(map[string]string{"m": model, "t": text, "k": reasoningCheck(model, text)})
	return encryptedPrefix + base64.RawURLEncoding.EncodeToString(payload)
}

func reasoningCheck(model, text string) string {
	return idFrom(sha256.Sum256([]byte(model+"\x00"+text)), "enc", 16)
}

// validEncrypted reports whether s is an encrypted_content the fake made
// (unaltered).
func validEncrypted(s string) bool {
	rest, ok := strings.CutPrefix(s, encryptedPrefix)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return false
	}
	var p map[string]string
	return json.Unmarshal(b, &p) == nil && p["k"] == reasoningCheck(p["m"], p["t"])
}

// respState builds the answer of one Responses call.
type respState struct {
	c       *call
	rq      *respRequest
	r       *reply
	created int64
	seq     int
}

func newRespState(c *call, rq *respRequest, r *reply) *respState {
	return &respState{c: c, rq: rq, r: r, created: time.Now().Unix()}
}

// finalStatus is "completed", or "incomplete" for a length or content
// filter stop.
func (s *respState) finalStatus() string {
	if s.incomplete() != "" {
		return "incomplete"
	}
	return "completed"
}

// incomplete returns the incomplete_details reason, "" when complete.
func (s *respState) incomplete() string {
	switch s.r.stop {
	case "length":
		return "max_output_tokens"
	case "content_filter":
		return "content_filter"
	}
	return ""
}

// ids of the output items.
func (s *respState) reasoningID() string { return "rs_" + hexFrom(s.c.seed, "rs", 48) }
func (s *respState) messageID() string   { return "msg_" + hexFrom(s.c.seed, "msg", 48) }
func (s *respState) callItemID(i int) string {
	p := "fc_"
	if s.rq.kinds[s.r.calls[i].name] == "custom" {
		p = "ctc_"
	}
	return p + hexFrom(s.c.seed, "fc"+strconv.Itoa(i), 48)
}

// reasoningItem returns the reasoning output item.
func (s *respState) reasoningItem(done bool) map[string]any {
	summary := []any{}
	if done && s.rq.summary {
		summary = append(summary, map[string]any{"type": "summary_text", "text": s.r.reasoning})
	}
	it := map[string]any{"id": s.reasoningID(), "type": "reasoning", "summary": summary}
	if s.rq.encrypted {
		it["encrypted_content"] = encryptReasoning(s.c.model, s.r.reasoning)
	}
	return it
}

// messageItem returns the message output item.
func (s *respState) messageItem(done bool) map[string]any {
	content := []any{}
	status := "in_progress"
	if done {
		content = append(content, s.textPart(s.r.text))
		status = "completed"
		if s.incomplete() != "" {
			status = "incomplete"
		}
	}
	return map[string]any{"id": s.messageID(), "type": "message", "status": status, "role": "assistant", "content": content}
}

func (s *respState) textPart(text string) map[string]any {
	return map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": text}
}

// customInput is a custom tool call's free-form input: the "input" member
// of the call directive's arguments when it has one, else the arguments
// as written, or "x" for schema-made ("{}") arguments.
func customInput(args string) string {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil {
		if s, ok := obj["input"].(string); ok {
			return s
		}
	}
	if args == "{}" {
		return "x"
	}
	return args
}

// callItem returns the i-th tool call output item.
func (s *respState) callItem(i int, done bool) map[string]any {
	tc := s.r.calls[i]
	status := "in_progress"
	if done {
		status = "completed"
	}
	var it map[string]any
	if s.rq.kinds[tc.name] == "custom" {
		in := ""
		if done {
			in = customInput(tc.args)
		}
		it = map[string]any{"id": s.callItemID(i), "type": "custom_tool_call", "status": status, "call_id": tc.id, "name": tc.name, "input": in}
	} else {
		args := ""
		if done {
			args = tc.args
		}
		it = map[string]any{"id": s.callItemID(i), "type": "function_call", "status": status, "arguments": args, "call_id": tc.id, "name": tc.name}
	}
	if ns := s.rq.spaces[tc.name]; ns != "" {
		it["namespace"] = ns
	}
	return it
}

// output returns the output items (done: their final form).
func (s *respState) output(done bool) []any {
	out := []any{}
	for i := 0; i < s.c.dirs.searches && done; i++ {
		// Hosted web searches come first, one output item per call
		// (each billed).
		out = append(out, map[string]any{"type": "web_search_call", "id": "ws_" + hexFrom(s.c.seed, "ws"+strconv.Itoa(i), 48),
			"status": "completed", "action": map[string]any{"type": "search", "query": "fake query " + strconv.Itoa(i+1)}})
	}
	if s.r.reasoning != "" {
		out = append(out, s.reasoningItem(done))
	}
	if s.r.text != "" {
		out = append(out, s.messageItem(done))
	}
	for i := range s.r.calls {
		out = append(out, s.callItem(i, done))
	}
	return out
}

// outputItems returns the final output items as JSON, to keep.
func (s *respState) outputItems() []json.RawMessage {
	var out []json.RawMessage
	for _, it := range s.output(true) {
		b, _ := json.Marshal(it)
		out = append(out, b)
	}
	return out
}

// inputItems returns the request's input items as kept: the expanded
// conversation's new items, each with an id (OpenAI assigns message ids).
func (s *respState) inputItems() []json.RawMessage {
	var out []json.RawMessage
	for i, raw := range s.rq.items {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m["type"] == nil {
			m["type"] = "message"
		}
		if _, ok := m["id"]; !ok {
			m["id"] = "msg_" + hexFrom(s.c.seed, "in"+strconv.Itoa(i), 48)
		}
		if m["type"] == "message" {
			if str, ok := m["content"].(string); ok {
				m["content"] = []any{map[string]any{"type": "input_text", "text": str}}
			}
			if m["status"] == nil {
				m["status"] = "completed"
			}
		}
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// usage is the Responses usage object.
func (s *respState) usage() map[string]any {
	u := s.r.usage
	out := u.output()
	return map[string]any{
		"input_tokens":          u.prompt,
		"input_tokens_details":  map[string]any{"cached_tokens": u.cacheRead},
		"output_tokens":         out,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.reasoning},
		"total_tokens":          u.prompt + out,
	}
}

// echo returns a request member for the response object, or def.
func (s *respState) echo(k string, def any) any {
	if v, ok := s.rq.raw[k]; ok && string(v) != "null" {
		return v
	}
	return def
}

// response returns the response object in the given status with output.
func (s *respState) response(status string, output []any) []byte {
	m := map[string]any{
		"id": s.r.id, "object": "response", "created_at": s.created, "status": status,
		"background": false, "error": nil, "incomplete_details": nil,
		"instructions": s.echo("instructions", nil), "max_output_tokens": s.echo("max_output_tokens", nil),
		"max_tool_calls": s.echo("max_tool_calls", nil), "model": s.c.model, "output": output,
		"parallel_tool_calls":  s.echo("parallel_tool_calls", true),
		"previous_response_id": s.echo("previous_response_id", nil),
		"prompt_cache_key":     s.echo("prompt_cache_key", nil),
		"reasoning":            s.echo("reasoning", map[string]any{"effort": nil, "summary": nil}),
		"safety_identifier":    s.echo("safety_identifier", nil),
		"service_tier":         s.c.servedTier("default"), "store": s.rq.store,
		"temperature": s.echo("temperature", 1.0),
		"text":        s.echo("text", map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"}),
		"tool_choice": s.echo("tool_choice", "auto"), "tools": s.echo("tools", []any{}),
		"top_logprobs": s.echo("top_logprobs", 0), "top_p": s.echo("top_p", 1.0),
		"truncation": s.echo("truncation", "disabled"), "usage": nil,
		"user": s.echo("user", nil), "metadata": s.echo("metadata", map[string]any{}),
	}
	switch status {
	case "completed", "incomplete", "failed":
		m["usage"] = s.usage()
		m["completed_at"] = s.created
	}
	if status == "incomplete" {
		m["incomplete_details"] = map[string]any{"reason": s.incomplete()}
	}
	if status == "failed" {
		m["error"] = map[string]any{"code": "server_error", "message": respStreamErrorMessage}
	}
	b, _ := json.Marshal(m)
	return b
}

const respStreamErrorMessage = "The server had an error processing your request. Sorry about that! (fake vendor)"

// event returns the next stream event of the given type.
func (s *respState) event(kind frameKind, typ string, v map[string]any) frame {
	v["type"] = typ
	v["sequence_number"] = s.seq
	s.seq++
	return eventFrame(kind, typ, v)
}

// obfuscated adds OpenAI's obfuscation padding to a delta event.
func (s *respState) obfuscated(v map[string]any) map[string]any {
	if s.c.obfuscate {
		v["obfuscation"] = idFrom(s.c.seed, fmt.Sprintf("obf%d", s.seq), 4+s.seq%11)
	}
	return v
}

// frames returns the stream of a Responses call ending with final.
func (s *respState) frames(final []byte) []frame {
	r := s.r
	var fs []frame
	add := func(kind frameKind, typ string, v map[string]any) { fs = append(fs, s.event(kind, typ, v)) }
	add(framePre, "response.created", map[string]any{"response": json.RawMessage(s.response("in_progress", []any{}))})
	add(framePre, "response.in_progress", map[string]any{"response": json.RawMessage(s.response("in_progress", []any{}))})
	idx := 0
	if r.reasoning != "" {
		id := s.reasoningID()
		add(frameOther, "response.output_item.added", map[string]any{"output_index": idx, "item": s.reasoningItem(false)})
		if s.rq.summary {
			base := map[string]any{"item_id": id, "output_index": idx, "summary_index": 0}
			with := func(extra map[string]any) map[string]any {
				m := map[string]any{}
				for k, v := range base {
					m[k] = v
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			add(frameOther, "response.reasoning_summary_part.added", with(map[string]any{"part": map[string]any{"type": "summary_text", "text": ""}}))
			for _, p := range r.reasonPieces {
				add(frameContent, "response.reasoning_summary_text.delta", s.obfuscated(with(map[string]any{"delta": p})))
			}
			add(frameOther, "response.reasoning_summary_text.done", with(map[string]any{"text": r.reasoning}))
			add(frameOther, "response.reasoning_summary_part.done", with(map[string]any{"part": map[string]any{"type": "summary_text", "text": r.reasoning}}))
		}
		add(frameOther, "response.output_item.done", map[string]any{"output_index": idx, "item": s.reasoningItem(true)})
		idx++
	}
	if r.text != "" {
		id := s.messageID()
		add(frameOther, "response.output_item.added", map[string]any{"output_index": idx, "item": s.messageItem(false)})
		add(frameOther, "response.content_part.added", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "part": s.textPart("")})
		for _, p := range r.textPieces {
			add(frameContent, "response.output_text.delta", s.obfuscated(map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "delta": p, "logprobs": []any{}}))
		}
		add(frameOther, "response.output_text.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "text": r.text, "logprobs": []any{}})
		add(frameOther, "response.content_part.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "part": s.textPart(r.text)})
		add(frameOther, "response.output_item.done", map[string]any{"output_index": idx, "item": s.messageItem(true)})
		idx++
	}
	for i, tc := range r.calls {
		id := s.callItemID(i)
		add(frameContent, "response.output_item.added", map[string]any{"output_index": idx, "item": s.callItem(i, false)})
		if s.rq.kinds[tc.name] == "custom" {
			in := customInput(tc.args)
			for _, p := range splitN(in, 3) {
				add(frameContent, "response.custom_tool_call_input.delta", s.obfuscated(map[string]any{"item_id": id, "output_index": idx, "delta": p}))
			}
			add(frameOther, "response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": idx, "input": in})
		} else {
			for _, p := range tc.pieces {
				add(frameContent, "response.function_call_arguments.delta", s.obfuscated(map[string]any{"item_id": id, "output_index": idx, "delta": p}))
			}
			add(frameOther, "response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "arguments": tc.args})
		}
		add(frameOther, "response.output_item.done", map[string]any{"output_index": idx, "item": s.callItem(i, true)})
		idx++
	}
	end := "response.completed"
	if s.finalStatus() == "incomplete" {
		end = "response.incomplete"
	}
	add(frameOther, end, map[string]any{"response": json.RawMessage(final)})
	return fs
}

// errorFrames returns the in-stream failure for error-after: an "error"
// event, then response.failed. Their sequence numbers continue those of
// the frames before the cut.
func (s *respState) errorFrames(errorAt int) []frame {
	if errorAt < 0 {
		return nil
	}
	fs := s.frames(nil)
	s.seq = triggerIndex(fs, errorAt)
	failed := s.response("failed", []any{})
	return []frame{
		s.event(frameOther, "error", map[string]any{"code": "server_error", "message": respStreamErrorMessage, "param": nil}),
		s.event(frameOther, "response.failed", map[string]any{"response": json.RawMessage(failed)}),
	}
}

// storedResponse is a kept response: its object, its input items and
// its output items.
type storedResponse struct {
	response []byte
	input    []json.RawMessage
	items    []json.RawMessage
}

// maxStoredResponses bounds the fake's kept responses; the oldest go
// first.
const maxStoredResponses = 10000

// respStore keeps responses created with store true, and their items by
// id, for previous_response_id, item references and the GET, DELETE and
// input_items routes. It lives as long as the Server.
type respStore struct {
	mu    sync.Mutex
	m     map[string]storedResponse
	order []string
	items map[string]json.RawMessage
}

func (s *respStore) put(id string, st storedResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]storedResponse{}
		s.items = map[string]json.RawMessage{}
	}
	if _, ok := s.m[id]; !ok {
		s.order = append(s.order, id)
	}
	s.m[id] = st
	for _, it := range append(slices.Clone(st.input), st.items...) {
		if iid := itemID(it); iid != "" {
			s.items[iid] = it
		}
	}
	for len(s.order) > maxStoredResponses {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *respStore) get(id string) (storedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[id]
	return st, ok
}

func (s *respStore) item(id string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	return it, ok
}

func (s *respStore) delete(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; !ok {
		return false
	}
	delete(s.m, id)
	return true
}
