package google

import (
	"context"
	"net/http"
	"net/url"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// Embed posts one batchEmbedContents body (package embed makes it: at
// most 100 requests) for model and returns the vendor's 2xx answer or
// its mapped error, with the retries, breakers and key pool of every
// call.
func (p *Provider) Embed(ctx context.Context, model string, body []byte, received time.Time) (*gw.Upstream, error) {
	if err := p.Unavailable(); err != nil {
		return nil, err
	}
	h := make(http.Header, 2)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: p.base + url.PathEscape(model) + ":batchEmbedContents", Header: h, Body: body, Auth: googKey, Start: received})
	if err != nil {
		return nil, hideURL(err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

// EmbedDimensionsField is how Gemini names the vector length:
// outputDimensionality, set by package embed in each request.
func (p *Provider) EmbedDimensionsField() string { return "outputDimensionality" }
