package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/chat"
	"github.com/gwlabs/gateway/embed"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/runs"
	"github.com/gwlabs/gateway/shape"
	openaishape "github.com/gwlabs/gateway/shape/openai"
)

// embedVendors are the prefixes whose vendors serve embeddings.
var embedVendors = []string{"openai", "google", "mistral", "together", "fireworks", "openrouter"}

// embedder is a provider that serves embeddings (provider/openai and
// provider/google): Embed posts one vendor body for model;
// EmbedDimensionsField names the vector length in the vendor's body.
type embedder interface {
	Embed(ctx context.Context, model string, body []byte, received time.Time) (*gw.Upstream, error)
	EmbedDimensionsField() string
}

// maxEmbedAnswerBytes bounds one vendor answer of vectors (2048 inputs of
// 3072 floats as JSON text is about 130 MB).
const maxEmbedAnswerBytes = 256 << 20

// embedCall is one embeddings request as both shapes hand it over.
type embedCall struct {
	sh    shape.Shape
	parse func(body []byte) (*embed.Request, error)
	// model is the path's model (G), "" when the body names it.
	model  string
	answer func(req *embed.Request, vecs []embed.Vector, tokens int64) []byte
}

// embeddings serves POST /v1/embeddings in OpenAI's shape.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.serveEmbed(w, r, embedCall{sh: plain, parse: embed.ParseOpenAI,
		answer: func(req *embed.Request, vecs []embed.Vector, tokens int64) []byte {
			return embed.OpenAIAnswer(req.Model, vecs, tokens, req.Base64)
		}})
}

// geminiEmbed serves Gemini's :embedContent and :batchEmbedContents for
// the path's model, answered in Gemini's shape.
func (s *Server) geminiEmbed(w http.ResponseWriter, r *http.Request, model string, batch bool) {
	s.serveEmbed(w, r, embedCall{sh: gShape, model: model,
		parse: func(b []byte) (*embed.Request, error) { return embed.ParseGemini(b, model, batch) },
		answer: func(_ *embed.Request, vecs []embed.Vector, _ int64) []byte {
			return embed.GeminiAnswer(vecs, batch)
		}})
}

// serveEmbed runs one embeddings request: the caller's key, the body
// (within MaxBodyBytes and the in-flight bounds), the parse, the model
// (an embedding model of a prefix that embeds), proxy.BeginEmbed (allow
// list, limits, hold, run), the vendor calls (Gemini's split in calls of
// at most embed.MaxGeminiBatch), the vectors checked and joined in input
// order, then Finish (settled at the vendor's usage, or the gateway's
// count noted usage_missing) and the answer with the charge header.
// The guard does not score embedding inputs (proxy.GuardEmbedding).
func (s *Server) serveEmbed(w http.ResponseWriter, r *http.Request, c embedCall) {
	start := s.cfg.Now()
	rid := id.New("req_", start)
	h := w.Header()
	h.Set(HeaderRequestID, rid)
	fail := func(err error) { writeError(w, c.sh, rid, gw.AsError(err)) }
	gwy := s.cfg.Gateway
	if gwy == nil || s.cfg.Catalog == nil {
		fail(gw.Errorf(gw.CodeNotFound, "embeddings are not served on this gateway"))
		return
	}
	ctx := r.Context()
	p, err := gwy.Authenticate(ctx, c.sh.Credential(r))
	if err != nil {
		fail(err)
		return
	}
	in := proxy.Inbound{RequestID: rid, Endpoint: proxy.EndpointEmbeddings, Principal: p, Header: r.Header, Received: start}
	refuse := func(err error) {
		gwy.Refuse(ctx, in, err)
		fail(err)
	}
	body, release, err := s.life.ReadBodyFor(w, r, s.cfg.MaxBodyBytes, p)
	defer release()
	if err != nil {
		refuse(err)
		return
	}
	req, err := c.parse(body)
	if err != nil {
		refuse(err)
		return
	}
	body = nil
	if c.model != "" {
		req.Model = c.model
	}
	t, err := route.Parse(req.Model)
	if err != nil {
		refuse(s.withSuggestion(err, p))
		return
	}
	in.Vendor, in.Model = t.Vendor, t.Model
	if in.Run, err = runs.Parse(r.Header); err != nil {
		refuse(err)
		return
	}
	dims, err := s.embedModel(t, req)
	if err != nil {
		refuse(err)
		return
	}
	prov, ok := gwy.Provider(t.Vendor)
	em, embeds := prov.(embedder)
	if !ok || !embeds {
		refuse(gw.Errorf(gw.CodeVendorUnavailable, "%s is not configured on this gateway", t.Vendor))
		return
	}
	// The vendor bodies first: a request no vendor call can carry is
	// refused before anything is held.
	var bodies [][]byte
	if t.Vendor == "google" {
		if bodies, err = embed.GeminiBodies(t.Model, req); err != nil {
			refuse(err)
			return
		}
	} else {
		bodies = [][]byte{embed.OpenAIBody(t.Model, req, em.EmbedDimensionsField())}
	}
	tokens := embed.Count(req.Inputs)
	x, err := gwy.BeginEmbed(ctx, in, tokens, embedBound(req))
	if d := x.Limit; d.RequestsLimit > 0 {
		h.Set(chat.HeaderRateLimit, strconv.FormatInt(d.RequestsLimit, 10))
		h.Set(chat.HeaderRateRemaining, strconv.FormatInt(max(d.RequestsRemaining, 0), 10))
	}
	if err != nil {
		fail(err)
		return
	}
	h.Set(HeaderVendor, t.Vendor)
	h.Set(HeaderModel, t.Vendor+"/"+t.Model)
	vecs, usage, ttfb, err := s.callEmbed(countScope(ctx, p), em, t, req, bodies, dims, start)
	h.Set(HeaderAttempts, strconv.Itoa(len(bodies)))
	if err != nil {
		status := gw.AsError(err).Code.Status()
		_, _ = x.Finish(ctx, proxy.Outcome{Status: status, Err: err, TTFB: ttfb})
		fail(err)
		return
	}
	note := ""
	if !usage.Reported {
		// Gemini's embed methods report no usage, and a vendor may send
		// 0: the gateway's own count, never free.
		usage = gw.Usage{InputTokens: tokens}
		note = "usage_missing"
	}
	charge, err := x.Finish(ctx, proxy.Outcome{Status: http.StatusOK, Usage: usage, Success: true, TTFB: ttfb, Note: note})
	if err != nil {
		fail(&gw.Error{Code: gw.CodeInternal, Message: "the answer could not be billed; it was not delivered", Err: err})
		return
	}
	out := c.answer(req, vecs, usage.InputTokens)
	h.Set("Content-Type", "application/json")
	h.Set(HeaderCharge, charge.CentsString())
	runs.SetHeaders(h, x.Run())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// embedModel checks that t embeds and that the length asked fits it, and
// returns the length every vector must have (0: whatever the vendor's
// model gives, the same for all; only on openrouter/ without dimensions).
func (s *Server) embedModel(t route.Target, req *embed.Request) (int, error) {
	if !slices.Contains(embedVendors, t.Vendor) {
		return 0, s.notEmbedding(t, fmt.Sprintf("%s/ has no embeddings", t.Vendor))
	}
	if t.Vendor == "openrouter" {
		// Any model of OpenRouter's: the aggregator says whether it embeds.
		return req.Dimensions, nil
	}
	m, ok := s.cfg.Catalog.Embedding(t.Vendor + "/" + t.Model)
	if !ok {
		why := fmt.Sprintf("%s is not an embedding model", strconv.Quote(t.Vendor+"/"+t.Model))
		return 0, s.notEmbedding(t, why)
	}
	switch d := int64(req.Dimensions); {
	case d == 0:
		return int(m.Dimensions), nil
	case d > m.Dimensions:
		return 0, embedBad("%s makes vectors of at most %d dimensions; %d were asked", m.ID, m.Dimensions, d)
	case d != m.Dimensions && !m.FlexibleDimensions:
		return 0, embedBad("%s makes vectors of %d dimensions only; ask for %d or leave the length out", m.ID, m.Dimensions, m.Dimensions)
	}
	return req.Dimensions, nil
}

func embedBad(format string, a ...any) error {
	e := gw.Errorf(gw.CodeInvalidRequest, format, a...)
	e.NoRetry = true
	return e
}

// notEmbedding is the 400 of a model that does not embed: it names the
// prefixes and the models that do.
func (s *Server) notEmbedding(t route.Target, why string) error {
	prefixes := make([]string, len(embedVendors))
	for i, v := range embedVendors {
		prefixes[i] = v + "/"
	}
	return embedBad("%s; embeddings are served for the prefixes %s (openrouter/ for any of OpenRouter's embedding models), and these models embed: %s",
		why, strings.Join(prefixes, ", "), strings.Join(s.cfg.Catalog.Embeddings(), ", "))
}

// embedBound is the most input tokens a vendor may bill for req: a token
// is at least one byte of text, and a token array counts its ids.
func embedBound(req *embed.Request) int64 {
	var n int64
	for _, in := range req.Inputs {
		n += int64(len(in.Text)) + int64(len(in.Title)) + int64(len(in.Tokens))
	}
	return n
}

// callEmbed makes the vendor calls in order and joins their vectors:
// one per input, in input order, each of dims values. usage is the
// vendor's report summed over the calls, Reported only when every call
// reported a count.
func (s *Server) callEmbed(ctx context.Context, em embedder, t route.Target, req *embed.Request, bodies [][]byte, dims int, start time.Time) (vecs []embed.Vector, usage gw.Usage, ttfb time.Duration, err error) {
	vecs = make([]embed.Vector, 0, len(req.Inputs))
	usage.Reported = true
	for i, b := range bodies {
		n := len(req.Inputs)
		if t.Vendor == "google" {
			n = min(embed.MaxGeminiBatch, len(req.Inputs)-i*embed.MaxGeminiBatch)
		}
		up, err := em.Embed(ctx, t.Model, b, start)
		if err != nil {
			return nil, gw.Usage{}, ttfb, err
		}
		if i == 0 {
			ttfb = s.cfg.Now().Sub(start)
		}
		raw, err := io.ReadAll(io.LimitReader(up.Body, maxEmbedAnswerBytes+1))
		up.Body.Close()
		if err != nil {
			return nil, gw.Usage{}, ttfb, &gw.Error{Code: gw.CodeUpstream, Message: "the vendor's answer was cut", Err: err}
		}
		if len(raw) > maxEmbedAnswerBytes {
			return nil, gw.Usage{}, ttfb, gw.Errorf(gw.CodeUpstream, "the vendor's answer is larger than %d bytes", maxEmbedAnswerBytes)
		}
		if t.Vendor == "google" {
			v, err := embed.DecodeGemini(raw, n, dims)
			if err != nil {
				return nil, gw.Usage{}, ttfb, err
			}
			vecs = append(vecs, v...)
			usage.Reported = false // Gemini's embed methods report none
			continue
		}
		v, u, err := embed.DecodeOpenAI(raw, n, dims)
		if err != nil {
			return nil, gw.Usage{}, ttfb, err
		}
		vecs = append(vecs, v...)
		usage.InputTokens += u.Tokens
		usage.Reported = usage.Reported && u.Reported
		if t.Vendor == "openrouter" {
			if ru, err := openaishape.UsageFromBody(raw); err == nil {
				usage.ReportedCost, usage.HasReportedCost, usage.ReportedCostUSD = ru.ReportedCost, ru.HasReportedCost, ru.ReportedCostUSD
			}
		}
	}
	if dims == 0 && len(vecs) > 0 {
		// openrouter/ without dimensions: one length for all.
		for _, v := range vecs {
			if v.Len != vecs[0].Len {
				return nil, gw.Usage{}, ttfb, gw.Errorf(gw.CodeUpstream, "the vendor sent vectors of different lengths")
			}
		}
	}
	if !usage.Reported {
		usage = gw.Usage{}
	}
	return vecs, usage, ttfb, nil
}
