package anthropic

import (
	"io"

	gw "github.com/gwlabs/gateway"
	shape "github.com/gwlabs/gateway/shape/anthropic"
)

// EncodeRequest maps a canonical request to a Messages request.
func (p *Provider) EncodeRequest(r *gw.Request) ([]byte, error) {
	b, err := shape.EncodeRequest(r, p.cfg.Encode)
	if err != nil {
		return nil, err
	}
	return addCacheMarkers(b, r.Model), nil
}

// DecodeResponse maps a Messages response to the canonical form.
func (p *Provider) DecodeResponse(body []byte) (*gw.Response, error) {
	return shape.DecodeResponse(body)
}

// DecodeStream maps a Messages event stream to canonical events.
func (p *Provider) DecodeStream(body io.ReadCloser) gw.EventStream {
	return shape.NewStreamDecoder(body)
}
