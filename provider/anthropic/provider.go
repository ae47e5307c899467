// Package anthropic is the adapter for Anthropic's Messages API.
//
// Send posts to BaseURL + "/v1/messages" with the gateway's x-api-key, the
// caller's anthropic-version (default 2023-06-01) and anthropic-beta
// headers, which go to this vendor only, and maps Anthropic's error body
// (errors.go), 529 overloaded_error included. PassThrough patches
// "model" in the caller's bytes (Messages streams always carry usage) and,
// like EncodeRequest, adds prompt-cache breakpoints when the caller set
// none and the prompt is long enough (cache.go). The
// Codec methods (codec.go) map canonical requests and responses through
// shape/anthropic.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
	shape "github.com/gwlabs/gateway/shape/anthropic"
)

// DefaultVersion is sent as anthropic-version when the caller sent none.
const DefaultVersion = "2023-06-01"

// DefaultBaseURL is Anthropic's API host.
const DefaultBaseURL = "https://api.anthropic.com"

// Config configures the adapter.
type Config struct {
	// BaseURL is the host; the adapter appends "/v1/messages".
	BaseURL string
	// APIKey is the gateway's key, or several separated by commas (a
	// pool, see upstream.ParseKeys) unless HTTP.Keys is set. Empty:
	// calls answer vendor_unavailable naming GATEWAY_ANTHROPIC_API_KEY.
	APIKey string
	// Encode tunes the mapping of canonical requests: the default
	// max_tokens per model, and model capabilities (nil hooks take this
	// package's model rules, models.go).
	Encode shape.EncodeOptions
	// HTTP tunes the upstream client.
	HTTP upstream.Config
}

// Provider is the Anthropic adapter.
type Provider struct {
	cfg    Config
	url    string
	client *upstream.Client
}

// New returns a Provider.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	e := &cfg.Encode
	if e.ForcedToolChoiceUnsupported == nil {
		e.ForcedToolChoiceUnsupported = forcedToolChoiceUnsupported
	}
	if e.AdaptiveThinkingOnly == nil {
		e.AdaptiveThinkingOnly = adaptiveThinkingOnly
	}
	if e.SamplingUnsupported == nil {
		e.SamplingUnsupported = samplingUnsupported
	}
	if len(cfg.HTTP.Keys) == 0 && cfg.APIKey != "" {
		keys, err := upstream.ParseKeys(cfg.APIKey)
		if err != nil {
			return nil, fmt.Errorf("anthropic provider: %w", err)
		}
		cfg.HTTP.Keys = keys
	}
	if cfg.HTTP.Probe == nil {
		// The gateway's own check of a key: the models list, free.
		cfg.HTTP.Probe = &upstream.Probe{URL: strings.TrimRight(cfg.BaseURL, "/") + "/v1/models",
			Header: http.Header{"Anthropic-Version": {DefaultVersion}}, Auth: apiKey}
	}
	return &Provider{
		cfg:    cfg,
		url:    strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages",
		client: upstream.New("anthropic", cfg.HTTP),
	}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return "anthropic" }

// Shape returns gw.ShapeM.
func (p *Provider) Shape() gw.Shape { return gw.ShapeM }

// Unavailable returns vendor_unavailable, naming the missing setting,
// when the gateway has no Anthropic key; nil otherwise.
func (p *Provider) Unavailable() error {
	if p.cfg.APIKey != "" {
		return nil
	}
	return &gw.Error{Code: gw.CodeVendorUnavailable, Message: "anthropic is not configured: set GATEWAY_ANTHROPIC_API_KEY"}
}

// Send posts the body and returns Anthropic's 2xx answer or its mapped
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
	version := DefaultVersion
	if v := c.Header.Get("Anthropic-Version"); v != "" {
		version = v
	}
	h.Set("Anthropic-Version", version)
	if betas := c.Header.Values("Anthropic-Beta"); len(betas) > 0 {
		h["Anthropic-Beta"] = betas
	}
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: p.url, Header: h, Body: c.Body, Auth: apiKey, Start: c.Received})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

func apiKey(h http.Header, key string) { h.Set("X-Api-Key", key) }

// Health reports the vendor's circuit breaker and key pool.
func (p *Provider) Health(now time.Time) gw.VendorHealth { return p.client.Health(now) }

// PassThrough rewrites "model" in a caller's M body.
func (p *Provider) PassThrough(body []byte, model string, stream bool) ([]byte, bool, error) {
	mq, err := json.Marshal(model)
	if err != nil {
		return nil, false, fmt.Errorf("encode model: %w", err)
	}
	out, err := passThroughBody(body, mq, model)
	if err != nil {
		return nil, false, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a JSON object", Err: err}
	}
	return out, false, nil
}

// Interface guards.
var (
	_ gw.Provider       = (*Provider)(nil)
	_ gw.Codec          = (*Provider)(nil)
	_ gw.HealthReporter = (*Provider)(nil)
)
