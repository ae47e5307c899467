package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tiktoken-go/tokenizer/codec"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/chat"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/internal/reqbody"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/shape"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
)

// HeaderTokenCount says how POST /v1/messages/count_tokens counted:
// "vendor" (the vendor's own free count endpoint) or "estimate".
const HeaderTokenCount = "X-Gateway-Token-Count"

// counter is a vendor's free token-count endpoint for a body in its own
// shape (Anthropic's count_tokens, Gemini's countTokens).
type counter interface {
	CountTokens(ctx context.Context, model string, body []byte) (int64, error)
}

// countTokens serves POST /v1/messages/count_tokens, Anthropic's shape, on
// every prefix, governed like a request but never billed: the key
// (Authorization or x-api-key), a body of at most MaxCountBodyBytes, the
// key's allow list and a rate-limit bucket of its own
// (proxy.Gateway.AllowCount), model names of at most route.MaxModelBytes
// (never echoed), and the guard as chat requests have it (a blocked count
// is 403 request_blocked, recorded, and reaches no vendor; a cooled-down
// key is 429). Anthropic counts its own body; for Gemini the body is
// mapped and Gemini's countTokens asked; the other vendors publish no
// count endpoint and get an estimate in OpenAI's o200k encoding of the
// text (system, messages, tool calls and results, tool definitions) plus
// 4 tokens a message, their own tokenizers differing by a few per cent.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	rid := id.New("req_", s.cfg.Now())
	w.Header().Set(HeaderRequestID, rid)
	w.Header().Set("Request-Id", rid)
	fail := func(err error) { writeError(w, mShape, rid, gw.AsError(err)) }
	gwy := s.cfg.Gateway
	principal, body, done, err := s.countIntake(w, r, mShape)
	defer done()
	if err != nil {
		fail(err)
		return
	}
	var head struct {
		Model     string          `json:"model"`
		MaxTokens json.RawMessage `json:"max_tokens"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		fail(gw.Errorf(gw.CodeInvalidRequest, "request body is not a JSON object with a model"))
		return
	}
	target, err := route.Parse(head.Model)
	if err != nil {
		fail(s.withSuggestion(err, principal))
		return
	}
	if !s.allowCount(w, r, principal, target, fail) {
		return
	}
	// The guard reads a count request as it reads a chat request (the
	// vendor is sent its text too): the key's cool-down, then both
	// stages, before any vendor is asked.
	gb := body
	if len(head.MaxTokens) == 0 {
		// A count request has no max_tokens; the reader wants one.
		if gb, err = rawjson.Set(body, "max_tokens", []byte("1")); err != nil {
			fail(gw.Errorf(gw.CodeInvalidRequest, "request body is not a JSON object"))
			return
		}
	}
	if b, perr := reqbody.Parse(gw.ShapeM, gb); perr != nil {
		fail(perr)
		return
	} else if err := gwy.Screen(r.Context(), proxy.Inbound{RequestID: rid, Endpoint: gw.ShapeM, Principal: principal, Body: body, Header: r.Header,
		Received: s.cfg.Now(), Vendor: target.Vendor, Model: target.Model, Text: b.Text}); err != nil {
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
	switch {
	case canCount && p.Shape() == gw.ShapeM:
		n, err = c.CountTokens(countScope(r.Context(), principal), target.Model, body)
	default:
		req, derr := anthropicshape.DecodeRequest(gb)
		if derr != nil {
			fail(derr)
			return
		}
		if codec, ok := p.(gw.Codec); canCount && ok {
			req.Model = target.Model
			vb, eerr := codec.EncodeRequest(req)
			if eerr != nil {
				fail(eerr)
				return
			}
			n, err = c.CountTokens(countScope(r.Context(), principal), target.Model, vb)
		} else {
			how = "estimate"
			n, err = s.estimateTokens(req)
		}
	}
	if err != nil {
		fail(err)
		return
	}
	w.Header().Set(HeaderTokenCount, how)
	writeJSON(w, http.StatusOK, map[string]int64{"input_tokens": n})
}

// allowCount applies the key's allow list and the counts' rate-limit
// bucket to a token count, setting the rate-limit headers; false: fail
// was called.
func (s *Server) allowCount(w http.ResponseWriter, r *http.Request, p *gw.Principal, t route.Target, fail func(error)) bool {
	d, err := s.cfg.Gateway.AllowCount(r.Context(), p, t.Vendor, t.Model)
	if d.RequestsLimit > 0 {
		w.Header().Set(chat.HeaderRateLimit, strconv.FormatInt(d.RequestsLimit, 10))
		w.Header().Set(chat.HeaderRateRemaining, strconv.FormatInt(max(d.RequestsRemaining, 0), 10))
	}
	if err != nil {
		fail(err)
		return false
	}
	w.Header().Set(HeaderVendor, t.Vendor)
	return true
}

// countSmallBytes is the largest count body worked on without a count
// slot: below it the parse, the guard and an estimate take well under a
// millisecond.
const countSmallBytes = 256 << 10

// countScope is ctx with the caller's account for the vendor client
// (its breakers count failures by account) on the calls a caller makes
// outside the proxy (counts, a kept response's state).
func countScope(ctx context.Context, p *gw.Principal) context.Context {
	return gw.WithCallScope(ctx, gw.CallScope{Account: p.AccountID})
}

// countIntake is the start every count endpoint shares: the caller's key
// as the endpoint's shape reads it, the body within the count limit, and
// the key's count budget and a count slot. done, always set, gives back
// the slot and the body's in-flight bytes.
func (s *Server) countIntake(w http.ResponseWriter, r *http.Request, sh shape.Shape) (p *gw.Principal, body []byte, done func(), err error) {
	done = func() {}
	if p, err = s.cfg.Gateway.Authenticate(r.Context(), sh.Credential(r)); err != nil {
		return nil, nil, done, err
	}
	body, unhold, err := s.life.ReadBodyFor(w, r, s.cfg.MaxCountBodyBytes, p)
	done = unhold
	if err != nil {
		return nil, nil, done, err
	}
	release, err := s.countSlot(r.Context(), p, len(body))
	if err != nil {
		return nil, nil, done, err
	}
	return p, body, func() { release(); unhold() }, nil
}

// countSlot charges a count's n body bytes to the key's count budget
// (proxy.Gateway.AllowCountBytes: rate_limited when spent), then waits
// for one of the count slots when the body is larger than
// countSmallBytes: at most half the CPUs read, guard and estimate large
// counts at once, the rest stay with the requests (a 30 MB count took
// 10 s of CPU, and four at once moved other callers' median latency from
// 5 to 240 ms). release gives the slot back.
func (s *Server) countSlot(ctx context.Context, p *gw.Principal, n int) (release func(), err error) {
	if err := s.cfg.Gateway.AllowCountBytes(ctx, p, n); err != nil {
		return nil, err
	}
	if n <= countSmallBytes {
		return func() {}, nil
	}
	// The account's share of the slots first (countshare.go): its counts
	// past it wait behind its own, not in front of others'.
	mine, err := s.countShares.acquire(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	select {
	case s.countSlots <- struct{}{}:
		return func() { <-s.countSlots; mine() }, nil
	case <-ctx.Done():
		mine()
		return nil, &gw.Error{Code: gw.CodeOverloaded, Message: "the caller went away while waiting to count", Err: ctx.Err()}
	}
}

// estimateCountBytes bounds the text an estimate tokenizes: past it, the
// rest of the text is counted at the rate measured on the part read, so an
// estimate costs at most about as much CPU as tokenizing this many bytes
// (a 30 MB body took 10 s of CPU when tokenized whole).
const estimateCountBytes = 256 << 10

// estimateTokens counts req's text in OpenAI's o200k encoding, plus 4
// tokens of framing a message and 3 for the answer's priming. Past
// estimateCountBytes of text, the remaining bytes are counted at the
// tokens-per-byte rate of the text tokenized so far (rounded up).
func (s *Server) estimateTokens(req *gw.Request) (int64, error) {
	enc := s.o200k()
	var n int64 = 3
	var read, tokens, skipped int64
	count := func(text string) error {
		if text == "" {
			return nil
		}
		if room := estimateCountBytes - read; int64(len(text)) > room {
			skipped += int64(len(text)) - max(room, 0)
			text = text[:max(room, 0)]
		}
		if text == "" {
			return nil
		}
		k, err := enc.Count(text)
		n += int64(k)
		read += int64(len(text))
		tokens += int64(k)
		return err
	}
	rest := func() int64 {
		switch {
		case skipped == 0:
			return 0
		case read > 0:
			return (skipped*tokens + read - 1) / read
		}
		return (skipped + 3) / 4
	}
	var parts func(ps []gw.Part) error
	parts = func(ps []gw.Part) error {
		for _, p := range ps {
			for _, t := range []string{p.Text, p.ToolName, string(p.Arguments)} {
				if err := count(t); err != nil {
					return err
				}
			}
			if err := parts(p.Content); err != nil {
				return err
			}
		}
		return nil
	}
	if len(req.System) > 0 {
		n += 4
		if err := parts(req.System); err != nil {
			return 0, err
		}
	}
	for _, m := range req.Messages {
		n += 4
		if err := parts(m.Content); err != nil {
			return 0, err
		}
	}
	for _, t := range req.Tools {
		for _, x := range []string{t.Name, t.Description, string(t.Parameters)} {
			if err := count(x); err != nil {
				return 0, err
			}
		}
	}
	return n + rest(), nil
}

// o200k returns the encoding, loaded on first use.
func (s *Server) o200k() *codec.Codec {
	s.o200kOnce.Do(func() { s.o200kCodec = codec.NewO200kBase() })
	return s.o200kCodec
}
