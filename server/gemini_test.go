package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGeminiPath(t *testing.T) {
	for _, c := range []struct {
		method, target string
		hdr            string
		want           bool
	}{
		{"POST", "/v1beta/models/openai/gpt-6-sol:generateContent", "", true},
		{"GET", "/v1beta/models", "", true},
		{"POST", "/v1/models/openai/gpt-6-sol:streamGenerateContent?alt=sse", "", true},
		{"GET", "/v1/models/openai/gpt-6-sol", "", false}, // OpenAI's model get
		{"GET", "/v1/models", "", false},
		{"GET", "/v1/models", "k", true},
		{"GET", "/v1/models?pageSize=5", "", true},
		{"POST", "/v1/chat/completions", "k", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.hdr != "" {
			r.Header.Set("X-Goog-Api-Key", c.hdr)
		}
		if got := geminiPath(r); got != c.want {
			t.Errorf("%s %s (key %q): %v", c.method, c.target, c.hdr, got)
		}
	}
	r := httptest.NewRequest("POST", "/v1beta/models/anthropic/claude-sonnet-5-5:streamGenerateContent", nil)
	if n := gShape.SpanName(r); n != "POST /v1beta/models/{model}:streamGenerateContent" {
		t.Errorf("span name %q", n)
	}
}

// TestGeminiArrayWriter: SSE written in any pieces comes out as one JSON
// array; an error answered before the stream passes unchanged.
func TestGeminiArrayWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	aw := &geminiArrayWriter{ResponseWriter: rec}
	aw.Header().Set("Content-Type", "text/event-stream")
	aw.WriteHeader(http.StatusOK)
	stream := "data: {\"a\":1}\n\ndata: {\"b\":\r\ndata: 2}\n\n: comment\n\ndata: {\"error\":{\"code\":503}}\n\n"
	for i := 0; i < len(stream); i += 7 {
		_, _ = aw.Write([]byte(stream[i:min(i+7, len(stream))]))
	}
	aw.close()
	var recs []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &recs); err != nil || len(recs) != 3 {
		t.Fatalf("%v: %q", err, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("content-type %q", ct)
	}

	rec = httptest.NewRecorder()
	aw = &geminiArrayWriter{ResponseWriter: rec}
	aw.Header().Set("Content-Type", "application/json")
	aw.WriteHeader(http.StatusBadRequest)
	_, _ = aw.Write([]byte(`{"error":{"code":400}}`))
	aw.close()
	if rec.Body.String() != `{"error":{"code":400}}` {
		t.Errorf("error body %q", rec.Body.String())
	}

	rec = httptest.NewRecorder()
	aw = &geminiArrayWriter{ResponseWriter: rec}
	aw.Header().Set("Content-Type", "text/event-stream")
	aw.WriteHeader(http.StatusOK)
	aw.close()
	if rec.Body.String() != "[]" {
		t.Errorf("empty stream %q", rec.Body.String())
	}
}
