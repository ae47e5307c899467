// Package openai is the adapter for OpenAI's Chat Completions API and the
// base of the six OpenAI-compatible vendors (together, fireworks, groq,
// mistral, deepseek, openrouter), which differ only in their Config: base
// URL, the headers they take, whether they accept
// stream_options.include_usage, and their mapping Dialect (package
// shape/openai).
//
// Send posts to BaseURL + "/chat/completions" with a Bearer key through
// internal/upstream (timeouts, retries before any byte) and maps the
// vendor's error body (errors.go). PassThrough patches only "model" (and
// the usage stream option) in the caller's bytes. The Codec methods
// (codec.go) map canonical requests and responses through shape/openai.
// SetCacheKey (cache.go) adds the account's prompt_cache_key for the
// vendors that route cache hits by it (OpenAI, Mistral, Fireworks), and
// Fireworks gets it as x-session-affinity too.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/internal/upstream"
	shape "github.com/gwlabs/gateway/shape/openai"
)

// Config configures one OpenAI-compatible vendor.
type Config struct {
	// Vendor is the prefix, e.g. "openai" or "groq".
	Vendor string
	// BaseURL includes the version segment ("https://api.openai.com/v1");
	// the adapter appends "/chat/completions".
	BaseURL string
	// APIKey is the gateway's key at the vendor, or several separated
	// by commas (a pool, see upstream.ParseKeys) unless HTTP.Keys is
	// set. Empty: every call answers vendor_unavailable naming
	// KeySetting.
	APIKey string
	// KeySetting names the configuration that holds the key, for that
	// message (e.g. "GATEWAY_OPENAI_API_KEY").
	KeySetting string
	// ForwardHeaders lists caller headers this vendor takes (compared
	// case-insensitively), e.g. OpenAI-Organization for OpenAI.
	ForwardHeaders []string
	// StreamUsageOption says the vendor accepts
	// stream_options.include_usage; when false the gateway relies on the
	// usage the vendor sends anyway.
	StreamUsageOption bool
	// PromptCacheKey says the vendor routes prompt-cache hits by
	// prompt_cache_key; the gateway then sets one per account when the
	// caller did not (SetCacheKey, cache.go).
	PromptCacheKey bool
	// SessionAffinity says the vendor pins a session to a replica by the
	// x-session-affinity header; without the caller's, the request's
	// prompt_cache_key is sent as its value.
	SessionAffinity bool
	// Responses says the vendor serves the OpenAI Responses API at
	// BaseURL + "/responses" with OpenAI's semantics (state kept by the
	// vendor): requests to the gateway's /v1/responses pass through.
	// Only OpenAI: the other vendors are mapped through Chat Completions.
	Responses bool
	// Dialect is the vendor's mapping dialect; nil: shape/openai's
	// dialect for Vendor.
	Dialect *shape.Dialect
	// HTTP tunes the upstream client.
	HTTP upstream.Config
}

// Provider is one OpenAI-compatible vendor.
type Provider struct {
	cfg     Config
	url     string
	rurl    string // the Responses API, when Config.Responses
	client  *upstream.Client
	dialect *shape.Dialect
}

// New returns a Provider. It fails only on a malformed configuration.
func New(cfg Config) (*Provider, error) {
	if cfg.Vendor == "" {
		return nil, fmt.Errorf("openai provider: vendor name is required")
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("%s provider: base URL is required", cfg.Vendor)
	}
	d := cfg.Dialect
	if d == nil {
		var ok bool
		if d, ok = shape.DialectFor(cfg.Vendor); !ok {
			return nil, fmt.Errorf("%s provider: no mapping dialect", cfg.Vendor)
		}
	}
	if len(cfg.HTTP.Keys) == 0 && cfg.APIKey != "" {
		keys, err := upstream.ParseKeys(cfg.APIKey)
		if err != nil {
			return nil, fmt.Errorf("%s provider: %w", cfg.Vendor, err)
		}
		cfg.HTTP.Keys = keys
	}
	if cfg.HTTP.Probe == nil {
		// The gateway's own check of a key: the models list, free.
		cfg.HTTP.Probe = &upstream.Probe{URL: strings.TrimRight(cfg.BaseURL, "/") + "/models", Auth: bearer}
	}
	for _, name := range cfg.ForwardHeaders {
		// A refusal of a request carrying the caller's own organisation
		// or project is the caller's, never the key's.
		for _, org := range OrgHeaders() {
			if strings.EqualFold(name, org) {
				cfg.HTTP.CallerHeaders = append(cfg.HTTP.CallerHeaders, org)
			}
		}
	}
	return &Provider{
		cfg:     cfg,
		url:     strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		rurl:    strings.TrimRight(cfg.BaseURL, "/") + "/responses",
		client:  upstream.New(cfg.Vendor, cfg.HTTP),
		dialect: d,
	}, nil
}

// NormalizeBody fixes the dialect's SDK-breaking deviations in a native
// non-stream answer (shape/openai normalize.go), keeping every other byte.
func (p *Provider) NormalizeBody(body []byte) []byte { return p.dialect.NormalizeBody(body) }

// NormalizeStream returns the per-stream fixer of the dialect's
// SDK-breaking deviations, or nil when its streams need none.
func (p *Provider) NormalizeStream() func(data []byte) []byte {
	if n := p.dialect.NewStreamNormalizer(); n != nil {
		return n.Chunk
	}
	return nil
}

// Name returns the vendor prefix.
func (p *Provider) Name() string { return p.cfg.Vendor }

// Shape returns gw.ShapeC.
func (p *Provider) Shape() gw.Shape { return gw.ShapeC }

// Unavailable returns vendor_unavailable, naming the missing setting,
// when the vendor has no key; nil otherwise.
func (p *Provider) Unavailable() error {
	if p.cfg.APIKey != "" {
		return nil
	}
	return &gw.Error{Code: gw.CodeVendorUnavailable, Message: fmt.Sprintf("%s is not configured: set %s", p.cfg.Vendor, p.keySetting())}
}

// Send posts the body and returns the vendor's 2xx answer or its mapped
// error.
func (p *Provider) Send(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
	if err := p.Unavailable(); err != nil {
		return nil, err
	}
	h := make(http.Header, 6)
	h.Set("Content-Type", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	for _, name := range p.cfg.ForwardHeaders {
		if v := c.Header.Values(name); len(v) > 0 {
			h[http.CanonicalHeaderKey(name)] = v
		}
	}
	p.setAffinity(h, c.Body)
	url := p.url
	if c.Endpoint == gw.ShapeR {
		if !p.cfg.Responses {
			return nil, &gw.Error{Code: gw.CodeInternal, Message: "internal error", Err: fmt.Errorf("%s does not serve the Responses API", p.cfg.Vendor)}
		}
		url = p.rurl
	}
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: url, Header: h, Body: c.Body, Auth: bearer, Start: c.Received})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

func bearer(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }

// Health reports the vendor's circuit breaker and key pool.
func (p *Provider) Health(now time.Time) gw.VendorHealth { return p.client.Health(now) }

func (p *Provider) keySetting() string {
	if p.cfg.KeySetting != "" {
		return p.cfg.KeySetting
	}
	return "GATEWAY_" + strings.ToUpper(p.cfg.Vendor) + "_API_KEY"
}

// ResponseState forwards a request about a response the vendor keeps
// (GET or DELETE /responses/{id}, GET /responses/{id}/input_items, with
// query) and returns its 2xx answer or the mapped error.
func (p *Provider) ResponseState(ctx context.Context, method, path, query string) (*gw.Upstream, error) {
	if !p.cfg.Responses {
		return nil, gw.Errorf(gw.CodeNotFound, "%s keeps no responses", p.cfg.Vendor)
	}
	if err := p.Unavailable(); err != nil {
		return nil, err
	}
	h := make(http.Header, 2)
	h.Set("Accept", "application/json")
	u := p.rurl + path
	if query != "" {
		u += "?" + query
	}
	// One key of the pool, as for every call (Auth): never the pool's
	// whole setting.
	resp, err := p.client.Do(ctx, &upstream.Request{Method: method, URL: u, Header: h, Auth: bearer})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

// SpeaksResponses reports whether the vendor serves the Responses API
// itself (Config.Responses).
func (p *Provider) SpeaksResponses() bool { return p.cfg.Responses }

// PassThroughResponses rewrites "model" in a caller's Responses body.
// Responses streams always end with the usage (response.completed), so
// nothing else is asked for.
func (p *Provider) PassThroughResponses(body []byte, model string) ([]byte, error) {
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return nil, notObject(err)
	}
	e := obj.Edit()
	if err := p.PassThroughResponsesEdit(e, model); err != nil {
		return nil, err
	}
	return e.Bytes(), nil
}

// PassThroughResponsesEdit is PassThroughResponses on an edit of the
// caller's body (read once, written once by the caller).
func (p *Provider) PassThroughResponsesEdit(e *rawjson.Editor, model string) error {
	mq, err := json.Marshal(model)
	if err != nil {
		return err
	}
	e.Set("model", mq)
	return nil
}

func notObject(err error) error {
	return &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a JSON object", Err: err}
}

// PassThrough rewrites "model" in a caller's C body and, on a stream
// whose caller did not ask for usage, asks the vendor for it (hideUsage
// then tells the relay to hold the usage-only chunk back).
func (p *Provider) PassThrough(body []byte, model string, stream bool) ([]byte, bool, error) {
	if _, err := json.Marshal(model); err != nil {
		return nil, false, err
	}
	// One scan of the body and one copy, whatever is set.
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return nil, false, notObject(err)
	}
	e := obj.Edit()
	hide, err := p.PassThroughEdit(e, model, stream)
	if err != nil {
		return nil, false, err
	}
	return e.Bytes(), hide, nil
}

// PassThroughEdit is PassThrough on an edit of the caller's body (read
// once, written once by the caller).
func (p *Provider) PassThroughEdit(e *rawjson.Editor, model string, stream bool) (bool, error) {
	mq, err := json.Marshal(model)
	if err != nil {
		return false, err
	}
	e.Set("model", mq)
	if !stream || !p.cfg.StreamUsageOption {
		return false, nil
	}
	so := e.Value("stream_options")
	if len(so) == 0 || string(so) == "null" {
		e.Set("stream_options", []byte(`{"include_usage":true}`))
		return true, nil
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(so, &opts); err != nil {
		return false, &gw.Error{Code: gw.CodeInvalidRequest, Message: "stream_options must be an object", Err: err}
	}
	if string(opts["include_usage"]) == "true" {
		return false, nil
	}
	opts["include_usage"] = json.RawMessage("true")
	nso, err := json.Marshal(opts)
	if err != nil {
		return false, err
	}
	e.Set("stream_options", nso)
	return true, nil
}

// Interface guards.
var (
	_ gw.Provider        = (*Provider)(nil)
	_ gw.Codec           = (*Provider)(nil)
	_ gw.HealthReporter  = (*Provider)(nil)
	_ gw.ResponsesNative = (*Provider)(nil)
)
