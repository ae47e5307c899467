package fakevendor

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// exchange is one request being answered.
type exchange struct {
	srv    *Server
	w      http.ResponseWriter
	r      *http.Request
	vendor string
	path   string
	body   []byte

	status   int  // status sent, 0 before headers
	complete bool // the whole response was written
	broken   bool // the fake cut the connection on purpose
}

// chatPath is the chat completions path under each C vendor's prefix.
func chatPath(vendor string) string {
	p, _ := basePath(vendor)
	return p + "/chat/completions"
}

// serve routes, authenticates, validates and answers one request; see the
// package documentation for the order in which directives apply.
func (ex *exchange) serve() {
	if ex.vendor == "" {
		ex.writePlain(http.StatusNotFound, "fake vendor: no vendor route for this path")
		return
	}
	c := &call{vendor: ex.vendor, body: ex.body}
	fam := familyOf(ex.vendor)
	switch fam {
	case famChat:
		if ex.path == embedPath(ex.vendor) && ex.vendor != "groq" && ex.vendor != "deepseek" {
			ex.serveEmbeddings()
			return
		}
		if ex.vendor == "openai" && responsesPath(ex.path) {
			ex.serveResponses()
			return
		}
		if ex.path != chatPath(ex.vendor) && !(ex.vendor == "deepseek" && ex.path == "/v1/chat/completions") {
			ex.writePlain(http.StatusNotFound, "fake vendor: unknown path")
			return
		}
	case famMessages:
		if ex.path == "/v1/messages/count_tokens" {
			ex.countTokens(c)
			return
		}
		if ex.path != "/v1/messages" {
			ex.writePlain(http.StatusNotFound, "fake vendor: unknown path")
			return
		}
	case famGemini:
		rest, ok := strings.CutPrefix(ex.path, "/v1beta/models/")
		i := strings.LastIndexByte(rest, ':')
		if !ok || i <= 0 {
			ex.writePlain(http.StatusNotFound, "fake vendor: unknown path")
			return
		}
		c.model = rest[:i]
		switch rest[i+1:] {
		case "countTokens":
			ex.countTokens(c)
			return
		case "embedContent", "batchEmbedContents":
			ex.serveGeminiEmbed(c, rest[i+1:] == "batchEmbedContents")
			return
		case "generateContent":
		case "streamGenerateContent":
			if ex.r.URL.Query().Get("alt") != "sse" {
				ex.writeError(newVendorError(c, ex.vendor, 400, "fake vendor: streamGenerateContent is served only with alt=sse", 0))
				return
			}
			c.stream = true
		default:
			ex.writeError(newVendorError(c, ex.vendor, 404, "Method not found.", 0))
			return
		}
	}
	if !ex.admit() {
		return
	}
	var thread *threadTurn
	if fam == famMessages {
		var verr *vendorError
		if thread, verr = ex.srv.threads.open(c); verr != nil {
			ex.writeError(verr)
			return
		}
	}
	var err error
	switch fam {
	case famChat:
		err = decodeChat(c)
	case famMessages:
		err = decodeMessages(c)
	case famGemini:
		err = decodeGemini(c)
	}
	c.seed = sha256.Sum256([]byte(c.vendor + "\x00" + c.model + "\x00" + string(c.body)))
	if err == nil {
		c.dirs, err = parseDirectives(c.userText)
		if err != nil {
			err = bad("fake vendor: %v", err)
		}
	}
	if err != nil {
		br := &badRequest{status: http.StatusBadRequest, msg: err.Error()}
		errors.As(err, &br)
		ex.writeError(newVendorError(c, ex.vendor, br.status, br.msg, 0))
		return
	}
	if ex.vendor == "openrouter" && !strings.Contains(c.model, "/") {
		ex.writeError(newVendorError(c, ex.vendor, 400, c.model+" is not a valid model ID", 0))
		return
	}
	if strings.Contains(c.model, "missing") {
		ex.writeError(modelNotFound(c))
		return
	}
	if d := &c.dirs; d.on != "" && d.on != c.vendor && d.on != c.model && d.on != c.vendor+"/"+c.model {
		d.clearFaults() // scripted for another vendor or model
	}
	d := c.dirs
	ctx := ex.r.Context()
	if d.reset {
		ex.resetConn()
		return
	}
	if d.silent {
		ex.w.Header().Set("Content-Type", "application/json")
		if c.stream {
			ex.w.Header().Set("Content-Type", "text/event-stream")
		}
		ex.status = http.StatusOK
		ex.w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(ex.w).Flush()
		ex.wait(ctx, -1)
		return
	}
	if d.hang {
		ex.wait(ctx, -1)
		return
	}
	if d.slow > 0 && !ex.wait(ctx, d.slow) {
		return
	}
	if d.failFirst > 0 && ex.srv.failFirst(c.vendor+"\x00"+strings.Join(d.raw, ""), d.failFirst) {
		ex.writeError(withRetryMs(newVendorError(c, ex.vendor, d.failStatus, defaultMessage(d.failStatus), d.retry), d.retryMs))
		return
	}
	if d.status != 0 {
		ex.writeError(withRetryMs(newVendorError(c, ex.vendor, d.status, defaultMessage(d.status), d.retry), d.retryMs))
		return
	}
	if on, directive := ex.srv.replyModel(); on {
		modelReply(c, directive)
	}
	r := plan(c)
	if pc := ex.srv.prefixCache(); pc != nil && !d.cache {
		pc.apply(c, ex.credential(), &r.usage)
	}
	if thread != nil {
		ex.srv.threads.save(thread, r)
	}
	ex.srv.ledger.logServed(servedUsage(c, r))
	if !c.stream {
		ex.writeBody(c, r)
		return
	}
	ex.writeStream(ctx, c, streamFrames(c, r), streamError(c, r))
}

// credential is the caller's API key, whichever header carried it.
func (ex *exchange) credential() string {
	h := ex.r.Header
	return h.Get("Authorization") + h.Get("X-Api-Key") + h.Get("X-Goog-Api-Key")
}

// checkAuth checks the vendor's credentials header.
func (ex *exchange) checkAuth() *vendorError {
	h := ex.r.Header
	want := APIKey(ex.vendor)
	var got string
	switch ex.vendor {
	case "anthropic":
		got = h.Get("X-Api-Key")
	case "google":
		got = h.Get("X-Goog-Api-Key")
		if got == "" {
			got = ex.r.URL.Query().Get("key")
		}
	default:
		a := h.Get("Authorization")
		if t, ok := strings.CutPrefix(a, "Bearer "); ok {
			got = strings.TrimSpace(t)
		}
	}
	if got != want {
		return authError(ex.vendor, got == "")
	}
	if ex.vendor == "anthropic" && h.Get("Anthropic-Version") == "" {
		return newVendorError(nil, "anthropic", 400, "anthropic-version: header is required", 0)
	}
	return nil
}

// wait sleeps for d (forever when d < 0) unless the client goes away. It
// reports whether the full time passed. When the Server closes meanwhile
// it aborts the handler (the connection is dropped).
func (ex *exchange) wait(ctx context.Context, d time.Duration) bool {
	var tc <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-tc:
		return true
	case <-ctx.Done():
		return false
	case <-ex.srv.done:
		// Closing: drop the connection rather than let net/http finish
		// an empty response the client would take for an answer.
		panic(http.ErrAbortHandler)
	}
}

// resetConn drops the connection with a TCP reset, answering nothing.
func (ex *exchange) resetConn() {
	ex.status = 0
	conn, _, err := http.NewResponseController(ex.w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
	ex.complete = true
}

// withRetryMs adds retry-after-ms (and a Retry-After of whole seconds,
// rounded up) when ms >= 0.
func withRetryMs(e *vendorError, ms int) *vendorError {
	if ms >= 0 {
		e.header.Set("Retry-After-Ms", strconv.Itoa(ms))
		e.header.Set("Retry-After", strconv.Itoa((ms+999)/1000))
	}
	return e
}

func (ex *exchange) writePlain(status int, msg string) {
	ex.status = status
	http.Error(ex.w, msg, status)
	ex.complete = true
}

func (ex *exchange) writeError(e *vendorError) {
	h := ex.w.Header()
	for k, v := range e.header {
		h[k] = v
	}
	ex.setIDHeaders(nil)
	ex.status = e.status
	ex.w.WriteHeader(e.status)
	_, err := ex.w.Write(e.body)
	ex.complete = err == nil
}

// setIDHeaders sets the vendor's request-id and rate-limit headers.
func (ex *exchange) setIDHeaders(c *call) {
	h := ex.w.Header()
	var seed [32]byte
	if c != nil {
		seed = c.seed
	}
	switch ex.vendor {
	case "anthropic":
		h.Set("Request-Id", "req_011"+idFrom(seed, "request", 21))
		h.Set("Anthropic-Ratelimit-Requests-Limit", "4000")
		h.Set("Anthropic-Ratelimit-Requests-Remaining", "3999")
		h.Set("Anthropic-Ratelimit-Requests-Reset", "2026-01-01T00:00:01Z")
	case "openai", "groq", "together", "fireworks":
		h.Set("X-Request-Id", "req_"+hexFrom(seed, "request", 32))
		h.Set("X-Ratelimit-Limit-Requests", "10000")
		h.Set("X-Ratelimit-Remaining-Requests", "9999")
		h.Set("X-Ratelimit-Reset-Requests", "6ms")
		if ex.vendor == "openai" {
			h.Set("Openai-Processing-Ms", "1")
		}
	}
}

// writeBody writes a non-stream answer.
func (ex *exchange) writeBody(c *call, r *reply) {
	var body []byte
	switch familyOf(c.vendor) {
	case famMessages:
		body = messagesBody(c, r)
	case famGemini:
		body = geminiBody(c, r)
	default:
		body = chatBody(c, r)
	}
	if c.dirs.malformed {
		body = []byte("<html><body>upstream hiccup: {\"id\": </body></html>")
	}
	h := ex.w.Header()
	h.Set("Content-Type", "application/json")
	ex.setIDHeaders(c)
	ex.status = http.StatusOK
	ex.w.WriteHeader(http.StatusOK)
	if c.vendor == "deepseek" {
		// DeepSeek writes blank keep-alive lines while a request is queued.
		if _, err := ex.w.Write([]byte("\n\n")); err != nil {
			return
		}
		_ = http.NewResponseController(ex.w).Flush()
	}
	_, err := ex.w.Write(body)
	ex.complete = err == nil
}

// admit answers a request that is not a POST (405) or fails the vendor's
// authentication, and reports whether the request may go on.
func (ex *exchange) admit() bool {
	if ex.r.Method != http.MethodPost {
		ex.writePlain(http.StatusMethodNotAllowed, "fake vendor: method not allowed")
		return false
	}
	if e := ex.checkAuth(); e != nil {
		ex.writeError(e)
		return false
	}
	return true
}

// countTokens answers Anthropic's /v1/messages/count_tokens with
// PromptTokens of the body (no directives apply).
func (ex *exchange) countTokens(c *call) {
	if !ex.admit() {
		return
	}
	if ex.vendor == "google" {
		// Gemini's countTokens: contents, or a generateContentRequest
		// (which may carry systemInstruction); answers totalTokens.
		var req struct {
			Contents []json.RawMessage `json:"contents"`
			GCR      *struct {
				Contents []json.RawMessage `json:"contents"`
			} `json:"generateContentRequest"`
		}
		if err := json.Unmarshal(c.body, &req); err != nil || (len(req.Contents) == 0 && (req.GCR == nil || len(req.GCR.Contents) == 0)) {
			ex.writeError(newVendorError(nil, ex.vendor, 400, "contents or generateContentRequest is required", 0))
			return
		}
		ex.w.Header().Set("Content-Type", "application/json")
		ex.status = http.StatusOK
		ex.w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(ex.w, `{"totalTokens":%d}`, PromptTokens(c.body))
		ex.complete = true
		return
	}
	var req struct {
		Model    string            `json:"model"`
		Messages []messagesMessage `json:"messages"`
	}
	if err := json.Unmarshal(c.body, &req); err != nil || req.Model == "" || len(req.Messages) == 0 {
		ex.writeError(newVendorError(nil, ex.vendor, 400, "model and messages are required", 0))
		return
	}
	ex.w.Header().Set("Content-Type", "application/json")
	ex.setIDHeaders(nil)
	ex.status = http.StatusOK
	ex.w.WriteHeader(http.StatusOK)
	_, err := fmt.Fprintf(ex.w, `{"input_tokens":%d}`, PromptTokens(c.body))
	ex.complete = err == nil
}
