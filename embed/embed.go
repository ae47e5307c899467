// Package embed is the embeddings' wire, apart from the chat shapes: the
// strict parse of a caller's request in OpenAI's shape (POST
// /v1/embeddings) and in Gemini's (:embedContent, :batchEmbedContents),
// the vendor bodies made from it (OpenAI-compatible /embeddings, and
// Gemini's batchEmbedContents split into calls of at most MaxGeminiBatch
// inputs), the vendor answers read back into one vector per input in
// input order, and the caller's answer in the shape it asked in.
//
// Every vector the gateway hands out has been checked: as many as there
// were inputs, each of the requested length, every value finite. The
// gateway always asks vendors for floats and encodes base64 itself
// (little-endian float32, as OpenAI does), so every vendor answers every
// encoding_format the same way.
package embed

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Bounds on a request, beyond the body's size.
const (
	// MaxInputs is the most inputs one request may carry (OpenAI's
	// limit for one call).
	MaxInputs = 2048
	// MaxGeminiBatch is the most requests one batchEmbedContents call
	// takes: longer lists are split and joined back in order.
	MaxGeminiBatch = 100
	// MaxDimensions bounds dimensions / outputDimensionality.
	MaxDimensions = 1 << 16
	// maxTokenID bounds a token id of a token-array input.
	maxTokenID = 1 << 24
)

// Input is one thing to embed: a text, or (OpenAI's shape only) an array
// of token ids.
type Input struct {
	Text     string
	Tokens   []int64
	IsTokens bool
	// TaskType and Title are Gemini's per-input hints ("" when none);
	// only google/ models get them.
	TaskType, Title string
}

// Request is a parsed embeddings request, in either shape.
type Request struct {
	// Model is the model as the caller named it (prefixed).
	Model  string
	Inputs []Input
	// Dimensions is the requested vector length, 0 for the model's own.
	Dimensions int
	// Base64 asks for the vectors as base64 of little-endian float32s
	// (OpenAI's encoding_format "base64").
	Base64 bool
	User   string
}

// Bytes is the inputs' size: their text bytes, and a token id as 4 bytes.
func (r *Request) Bytes() int64 {
	var n int64
	for _, in := range r.Inputs {
		n += int64(len(in.Text)) + 4*int64(len(in.Tokens)) + int64(len(in.Title))
	}
	return n
}

// HasTokens reports whether an input is an array of token ids.
func (r *Request) HasTokens() bool {
	for _, in := range r.Inputs {
		if in.IsTokens {
			return true
		}
	}
	return false
}

func bad(format string, a ...any) error {
	e := gw.Errorf(gw.CodeInvalidRequest, format, a...)
	e.NoRetry = true
	return e
}

// members returns b's top-level members, refusing a body that is not one
// JSON object, and any member named twice.
func members(b []byte, what string) ([]rawjson.Member, error) {
	if !json.Valid(b) {
		return nil, bad("the body is not valid JSON")
	}
	ms, err := rawjson.Members(b)
	if err != nil {
		return nil, bad("%s must be a JSON object", what)
	}
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if seen[m.Key] {
			return nil, bad("%s names %q twice", what, m.Key)
		}
		seen[m.Key] = true
	}
	return ms, nil
}

func value(b []byte, m rawjson.Member) []byte { return b[m.ValStart:m.ValEnd] }

// ParseOpenAI parses POST /v1/embeddings: model (required), input (a
// string, an array of strings, an array of token ids or an array of such
// arrays; none empty), dimensions (a positive integer), encoding_format
// ("float" or "base64") and user. Unknown members are refused, so a
// mistyped field is a clear 400 rather than silently ignored.
func ParseOpenAI(b []byte) (*Request, error) {
	ms, err := members(b, "the request")
	if err != nil {
		return nil, err
	}
	r := &Request{}
	var haveInput bool
	for _, m := range ms {
		v := value(b, m)
		switch m.Key {
		case "model":
			if err := json.Unmarshal(v, &r.Model); err != nil || r.Model == "" {
				return nil, bad("model must be a non-empty string")
			}
		case "input":
			haveInput = true
			if r.Inputs, err = parseInput(v); err != nil {
				return nil, err
			}
		case "dimensions":
			if r.Dimensions, err = dimensions(v, "dimensions"); err != nil {
				return nil, err
			}
		case "encoding_format":
			var f string
			if err := json.Unmarshal(v, &f); err != nil || f != "float" && f != "base64" {
				return nil, bad("encoding_format must be \"float\" or \"base64\"")
			}
			r.Base64 = f == "base64"
		case "user":
			if err := json.Unmarshal(v, &r.User); err != nil {
				return nil, bad("user must be a string")
			}
		default:
			return nil, bad("unknown field %s: the embeddings request takes model, input, dimensions, encoding_format and user", strconv.Quote(m.Key))
		}
	}
	if r.Model == "" {
		return nil, bad("model is required")
	}
	if !haveInput {
		return nil, bad("input is required")
	}
	return r, nil
}

func dimensions(v []byte, name string) (int, error) {
	var d int64
	if err := json.Unmarshal(v, &d); err != nil || d < 1 || d > MaxDimensions {
		return 0, bad("%s must be an integer from 1 to %d", name, MaxDimensions)
	}
	return int(d), nil
}

// parseInput reads OpenAI's input.
func parseInput(v []byte) ([]Input, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, bad("input must be a string or an array")
		}
		if s == "" {
			return nil, bad("input must not be empty")
		}
		return []Input{{Text: s}}, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(v, &arr); err != nil {
		return nil, bad("input must be a string, an array of strings, an array of token ids or an array of token-id arrays")
	}
	if len(arr) == 0 {
		return nil, bad("input must not be an empty array")
	}
	if len(arr) > MaxInputs {
		return nil, bad("input has %d items; at most %d a request", len(arr), MaxInputs)
	}
	// An array of numbers is one input of token ids.
	if c := bytes.TrimSpace(arr[0]); len(c) > 0 && (c[0] == '-' || c[0] >= '0' && c[0] <= '9') {
		toks, err := tokenIDs(v)
		if err != nil {
			return nil, err
		}
		return []Input{{Tokens: toks, IsTokens: true}}, nil
	}
	out := make([]Input, len(arr))
	for i, e := range arr {
		e = bytes.TrimSpace(e)
		switch {
		case len(e) > 0 && e[0] == '"':
			if err := json.Unmarshal(e, &out[i].Text); err != nil {
				return nil, bad("input[%d] must be a string", i)
			}
			if out[i].Text == "" {
				return nil, bad("input[%d] must not be empty", i)
			}
		case len(e) > 0 && e[0] == '[':
			toks, err := tokenIDs(e)
			if err != nil {
				return nil, bad("input[%d]: %s", i, gw.AsError(err).Message)
			}
			out[i] = Input{Tokens: toks, IsTokens: true}
		default:
			return nil, bad("input[%d] must be a string or an array of token ids", i)
		}
	}
	return out, nil
}

func tokenIDs(v []byte) ([]int64, error) {
	var toks []int64
	if err := json.Unmarshal(v, &toks); err != nil {
		return nil, bad("a token array must hold only integer token ids")
	}
	if len(toks) == 0 {
		return nil, bad("a token array must not be empty")
	}
	for _, t := range toks {
		if t < 0 || t >= maxTokenID {
			return nil, bad("token id %d is out of range", t)
		}
	}
	return toks, nil
}

// Gemini's embed methods.
const (
	MethodEmbed      = "embedContent"
	MethodBatchEmbed = "batchEmbedContents"
)

// ParseGemini parses Gemini's :embedContent (one content) or
// :batchEmbedContents (requests, each naming model, which must be the
// path's) for the path's model. Each content's parts must be text;
// taskType, title and outputDimensionality are read (one
// outputDimensionality for the whole batch). batch says which method.
func ParseGemini(b []byte, model string, batch bool) (*Request, error) {
	r := &Request{Model: model}
	if !batch {
		in, dims, err := geminiRequest(b, model, "the request", false)
		if err != nil {
			return nil, err
		}
		r.Inputs, r.Dimensions = []Input{in}, dims
		return r, nil
	}
	ms, err := members(b, "the request")
	if err != nil {
		return nil, err
	}
	var reqs []json.RawMessage
	for _, m := range ms {
		if m.Key != "requests" {
			return nil, bad("unknown field %s: batchEmbedContents takes requests", strconv.Quote(m.Key))
		}
		if err := json.Unmarshal(value(b, m), &reqs); err != nil {
			return nil, bad("requests must be an array of EmbedContentRequest objects")
		}
	}
	if len(reqs) == 0 {
		return nil, bad("requests must hold at least one request")
	}
	if len(reqs) > MaxInputs {
		return nil, bad("requests has %d items; at most %d a call", len(reqs), MaxInputs)
	}
	r.Inputs = make([]Input, len(reqs))
	for i, q := range reqs {
		in, dims, err := geminiRequest(q, model, fmt.Sprintf("requests[%d]", i), true)
		if err != nil {
			return nil, err
		}
		if i > 0 && dims != r.Dimensions {
			return nil, bad("requests[%d].outputDimensionality differs from requests[0]'s; one batch has one vector length", i)
		}
		r.Inputs[i], r.Dimensions = in, dims
	}
	return r, nil
}

// geminiRequest reads one EmbedContentRequest.
func geminiRequest(b []byte, model, what string, inBatch bool) (Input, int, error) {
	ms, err := members(b, what)
	if err != nil {
		return Input{}, 0, err
	}
	var in Input
	dims, haveContent := 0, false
	for _, m := range ms {
		v := value(b, m)
		switch m.Key {
		case "model":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return Input{}, 0, bad("%s.model must be a string", what)
			}
			if strings.TrimPrefix(s, "models/") != model {
				return Input{}, 0, bad("%s.model is %q; it must be the model of the path, models/%s", what, s, model)
			}
		case "content":
			haveContent = true
			if in.Text, err = geminiText(v, what+".content"); err != nil {
				return Input{}, 0, err
			}
		case "taskType":
			if err := json.Unmarshal(v, &in.TaskType); err != nil || !validTask(in.TaskType) {
				return Input{}, 0, bad("%s.taskType must be one of %s", what, strings.Join(taskTypes, ", "))
			}
		case "title":
			if err := json.Unmarshal(v, &in.Title); err != nil {
				return Input{}, 0, bad("%s.title must be a string", what)
			}
		case "outputDimensionality":
			if dims, err = dimensions(v, what+".outputDimensionality"); err != nil {
				return Input{}, 0, err
			}
		default:
			return Input{}, 0, bad("unknown field %s in %s: an EmbedContentRequest takes model, content, taskType, title and outputDimensionality", strconv.Quote(m.Key), what)
		}
	}
	if !haveContent {
		return Input{}, 0, bad("%s.content is required", what)
	}
	if in.Title != "" && in.TaskType != "RETRIEVAL_DOCUMENT" {
		return Input{}, 0, bad("%s.title applies only with taskType RETRIEVAL_DOCUMENT", what)
	}
	return in, dims, nil
}

var taskTypes = []string{"TASK_TYPE_UNSPECIFIED", "RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY", "CLASSIFICATION", "CLUSTERING", "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY"}

func validTask(s string) bool {
	for _, t := range taskTypes {
		if s == t {
			return true
		}
	}
	return false
}

// geminiText reads a Content of text parts, joined as Gemini embeds them
// (one text).
func geminiText(v []byte, what string) (string, error) {
	var c struct {
		Role  string `json:"role"`
		Parts []map[string]json.RawMessage
	}
	if err := json.Unmarshal(v, &c); err != nil {
		return "", bad("%s must be a Content object with parts", what)
	}
	if len(c.Parts) == 0 {
		return "", bad("%s.parts must hold at least one text part", what)
	}
	var sb strings.Builder
	for i, p := range c.Parts {
		t, ok := p["text"]
		if !ok || len(p) != 1 {
			return "", bad("%s.parts[%d] must be a text part ({\"text\": ...}); only text is embedded", what, i)
		}
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", bad("%s.parts[%d].text must be a string", what, i)
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(s)
	}
	if sb.Len() == 0 {
		return "", bad("%s has no text to embed", what)
	}
	return sb.String(), nil
}

// OpenAIBody is the body of one OpenAI-compatible /embeddings call for
// model: always floats; the length asked as the vendor names it
// (dimsField: "dimensions", Mistral's "output_dimension"; "" when the
// model's own length is wanted); Gemini's hints are dropped.
func OpenAIBody(model string, r *Request, dimsField string) []byte {
	out := struct {
		Model  string `json:"model"`
		Input  []any  `json:"input"`
		Format string `json:"encoding_format"`
		User   string `json:"user,omitempty"`
	}{Model: model, Format: "float", User: r.User}
	out.Input = make([]any, len(r.Inputs))
	for i, in := range r.Inputs {
		if in.IsTokens {
			out.Input[i] = in.Tokens
		} else {
			out.Input[i] = in.Text
		}
	}
	b, _ := json.Marshal(out)
	if dimsField != "" && r.Dimensions > 0 {
		b, _ = rawjson.Set(b, dimsField, []byte(strconv.Itoa(r.Dimensions)))
	}
	return b
}

// GeminiBodies are the batchEmbedContents bodies for model: the inputs in
// order, at most MaxGeminiBatch a call. Token arrays cannot go to Gemini.
func GeminiBodies(model string, r *Request) ([][]byte, error) {
	if r.HasTokens() {
		return nil, bad("google/ models embed text only: send input as strings, not token ids")
	}
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Parts []part `json:"parts"`
	}
	type req struct {
		Model    string  `json:"model"`
		Content  content `json:"content"`
		TaskType string  `json:"taskType,omitempty"`
		Title    string  `json:"title,omitempty"`
		Dims     int     `json:"outputDimensionality,omitempty"`
	}
	var out [][]byte
	for start := 0; start < len(r.Inputs); start += MaxGeminiBatch {
		end := min(start+MaxGeminiBatch, len(r.Inputs))
		batch := struct {
			Requests []req `json:"requests"`
		}{Requests: make([]req, 0, end-start)}
		for _, in := range r.Inputs[start:end] {
			batch.Requests = append(batch.Requests, req{Model: "models/" + model, Content: content{Parts: []part{{in.Text}}}, TaskType: in.TaskType, Title: in.Title, Dims: r.Dimensions})
		}
		b, _ := json.Marshal(batch)
		out = append(out, b)
	}
	return out, nil
}

// Usage is what a vendor answer says of its tokens.
type Usage struct {
	// Tokens are the input tokens reported; Reported says the answer
	// carried a usable non-zero count.
	Tokens   int64
	Reported bool
	// Cost is OpenRouter's usage.cost as sent ("" when none).
	Cost string
}

// Vector is one embedding as the vendor wrote it: its values' number
// text compacted into a JSON array ("[0.1,-2e-3]", the vendor's spacing
// dropped) and how many values it holds. The caller's float answer
// carries the vendor's digits unchanged; only base64 needs the values.
type Vector struct {
	JSON []byte
	Len  int
}

// Floats are v's values (read back from its number text, which the
// decoder checked are finite JSON numbers).
func (v Vector) Floats() []float64 {
	out := make([]float64, 0, v.Len)
	b := v.JSON
	for i := 1; i < len(b); {
		j := i
		for j < len(b) && b[j] != ',' && b[j] != ']' {
			j++
		}
		if j > i {
			x, _ := strconv.ParseFloat(string(b[i:j]), 64)
			out = append(out, x)
		}
		i = j + 1
	}
	return out
}

// DecodeOpenAI reads an OpenAI-compatible /embeddings answer of n
// vectors, each of dims values (0: any one length for all): data ordered
// by index (each index 0..n-1 exactly once), usage prompt_tokens (else
// total_tokens). The answer is read with rawjson (a validating scan,
// then spans), not encoding/json: its vectors are nearly all its bytes.
func DecodeOpenAI(b []byte, n, dims int) ([]Vector, Usage, error) {
	if !rawjson.Valid(b) {
		return nil, Usage{}, upstream("the vendor's embeddings answer is not readable JSON")
	}
	top := twoMembers(b, "data", "usage")
	data, usage := top[0], top[1]
	els, err := rawjson.Elements(data)
	if err != nil {
		return nil, Usage{}, upstream("the vendor's embeddings answer has no data array")
	}
	if len(els) != n {
		return nil, Usage{}, upstream("the vendor returned %d vectors for %d inputs", len(els), n)
	}
	vecs := make([]Vector, n)
	seen := make([]bool, n)
	buf := make([]byte, 0, len(data))
	for i, sp := range els {
		f := twoMembers(data[sp.Start:sp.End], "index", "embedding")
		idx := i
		if raw := f[0]; raw != nil {
			if err := json.Unmarshal(raw, &idx); err != nil {
				return nil, Usage{}, upstream("the vendor sent an index that is not an integer")
			}
		}
		if idx < 0 || idx >= n || seen[idx] {
			return nil, Usage{}, upstream("the vendor's vector indexes are not 0..%d once each", n-1)
		}
		seen[idx] = true
		var v Vector
		if v, buf, err = vector(f[1], buf); err != nil {
			return nil, Usage{}, err
		}
		vecs[idx] = v
	}
	if err := checkLengths(vecs, dims); err != nil {
		return nil, Usage{}, err
	}
	var u Usage
	var w struct {
		PromptTokens *int64          `json:"prompt_tokens"`
		TotalTokens  *int64          `json:"total_tokens"`
		Cost         json.RawMessage `json:"cost"`
	}
	if raw := usage; raw != nil && json.Unmarshal(raw, &w) == nil {
		switch {
		case w.PromptTokens != nil && *w.PromptTokens > 0:
			u.Tokens = *w.PromptTokens
		case w.TotalTokens != nil && *w.TotalTokens > 0:
			u.Tokens = *w.TotalTokens
		}
		u.Reported = u.Tokens > 0
		if c := bytes.TrimSpace(w.Cost); len(c) > 0 && c[0] != 'n' {
			u.Cost = string(c)
		}
	}
	return vecs, u, nil
}

// DecodeGemini reads a batchEmbedContents answer of n vectors
// ({"embeddings":[{"values":[...]}]}, in request order).
func DecodeGemini(b []byte, n, dims int) ([]Vector, error) {
	if !rawjson.Valid(b) {
		return nil, upstream("the vendor's embeddings answer is not readable JSON")
	}
	list := rawjson.Get(b, "embeddings")
	els, err := rawjson.Elements(list)
	if err != nil {
		return nil, upstream("the vendor's embeddings answer has no embeddings array")
	}
	if len(els) != n {
		return nil, upstream("the vendor returned %d vectors for %d inputs", len(els), n)
	}
	vecs := make([]Vector, n)
	buf := make([]byte, 0, len(list))
	for i, sp := range els {
		if vecs[i], buf, err = vector(rawjson.Get(list[sp.Start:sp.End], "values"), buf); err != nil {
			return nil, err
		}
	}
	return vecs, checkLengths(vecs, dims)
}

// twoMembers are the values of object b's two keys k0 and k1 (the last of
// duplicates, as encoding/json reads them; nil when absent), found in
// one pass: rawjson.Get would pass over a vector once a key.
func twoMembers(b []byte, k0, k1 string) [2][]byte {
	var out [2][]byte
	ms, err := rawjson.Members(b)
	if err != nil {
		return out
	}
	for _, m := range ms {
		switch m.Key {
		case k0:
			out[0] = b[m.ValStart:m.ValEnd]
		case k1:
			out[1] = b[m.ValStart:m.ValEnd]
		}
	}
	return out
}

func upstream(format string, a ...any) error { return gw.Errorf(gw.CodeUpstream, format, a...) }

// vector reads a JSON array of numbers into buf, compacted, and returns
// it as a Vector sharing buf's array (buf's capacity is the answer's
// size, so the vectors of one answer share one allocation). Each value
// is checked to be a JSON number, and a finite one: only a number with
// an exponent or of more than 300 digits can overflow a float64, so only
// those are converted to check.
func vector(v []byte, buf []byte) (Vector, []byte, error) {
	notNumbers := upstream("the vendor sent a vector that is not an array of numbers")
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return Vector{}, buf, notNumbers
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return Vector{}, buf, notNumbers
	}
	start := len(buf)
	buf = append(buf, '[')
	n := 0
	for {
		j := i
		exp := false
		for j < len(v) {
			c := v[j]
			if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' {
				j++
				continue
			}
			if c == 'e' || c == 'E' {
				exp = true
				j++
				continue
			}
			break
		}
		if j == i || !jsonNumber(v[i:j]) {
			return Vector{}, buf[:start], notNumbers
		}
		if exp || j-i > 300 {
			x, err := strconv.ParseFloat(string(v[i:j]), 64)
			if err != nil || math.IsInf(x, 0) {
				return Vector{}, buf[:start], upstream("the vendor sent a vector with a value that is not a finite number")
			}
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, v[i:j]...)
		n++
		i = skipSpace(v, j)
		if i >= len(v) {
			return Vector{}, buf[:start], notNumbers
		}
		if v[i] == ']' {
			if skipSpace(v, i+1) != len(v) {
				return Vector{}, buf[:start], notNumbers
			}
			buf = append(buf, ']')
			return Vector{JSON: buf[start:len(buf):len(buf)], Len: n}, buf, nil
		}
		if v[i] != ',' {
			return Vector{}, buf[:start], notNumbers
		}
		i = skipSpace(v, i+1)
	}
}

// jsonNumber says whether b is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// checkLengths holds every vector to dims (0: to the first one's length).
func checkLengths(vecs []Vector, dims int) error {
	for i, v := range vecs {
		if dims == 0 && i == 0 {
			dims = v.Len
		}
		if v.Len != dims {
			return upstream("the vendor sent a vector of %d values where %d were asked", v.Len, dims)
		}
	}
	return nil
}

// OpenAIAnswer is the caller's answer in OpenAI's shape: one embedding
// object per vector, index in input order, the vendor's numbers or
// base64 (float32 little-endian), and usage prompt_tokens = total_tokens
// = tokens.
func OpenAIAnswer(model string, vecs []Vector, tokens int64, b64 bool) []byte {
	var sb bytes.Buffer
	size := 128
	for _, v := range vecs {
		size += len(v.JSON) + 48
	}
	sb.Grow(size)
	sb.WriteString(`{"object":"list","data":[`)
	for i, v := range vecs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"object":"embedding","index":`)
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString(`,"embedding":`)
		if b64 {
			sb.WriteByte('"')
			sb.WriteString(Base64(v.Floats()))
			sb.WriteByte('"')
		} else {
			sb.Write(v.JSON)
		}
		sb.WriteByte('}')
	}
	m, _ := json.Marshal(model)
	fmt.Fprintf(&sb, `],"model":%s,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, m, tokens, tokens)
	return sb.Bytes()
}

// Base64 encodes v as OpenAI's base64 encoding_format does:
// little-endian float32s.
func Base64(v []float64) string {
	buf := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(x)))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// GeminiAnswer is the caller's answer in Gemini's shape: embedContent's
// {"embedding":{"values":[...]}} or batchEmbedContents'
// {"embeddings":[{"values":[...]},...]}.
func GeminiAnswer(vecs []Vector, batch bool) []byte {
	var sb bytes.Buffer
	if !batch {
		sb.WriteString(`{"embedding":{"values":`)
		sb.Write(vecs[0].JSON)
		sb.WriteString(`}}`)
		return sb.Bytes()
	}
	size := 32
	for _, v := range vecs {
		size += len(v.JSON) + 16
	}
	sb.Grow(size)
	sb.WriteString(`{"embeddings":[`)
	for i, v := range vecs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"values":`)
		sb.Write(v.JSON)
		sb.WriteByte('}')
	}
	sb.WriteString(`]}`)
	return sb.Bytes()
}
