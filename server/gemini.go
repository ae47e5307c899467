package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/embed"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/shape/gemini"
	"github.com/gwlabs/gateway/sse"
)

// geminiPath reports whether p is one of the G shape's model paths:
// anything under /v1beta/models, and /v1/models/{model}:{method} (the
// /v1 alias; a plain /v1/models/{id} stays the OpenAI and Anthropic
// model endpoint).
func geminiPath(r *http.Request) bool {
	p := r.URL.Path
	if p == "/v1beta/models" || strings.HasPrefix(p, "/v1beta/models/") {
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/v1/models/"); ok && strings.Contains(rest, ":") {
		return true
	}
	// GET /v1/models with Google's key or paging is Google's list.
	return p == "/v1/models" && (r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key") || r.URL.Query().Has("pageToken") || r.URL.Query().Has("pageSize"))
}

// gemini serves shape G: generateContent, streamGenerateContent,
// countTokens, and the model list and model get in Google's shape.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1beta/models" || r.URL.Path == "/v1/models" {
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.geminiModels(w, r, "")
		}
		return
	}
	model, method, _ := gemini.SplitPath(r.URL.Path)
	switch method {
	case "":
		if allow(w, r, s.cfg.Now(), http.MethodGet) {
			s.geminiModels(w, r, model)
		}
	case gemini.MethodGenerate, gemini.MethodStream:
		if method == gemini.MethodStream && r.URL.Query().Get("alt") != "sse" {
			// Google's default stream is one JSON array: the server's
			// stream paths write SSE, re-framed here.
			aw := &geminiArrayWriter{ResponseWriter: w}
			defer aw.close()
			w = aw
		}
		s.life.Serve(w, r, gShape)
	case gemini.MethodCountTokens:
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.geminiCount(w, r, model)
		}
	case embed.MethodEmbed, embed.MethodBatchEmbed:
		if allow(w, r, s.cfg.Now(), http.MethodPost) {
			s.geminiEmbed(w, r, model, method == embed.MethodBatchEmbed)
		}
	default:
		rid := id.New("req_", s.cfg.Now())
		w.Header().Set(HeaderRequestID, rid)
		writeError(w, gShape, rid, gw.Errorf(gw.CodeNotFound, "no such method: %s; the gateway serves generateContent, streamGenerateContent, countTokens, embedContent and batchEmbedContents", strconv.Quote(method)))
	}
}

// geminiModels serves GET /v1beta/models (paged with pageSize and
// pageToken) and GET /v1beta/models/{model} in Google's shape, from the
// catalog, for the caller's key.
func (s *Server) geminiModels(w http.ResponseWriter, r *http.Request, model string) {
	rid := id.New("req_", s.cfg.Now())
	w.Header().Set(HeaderRequestID, rid)
	if s.cfg.Gateway == nil || s.cfg.Catalog == nil {
		writeError(w, gShape, rid, gw.Errorf(gw.CodeNotFound, "the model list is not served on this gateway"))
		return
	}
	p, err := s.cfg.Gateway.Authenticate(r.Context(), gShape.Credential(r))
	if err != nil {
		writeError(w, gShape, rid, gw.AsError(err))
		return
	}
	c := s.cfg.Catalog.For(p.Models)
	if model != "" {
		m, found := c.Lookup(model)
		if !found {
			writeError(w, gShape, rid, gw.Errorf(gw.CodeNotFound, "model %q is not available to this key on this gateway; GET /v1beta/models lists the models you can use", model))
			return
		}
		writeJSON(w, http.StatusOK, gemini.NewModel(m.ID, m.ContextWindow, m.MaxOutputTokens))
		return
	}
	q := r.URL.Query()
	size := 0
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, gShape, rid, gw.Errorf(gw.CodeInvalidRequest, "pageSize must be a non-negative integer"))
			return
		}
		size = n
	}
	all := c.Models()
	ms := make([]gemini.Model, 0, len(all))
	for _, m := range all {
		ms = append(ms, gemini.NewModel(m.ID, m.ContextWindow, m.MaxOutputTokens))
	}
	page, ok := gemini.Page(ms, size, q.Get("pageToken"))
	if !ok {
		writeError(w, gShape, rid, gw.Errorf(gw.CodeInvalidRequest, "pageToken is not one this gateway gave"))
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// geminiCount serves :countTokens in Google's shape, governed as
// /v1/messages/count_tokens is (key, allow list, count rate limit, guard)
// and never billed: google/ asks Gemini's countTokens with the caller's
// request; a vendor with a count endpoint of its own (Anthropic) gets the
// request mapped; the others get the gateway's estimate.
func (s *Server) geminiCount(w http.ResponseWriter, r *http.Request, model string) {
	rid := id.New("req_", s.cfg.Now())
	w.Header().Set(HeaderRequestID, rid)
	fail := func(err error) { writeError(w, gShape, rid, gw.AsError(err)) }
	gwy := s.cfg.Gateway
	principal, body, done, err := s.countIntake(w, r, gShape)
	defer done()
	if err != nil {
		fail(err)
		return
	}
	// {"contents":[...]} or {"generateContentRequest":{...}}.
	gb := body
	if inner := rawjson.Get(body, "generateContentRequest"); inner != nil {
		if gb, err = rawjson.Delete(inner, "model"); err != nil {
			fail(gw.Errorf(gw.CodeInvalidRequest, "generateContentRequest must be a JSON object"))
			return
		}
	}
	target, err := route.Parse(model)
	if err != nil {
		fail(err)
		return
	}
	if !s.allowCount(w, r, principal, target, fail) {
		return
	}
	g, err := gemini.Parse(gb)
	if err != nil {
		fail(err)
		return
	}
	if err := gwy.Screen(r.Context(), proxy.Inbound{RequestID: rid, Endpoint: gw.ShapeG, Principal: principal, Body: gb, Header: r.Header,
		Received: s.cfg.Now(), Vendor: target.Vendor, Model: target.Model, Text: g.Text}); err != nil {
		fail(err)
		return
	}
	p, ok := gwy.Provider(target.Vendor)
	if !ok {
		fail(gw.Errorf(gw.CodeVendorUnavailable, "%s is not configured on this gateway", target.Vendor))
		return
	}
	c, canCount := p.(counter)
	var n int64
	how := "vendor"
	switch codec, isCodec := p.(gw.Codec); {
	case canCount && p.Shape() == gw.ShapeG:
		n, err = c.CountTokens(countScope(r.Context(), principal), target.Model, gb)
	case canCount && isCodec:
		if err = g.Mappable(); err == nil {
			req := g.Canonical
			req.Model = target.Model
			if req.MaxTokens == nil {
				one := 1
				req.MaxTokens = &one
			}
			var vb []byte
			if vb, err = codec.EncodeRequest(req); err == nil {
				n, err = c.CountTokens(countScope(r.Context(), principal), target.Model, vb)
			}
		}
	default:
		how = "estimate"
		n, err = s.estimateTokens(g.Canonical)
	}
	if err != nil {
		fail(err)
		return
	}
	w.Header().Set(HeaderTokenCount, how)
	writeJSON(w, http.StatusOK, map[string]int64{"totalTokens": n})
}

// geminiArrayWriter re-frames a stream written as SSE (the relayed
// vendor's own events, or the G encoder's) as Google's default JSON-array
// stream, for a streamGenerateContent call without alt=sse. Anything but
// a 200 event stream (an error answered before the stream) passes
// unchanged.
type geminiArrayWriter struct {
	http.ResponseWriter
	stream bool
	wrote  bool
	buf    []byte
	out    []byte
}

func (a *geminiArrayWriter) WriteHeader(code int) {
	h := a.Header()
	if code == http.StatusOK && strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		a.stream = true
		h.Set("Content-Type", "application/json; charset=UTF-8")
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *geminiArrayWriter) Write(p []byte) (int, error) {
	if !a.stream {
		return a.ResponseWriter.Write(p)
	}
	a.buf = append(a.buf, p...)
	a.out = a.out[:0]
	rd := sse.NewReader(bytes.NewReader(a.buf))
	used := 0
	for rd.Next() {
		ev := rd.Event()
		if !bytes.HasSuffix(ev.Raw, []byte("\n\n")) && !bytes.HasSuffix(ev.Raw, []byte("\r\n\r\n")) && !bytes.HasSuffix(ev.Raw, []byte("\r\r")) {
			break // an event not yet whole
		}
		used += len(ev.Raw)
		if d := bytes.TrimSpace(ev.Data); len(d) > 0 && string(d) != "[DONE]" {
			a.out = gemini.AppendArrayElement(a.out, d, !a.wrote)
			a.wrote = true
		}
	}
	a.buf = append(a.buf[:0], a.buf[used:]...)
	if len(a.out) > 0 {
		if _, err := a.ResponseWriter.Write(a.out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// close ends the array.
func (a *geminiArrayWriter) close() {
	if a.stream {
		_, _ = a.ResponseWriter.Write(gemini.AppendArrayEnd(nil, !a.wrote))
	}
}

func (a *geminiArrayWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
