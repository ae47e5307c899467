package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MockConfig shapes the mock vendor's answers.
type MockConfig struct {
	Latency time.Duration // before the response headers
	Chunks  int           // text pieces of an answer (SSE events of a stream)
	Spacing time.Duration // between two stream events
	// FailModel and FailPercent: requests for FailModel whose body
	// hashes into the first FailPercent of 100 buckets answer 503 (the
	// same request's retries too, so it goes on to its fallback).
	FailModel   string
	FailPercent int
}

// Mock is a fast fake vendor speaking the OpenAI Chat Completions,
// Anthropic Messages and Gemini generateContent wire formats, JSON and
// SSE. Its answers carry usage, so a gateway in front of it bills them.
// The configuration can change between runs (Set).
type Mock struct {
	cfg atomic.Pointer[MockConfig]
	// Failed counts the 503 answers (FailPercent); Served the others,
	// Messages those of them on /v1/messages (the fallback of a
	// -fallback run).
	Failed, Served, Messages atomic.Int64
	// embedCache keeps the embeddings answers by [inputs, dimensions].
	embedCache sync.Map
}

// NewMock returns a mock with cfg.
func NewMock(cfg MockConfig) *Mock {
	m := &Mock{}
	m.Set(cfg)
	return m
}

// Set replaces the configuration for the following requests.
func (m *Mock) Set(cfg MockConfig) {
	cfg.Chunks = max(cfg.Chunks, 1)
	m.cfg.Store(&cfg)
}

// ServeHTTP answers POST /v1/chat/completions and /v1/responses (OpenAI), POST /v1/messages
// (Anthropic) and POST /v1beta/models/{model}:generateContent or
// :streamGenerateContent (Gemini).
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cfg := *m.cfg.Load()
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	_ = json.Unmarshal(body, &req)
	if cfg.Latency > 0 {
		time.Sleep(cfg.Latency)
	}
	if cfg.FailPercent > 0 && req.Model == cfg.FailModel {
		h := fnv.New32a()
		h.Write(body)
		if int(h.Sum32()%100) < cfg.FailPercent {
			m.Failed.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"message":"overloaded (mock)","type":"server_error"}}`))
			return
		}
	}
	m.Served.Add(1)
	if r.URL.Path == "/v1/messages" {
		m.Messages.Add(1)
	}
	p := r.URL.Path
	switch {
	case p == "/v1/chat/completions":
		if req.Stream {
			m.openAIStream(w, req.Model, cfg)
		} else {
			writeJSON(w, openAIJSON(req.Model, cfg.Chunks))
		}
	case p == "/v1/embeddings":
		writeJSON(w, m.embeddings(body))
	case p == "/v1/responses":
		if req.Stream {
			m.responsesStream(w, req.Model, cfg)
		} else {
			writeJSON(w, responsesJSON(req.Model, cfg.Chunks))
		}
	case p == "/v1/messages":
		if req.Stream {
			m.anthropicStream(w, req.Model, cfg)
		} else {
			writeJSON(w, anthropicJSON(req.Model, cfg.Chunks))
		}
	case strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":streamGenerateContent"):
		m.geminiStream(w, cfg)
	case strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":generateContent"):
		writeJSON(w, geminiJSON(cfg.Chunks))
	default:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
	}
}

const piece = "word "

func text(chunks int) string { return strings.Repeat(piece, chunks) }

func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func openAIJSON(model string, chunks int) []byte {
	return fmt.Appendf(nil, `{"id":"chatcmpl-mock","object":"chat.completion","created":1700000000,"model":%q,`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`, model, text(chunks), chunks, 12+chunks)
}

func anthropicJSON(model string, chunks int) []byte {
	return fmt.Appendf(nil, `{"id":"msg_mock","type":"message","role":"assistant","model":%q,`+
		`"content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,`+
		`"usage":{"input_tokens":12,"output_tokens":%d}}`, model, text(chunks), chunks)
}

func geminiJSON(chunks int) []byte {
	return fmt.Appendf(nil, `{"candidates":[{"content":{"role":"model","parts":[{"text":%q}]},"finishReason":"STOP","index":0}],`+
		`"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":%d,"totalTokenCount":%d},"modelVersion":"mock"}`,
		text(chunks), chunks, 12+chunks)
}

// sse writes events with the configured spacing, flushing each.
type sse struct {
	w     http.ResponseWriter
	f     http.Flusher
	space time.Duration
	n     int
	buf   bytes.Buffer
}

func newSSE(w http.ResponseWriter, space time.Duration) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f, space: space}
}

// event writes one event; name may be empty.
func (s *sse) event(name string, data []byte) {
	if s.n > 0 && s.space > 0 {
		time.Sleep(s.space)
	}
	s.n++
	s.buf.Reset()
	if name != "" {
		s.buf.WriteString("event: " + name + "\n")
	}
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	s.buf.WriteString("\n\n")
	s.w.Write(s.buf.Bytes())
	if s.f != nil {
		s.f.Flush()
	}
}

func (m *Mock) openAIStream(w http.ResponseWriter, model string, cfg MockConfig) {
	s := newSSE(w, cfg.Spacing)
	head := `{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":` + strconv.Quote(model)
	for i := range cfg.Chunks {
		delta := `{"content":"` + piece + `"}`
		if i == 0 {
			delta = `{"role":"assistant","content":"` + piece + `"}`
		}
		s.event("", []byte(head+`,"choices":[{"index":0,"delta":`+delta+`,"finish_reason":null}]}`))
	}
	s.event("", []byte(head+`,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	s.event("", fmt.Appendf(nil, `%s,"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`, head, cfg.Chunks, 12+cfg.Chunks))
	s.event("", []byte("[DONE]"))
}

func (m *Mock) anthropicStream(w http.ResponseWriter, model string, cfg MockConfig) {
	s := newSSE(w, cfg.Spacing)
	s.event("message_start", fmt.Appendf(nil, `{"type":"message_start","message":{"id":"msg_mock","type":"message","role":"assistant","model":%q,`+
		`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`, model))
	s.event("content_block_start", []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	for range cfg.Chunks {
		s.event("content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+piece+`"}}`))
	}
	s.event("content_block_stop", []byte(`{"type":"content_block_stop","index":0}`))
	s.event("message_delta", fmt.Appendf(nil, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, cfg.Chunks))
	s.event("message_stop", []byte(`{"type":"message_stop"}`))
}

func (m *Mock) geminiStream(w http.ResponseWriter, cfg MockConfig) {
	s := newSSE(w, cfg.Spacing)
	for i := range cfg.Chunks {
		finish := ""
		if i == cfg.Chunks-1 {
			finish = `,"finishReason":"STOP"`
		}
		s.event("", fmt.Appendf(nil, `{"candidates":[{"content":{"role":"model","parts":[{"text":"%s"}]}%s,"index":0}],`+
			`"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":%d,"totalTokenCount":%d},"modelVersion":"mock"}`,
			piece, finish, i+1, 13+i))
	}
}

func responsesJSON(model string, chunks int) []byte {
	return fmt.Appendf(nil, `{"id":"resp_mock","object":"response","created_at":1700000000,"status":"completed","model":%q,`+
		`"output":[{"type":"message","id":"msg_mock","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}],`+
		`"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`,
		model, text(chunks), chunks, 12+chunks)
}

// responsesStream is a Responses event stream: created, the message's
// item and part, one text delta per chunk, their done events, completed.
func (m *Mock) responsesStream(w http.ResponseWriter, model string, cfg MockConfig) {
	s := newSSE(w, cfg.Spacing)
	seq := 0
	ev := func(typ, body string) {
		s.event(typ, fmt.Appendf(nil, `{"type":%q,"sequence_number":%d,%s}`, typ, seq, body))
		seq++
	}
	head := `"id":"resp_mock","object":"response","created_at":1700000000,"model":` + strconv.Quote(model)
	ev("response.created", `"response":{`+head+`,"status":"in_progress","output":[]}`)
	ev("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_mock","status":"in_progress","role":"assistant","content":[]}`)
	ev("response.content_part.added", `"item_id":"msg_mock","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
	for range cfg.Chunks {
		ev("response.output_text.delta", `"item_id":"msg_mock","output_index":0,"content_index":0,"delta":"`+piece+`"`)
	}
	t := strconv.Quote(text(cfg.Chunks))
	ev("response.output_text.done", `"item_id":"msg_mock","output_index":0,"content_index":0,"text":`+t)
	item := `{"type":"message","id":"msg_mock","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + t + `,"annotations":[]}]}`
	ev("response.output_item.done", `"output_index":0,"item":`+item)
	ev("response.completed", fmt.Sprintf(`"response":{%s,"status":"completed","output":[%s],"usage":{"input_tokens":12,"output_tokens":%d,"total_tokens":%d}}`, head, item, cfg.Chunks, 12+cfg.Chunks))
}

// embeddings answers an OpenAI embeddings request: one vector of the
// asked dimensions (default 1536) per input, the same bytes for the same
// count and length (kept).
func (m *Mock) embeddings(body []byte) []byte {
	var req struct {
		Input      []json.RawMessage `json:"input"`
		Dimensions int               `json:"dimensions"`
	}
	_ = json.Unmarshal(body, &req)
	n, d := max(len(req.Input), 1), req.Dimensions
	if d <= 0 || d > 4096 {
		d = 1536
	}
	key := [2]int{n, d}
	if b, ok := m.embedCache.Load(key); ok {
		return b.([]byte)
	}
	var sb strings.Builder
	sb.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"object":"embedding","index":%d,"embedding":[`, i)
		for j := range d {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%g", float64((i*31+j*17)%2049-1024)/1024)
		}
		sb.WriteString(`]}`)
	}
	fmt.Fprintf(&sb, `],"model":"text-embedding-3-small","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, 10*n, 10*n)
	b := []byte(sb.String())
	m.embedCache.Store(key, b)
	return b
}
