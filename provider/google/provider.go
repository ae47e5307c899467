// Package google is the adapter for the Gemini API's native
// generateContent and streamGenerateContent calls. A caller of the
// gateway's Gemini endpoints (shape G, package shape/gemini) is passed
// through (PassThrough); every other caller is mapped: the server decodes
// the caller's request to a gw.Request, and this package encodes it
// (EncodeRequest), sends it (Send), and decodes the answer
// (DecodeResponse) or stream (NewStreamDecoder) back to canonical form for
// the caller's shape encoder.
//
// # Sending
//
// Send posts to BaseURL + "/v1beta/models/{model}:generateContent", or
// ":streamGenerateContent?alt=sse" for streams, with the key in the
// x-goog-api-key header (never in the URL, where it would reach logs), and
// maps Google's google.rpc error bodies (errors.go). PassThrough sends a G
// caller's body as it is.
//
// # Request mapping
//
//   - System text, and system messages found mid-conversation, become
//     systemInstruction parts, in order (Gemini has no system turn).
//   - user turns are "user", assistant turns "model"; consecutive turns of
//     one role merge. Tool results become functionResponse parts of a user
//     turn: the name comes from the tool call with the same id in the
//     history, the response is {"output": text} or, for a failed call,
//     {"error": text}; the results answering one model turn lead the next
//     user turn, one per call, in call order (a missing result is a 400).
//     Images and documents inside tool results follow the responses as
//     ordinary parts.
//   - Images and documents: base64 (or a base64 data: URL) becomes
//     inlineData (documents default to application/pdf); a linked file
//     becomes fileData{fileUri, mimeType}, the type taken from the part or
//     the URL's extension; a link whose type cannot be told is a 400 (send
//     it inline). Text documents become text.
//   - Tool calls become functionCall{name, args, id} with their thought
//     signature restored on the same part (see Thought signatures).
//   - Tools become functionDeclarations with the caller's JSON Schema in
//     parametersJsonSchema, unchanged. The older "parameters" field takes
//     only an OpenAPI subset and refuses $schema, additionalProperties,
//     const, oneOf and more; sanitising for it would silently loosen the
//     contract, while parametersJsonSchema keeps every constraint and
//     every required field. A schema declaring nothing is left out.
//   - tool_choice auto, none, required, {tool} become functionCallingConfig
//     mode AUTO, NONE, ANY, ANY + allowedFunctionNames.
//   - max tokens, temperature, top_p, top_k, stop (at most 5: more is a
//     400 naming "stop"), seed (32-bit: larger is a 400) go to
//     generationConfig, with candidateCount 1. JSON output becomes
//     responseMimeType application/json (+ responseJsonSchema).
//   - Reasoning becomes thinkingConfig: thinkingLevel on Gemini 3,
//     thinkingBudget on 2.5, never both, includeThoughts when the caller
//     wants reasoning (the table is on encoder.thinking in thinking.go).
//
// Dropped by rule (listed in gw.Request.Dropped): cache_control markers
// (Gemini caches implicitly), user, parallel_tool_calls false (Gemini has
// no switch), tools.strict (no such flag), reasoning on models without
// thinking (Gemini 2.0 and older), thinking from another vendor and
// redacted_thinking (their signatures mean nothing to Gemini).
//
// # Thought signatures
//
// Gemini 3 returns an opaque thoughtSignature on function-call parts (and
// on some text and thought parts) and refuses a replayed function call
// that lacks it. Three carriers bring it back:
//
//   - gw.Part.Signature: SignaturePrefix + the signature, on tool-call
//     parts and thinking parts. The prefix marks signatures this adapter
//     minted: a thinking part without it came from another vendor and is
//     dropped, so foreign signatures never reach Gemini.
//   - The tool-call id (ToolCallID, SplitToolCallID): core id + "_gts_" +
//     base64url(signature bytes), because Chat Completions clients echo
//     only ids and arguments. Messages clients get the same id; it matches
//     Anthropic's ^[a-zA-Z0-9_-]+$.
//   - A signature Gemini put on an ordinary text part comes out as a
//     thinking part with empty text and that signature, right after the
//     text; replayed, it goes back onto the text part. (The server does
//     not show such a part to Messages clients: it keeps the signature in
//     its client state and restores the part on replay; see convstate.)
//
// A model turn whose function calls carry no signature at all (a history
// from another vendor) gets Gemini's documented placeholder SkipSignature
// on its first call, on Gemini 3 models.
//
// # Response mapping
//
// candidates[0]: text parts become text, thought parts thinking, each
// functionCall a tool call (id from functionCall.id or derived, see
// ToolCallID). finishReason: STOP (and OTHER, LANGUAGE, unknown values) is
// end_turn, or tool_use when the turn called functions (Gemini does not
// say which stop sequence ended the text: there is no stop_sequence);
// MAX_TOKENS is
// max_tokens; SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII and
// IMAGE_* are refusal; MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL and
// TOO_MANY_TOOL_CALLS are an upstream_error (in a stream: EventError),
// since the turn did not complete. A prompt refused with
// promptFeedback.blockReason and no candidate is a refusal with no
// content. Usage: input = promptTokenCount - cachedContentTokenCount +
// toolUsePromptTokenCount, cache read = cachedContentTokenCount, output =
// candidatesTokenCount + thoughtsTokenCount, reasoning =
// thoughtsTokenCount.
package google

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// DefaultBaseURL is the Gemini API host.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Config configures the adapter.
type Config struct {
	// BaseURL is the host (default DefaultBaseURL); the adapter appends
	// "/v1beta/models/{model}:generateContent" or
	// ":streamGenerateContent?alt=sse".
	BaseURL string
	// APIKey is the gateway's key, or several separated by commas (a
	// pool, see upstream.ParseKeys) unless HTTP.Keys is set. Empty: Send
	// answers vendor_unavailable naming GATEWAY_GOOGLE_API_KEY.
	APIKey string
	// HTTP tunes the upstream client.
	HTTP upstream.Config
}

// Provider is the Gemini adapter.
type Provider struct {
	cfg    Config
	base   string
	client *upstream.Client
}

// New returns a Provider. It fails only on a malformed BaseURL.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("google provider: base URL must be an http(s) URL")
	}
	if len(cfg.HTTP.Keys) == 0 && cfg.APIKey != "" {
		keys, err := upstream.ParseKeys(cfg.APIKey)
		if err != nil {
			return nil, fmt.Errorf("google provider: %w", err)
		}
		cfg.HTTP.Keys = keys
	}
	if cfg.HTTP.Probe == nil {
		// The gateway's own check of a key: the models list, free.
		cfg.HTTP.Probe = &upstream.Probe{URL: strings.TrimRight(cfg.BaseURL, "/") + "/v1beta/models", Auth: googKey}
	}
	return &Provider{
		cfg:    cfg,
		base:   strings.TrimRight(cfg.BaseURL, "/") + "/v1beta/models/",
		client: upstream.New("google", cfg.HTTP),
	}, nil
}

// Name returns "google".
func (p *Provider) Name() string { return "google" }

// Shape returns gw.ShapeG.
func (p *Provider) Shape() gw.Shape { return gw.ShapeG }

// Unavailable returns vendor_unavailable, naming the missing setting,
// when the gateway has no Gemini key; nil otherwise.
func (p *Provider) Unavailable() error {
	if p.cfg.APIKey != "" {
		return nil
	}
	return &gw.Error{Code: gw.CodeVendorUnavailable, Message: "google is not configured: set GATEWAY_GOOGLE_API_KEY"}
}

// URL returns the endpoint for model: generateContent, or
// streamGenerateContent with alt=sse.
func (p *Provider) URL(model string, stream bool) string {
	model = strings.TrimPrefix(model, "models/")
	if stream {
		return p.base + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
	}
	return p.base + url.PathEscape(model) + ":generateContent"
}

// Send posts c.Body (a body from EncodeRequest) and returns Gemini's 2xx
// answer, or its failure mapped by rpcError: rate_limited (with the
// RetryInfo delay), overloaded, invalid_request, not_found,
// upstream_timeout, upstream_error, request_too_large, and
// vendor_unavailable without a key. Errors never carry the key or the URL.
func (p *Provider) Send(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
	if err := p.Unavailable(); err != nil {
		return nil, err
	}
	if c.Model == "" {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "model: a google model id is required")
	}
	h := make(http.Header, 4)
	h.Set("Content-Type", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: p.URL(c.Model, c.Stream), Header: h, Body: c.Body, Auth: googKey, Start: c.Received})
	if err != nil {
		return nil, hideURL(err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

// hideURL strips the request URL from a transport error's cause, which
// would otherwise show it in logs of err.Error().
func googKey(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) }

// Health reports the vendor's circuit breaker and key pool.
func (p *Provider) Health(now time.Time) gw.VendorHealth { return p.client.Health(now) }

// statusError maps a failed answer, scrubbing every key of the pool from
// it.
func (p *Provider) statusError(status int, h http.Header, body []byte) *gw.Error {
	keys := p.cfg.HTTP.Keys
	if len(keys) == 0 {
		return statusError(status, h, body, "")
	}
	e := statusError(status, h, body, keys[0].Secret)
	for _, k := range keys[1:] {
		if k.Secret == "" {
			continue
		}
		if strings.Contains(e.Message, k.Secret) {
			e.Message = strings.ReplaceAll(e.Message, k.Secret, "[redacted]")
		}
		if e.Err != nil && strings.Contains(e.Err.Error(), k.Secret) {
			e.Err = fmt.Errorf("google answered %d (detail withheld: it named the key)", status)
		}
	}
	return e
}

func hideURL(err error) error {
	var ge *gw.Error
	if !errors.As(err, &ge) {
		return err
	}
	var ue *url.Error
	if errors.As(ge.Err, &ue) {
		c := *ge
		c.Err = fmt.Errorf("%s google: %w", strings.ToLower(ue.Op), ue.Err)
		return &c
	}
	return err
}

// PassThrough returns a Gemini-shaped caller's body as it is: the model
// and the stream flag live in the URL (see URL), not the body, and a
// Gemini stream always reports usage.
func (p *Provider) PassThrough(body []byte, model string, stream bool) ([]byte, bool, error) {
	return body, false, nil
}

// EncodeRequest maps a canonical request to Gemini's (see the package
// function of the same name).
func (p *Provider) EncodeRequest(r *gw.Request) ([]byte, error) { return EncodeRequest(r) }

// DecodeResponse maps a generateContent answer (see the package function
// of the same name).
func (p *Provider) DecodeResponse(body []byte) (*gw.Response, error) { return DecodeResponse(body) }

// DecodeStream maps a streamGenerateContent?alt=sse body; the stream owns
// body.
func (p *Provider) DecodeStream(body io.ReadCloser) gw.EventStream { return NewStreamDecoder(body) }

// Interface guards.
var (
	_ gw.Provider = (*Provider)(nil)
	_ gw.Codec    = (*Provider)(nil)
)
