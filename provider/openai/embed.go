package openai

import (
	"context"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// Embed posts an embeddings body (package embed makes it) to BaseURL +
// "/embeddings" and returns the vendor's 2xx answer or its mapped error,
// with the retries, breakers and key pool of every call. model is in the
// body already.
func (p *Provider) Embed(ctx context.Context, model string, body []byte, received time.Time) (*gw.Upstream, error) {
	if err := p.Unavailable(); err != nil {
		return nil, err
	}
	h := make(http.Header, 2)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	u := strings.TrimRight(p.cfg.BaseURL, "/") + "/embeddings"
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: u, Header: h, Body: body, Auth: bearer, Start: received})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body))
	}
	return &gw.Upstream{Status: resp.StatusCode, Header: resp.Header, Body: resp.Body}, nil
}

// EmbedDimensionsField is the member the vendor reads the vector length
// from: Mistral's output_dimension, everyone else's dimensions.
func (p *Provider) EmbedDimensionsField() string {
	if p.cfg.Vendor == "mistral" {
		return "output_dimension"
	}
	return "dimensions"
}
