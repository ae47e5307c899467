package fakevendor

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The embedding routes (see the package documentation):
//
//	openai, together, fireworks, mistral, openrouter   POST <base>/embeddings
//	google   POST /google/v1beta/models/{model}:embedContent and :batchEmbedContents
//
// Vectors are deterministic from the text: Vector(vendor, model, text,
// n). A shorter vector is the longer one's prefix (Matryoshka-style), and
// every value is a multiple of 1/1024 in [-1, 1], exact as a float32, so
// a vector survives base64 of float32s unchanged.

// embedDims are the default vector lengths of the fake's embedding
// models; any other model gets 1536.
var embedDims = map[string]int{
	"text-embedding-3-small":         1536,
	"text-embedding-3-large":         3072,
	"gemini-embedding-001":           3072,
	"mistral-embed":                  1024,
	"codestral-embed":                1536,
	"BAAI/bge-large-en-v1.5":         1024,
	"nomic-ai/nomic-embed-text-v1.5": 768,
}

// EmbedDims returns the fake's default vector length for model.
func EmbedDims(model string) int {
	if d, ok := embedDims[model]; ok {
		return d
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		if d, ok := embedDims[model[i+1:]]; ok {
			return d
		}
	}
	return 1536
}

// Vector is the fake's embedding of text (a token array is its JSON
// text) by vendor's model, n values long.
func Vector(vendor, model, text string, n int) []float64 {
	seed := sha256.Sum256([]byte(vendor + "\x00" + model + "\x00" + text))
	out := make([]float64, n)
	var block [32]byte
	for i := range out {
		if i%16 == 0 {
			var ctr [8]byte
			binary.BigEndian.PutUint64(ctr[:], uint64(i/16))
			block = sha256.Sum256(append(seed[:], ctr[:]...))
		}
		k := int(binary.BigEndian.Uint16(block[2*(i%16):])) % 2049
		out[i] = float64(k-1024) / 1024
	}
	return out
}

// EmbedTokens is the fake's prompt_tokens for one input: Tokens of the
// text's bytes (at least 1), or a token array's length.
func EmbedTokens(text string, tokens []int64) int {
	if tokens != nil {
		return len(tokens)
	}
	return max(1, Tokens(len(text)))
}

// embedPath is the OpenAI-compatible embeddings path of vendor.
func embedPath(vendor string) string {
	p, _ := basePath(vendor)
	return p + "/embeddings"
}

// serveEmbeddings answers an OpenAI-compatible /embeddings call: model,
// input (a string, strings, a token array or token arrays), the length
// (dimensions; Mistral's output_dimension, and Mistral refuses
// dimensions as its schema forbids unknown members; Together ignores
// it), encoding_format float or base64. Usage is OpenAI's prompt_tokens
// and total_tokens (OpenRouter adds its cost at $0.02 per million).
// Fireworks lists data in reverse order, each with its index, so that
// callers that order by index are told apart from those that do not.
func (ex *exchange) serveEmbeddings() {
	c := &call{vendor: ex.vendor, body: ex.body}
	if !ex.admit() {
		return
	}
	fail := func(status int, format string, a ...any) {
		ex.writeError(newVendorError(c, ex.vendor, status, fmt.Sprintf(format, a...), 0))
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(ex.body, &req); err != nil {
		fail(400, "fake vendor: the body is not a JSON object")
		return
	}
	if err := json.Unmarshal(req["model"], &c.model); err != nil || c.model == "" {
		fail(400, "fake vendor: model is required")
		return
	}
	if strings.Contains(c.model, "missing") {
		ex.writeError(modelNotFound(c))
		return
	}
	type input struct {
		text   string
		tokens []int64
	}
	var inputs []input
	raw := bytes.TrimSpace(req["input"])
	var one string
	var many []json.RawMessage
	switch {
	case len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &one) == nil:
		inputs = []input{{text: one}}
	case json.Unmarshal(raw, &many) == nil && len(many) > 0:
		var toks []int64
		if json.Unmarshal(raw, &toks) == nil {
			inputs = []input{{text: string(raw), tokens: toks}}
			break
		}
		for _, m := range many {
			var s string
			var t []int64
			switch {
			case json.Unmarshal(m, &s) == nil && s != "":
				inputs = append(inputs, input{text: s})
			case json.Unmarshal(m, &t) == nil && len(t) > 0:
				inputs = append(inputs, input{text: string(bytes.TrimSpace(m)), tokens: t})
			default:
				fail(400, "fake vendor: input items must be non-empty strings or token arrays")
				return
			}
		}
	default:
		fail(400, "fake vendor: input must be a non-empty string or array")
		return
	}
	dimsField := "dimensions"
	if ex.vendor == "mistral" {
		dimsField = "output_dimension"
		if _, ok := req["dimensions"]; ok {
			fail(422, "fake vendor: Extra inputs are not permitted: dimensions")
			return
		}
	}
	n := EmbedDims(c.model)
	if v, ok := req[dimsField]; ok && ex.vendor != "together" {
		var d int
		if err := json.Unmarshal(v, &d); err != nil || d < 1 || d > n {
			fail(400, "fake vendor: %s must be an integer from 1 to %d", dimsField, n)
			return
		}
		n = d
	}
	var format string
	if v, ok := req["encoding_format"]; ok {
		if err := json.Unmarshal(v, &format); err != nil || format != "float" && format != "base64" {
			fail(400, "fake vendor: encoding_format must be float or base64")
			return
		}
	}
	var sb bytes.Buffer
	sb.WriteString(`{"object":"list","data":[`)
	tokens := 0
	for k := range inputs {
		i := k
		if ex.vendor == "fireworks" {
			i = len(inputs) - 1 - k
		}
		in := inputs[i]
		tokens += EmbedTokens(in.text, in.tokens)
		if k > 0 {
			sb.WriteByte(',')
		}
		v := Vector(ex.vendor, c.model, in.text, n)
		sb.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":`)
		if format == "base64" {
			sb.WriteString(strconv.Quote(base64Floats(v)))
		} else {
			writeVector(&sb, v)
		}
		sb.WriteByte('}')
	}
	u := Usage{Vendor: ex.vendor, Model: c.model, Key: APIKey(ex.vendor), Time: time.Now(), Input: int64(tokens), Embedding: true}
	if ex.vendor == "openrouter" {
		u.Cost = gw.Money(2 * tokens) // $0.02 per million tokens
	}
	ex.srv.ledger.logServed(u)
	m, _ := json.Marshal(c.model)
	fmt.Fprintf(&sb, `],"model":%s,"usage":{"prompt_tokens":%d,"total_tokens":%d`, m, tokens, tokens)
	if ex.vendor == "openrouter" {
		fmt.Fprintf(&sb, `,"cost":%s`, strconv.FormatFloat(float64(tokens)*0.00000002, 'f', -1, 64))
	}
	sb.WriteString(`}}`)
	ex.writeJSON(sb.Bytes())
}

func writeVector(sb *bytes.Buffer, v []float64) {
	sb.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
	sb.WriteByte(']')
}

// serveGeminiEmbed answers Gemini's :embedContent ({"embedding":
// {"values"}}) and :batchEmbedContents ({"embeddings": [...]}, at most
// 100 requests, each naming the path's model). Like the real API the
// answers carry no usage.
func (ex *exchange) serveGeminiEmbed(c *call, batch bool) {
	if !ex.admit() {
		return
	}
	fail := func(format string, a ...any) {
		ex.writeError(newVendorError(c, ex.vendor, 400, fmt.Sprintf(format, a...), 0))
	}
	if strings.Contains(c.model, "missing") {
		ex.writeError(modelNotFound(c))
		return
	}
	type request struct {
		Model   string `json:"model"`
		Content *struct {
			Parts []struct {
				Text *string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		TaskType string `json:"taskType"`
		Title    string `json:"title"`
		Dims     int    `json:"outputDimensionality"`
	}
	var reqs []request
	if batch {
		var b struct {
			Requests []request `json:"requests"`
		}
		if err := json.Unmarshal(ex.body, &b); err != nil || len(b.Requests) == 0 {
			fail("* BatchEmbedContentsRequest.requests: requests is required")
			return
		}
		if len(b.Requests) > 100 {
			fail("* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch")
			return
		}
		reqs = b.Requests
	} else {
		var r request
		if err := json.Unmarshal(ex.body, &r); err != nil {
			fail("Invalid JSON payload received.")
			return
		}
		reqs = []request{r}
	}
	var sb bytes.Buffer
	if batch {
		sb.WriteString(`{"embeddings":[`)
	}
	for i, r := range reqs {
		if batch && r.Model != "models/"+c.model {
			fail("Model name in the request (%s) does not match the model in the URL (models/%s).", r.Model, c.model)
			return
		}
		if r.Content == nil || len(r.Content.Parts) == 0 {
			fail("* EmbedContentRequest.content: contents is not specified")
			return
		}
		var texts []string
		for _, p := range r.Content.Parts {
			if p.Text == nil {
				fail("* EmbedContentRequest.content.parts: only text parts are embedded")
				return
			}
			texts = append(texts, *p.Text)
		}
		n := EmbedDims(c.model)
		if r.Dims != 0 {
			if r.Dims < 1 || r.Dims > n {
				fail("* EmbedContentRequest.output_dimensionality: must be from 1 to %d", n)
				return
			}
			n = r.Dims
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		if batch {
			sb.WriteString(`{"values":`)
		} else {
			sb.WriteString(`{"embedding":{"values":`)
		}
		writeVector(&sb, Vector(ex.vendor, c.model, strings.Join(texts, " "), n))
		if batch {
			sb.WriteByte('}')
		} else {
			sb.WriteString(`}}`)
		}
	}
	if batch {
		sb.WriteString(`]}`)
	}
	ex.writeJSON(sb.Bytes())
}

// base64Floats is OpenAI's base64 encoding_format: little-endian float32s.
func base64Floats(v []float64) string {
	buf := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(x)))
	}
	return base64.StdEncoding.EncodeToString(buf)
}
