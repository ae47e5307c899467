package openai

import (
	"io"

	gw "github.com/gwlabs/gateway"
	shape "github.com/gwlabs/gateway/shape/openai"
)

// EncodeRequest maps a canonical request to this vendor's dialect.
func (p *Provider) EncodeRequest(r *gw.Request) ([]byte, error) {
	return shape.EncodeRequest(r, p.dialect)
}

// DecodeResponse maps the vendor's chat.completion to the canonical form.
func (p *Provider) DecodeResponse(body []byte) (*gw.Response, error) {
	return shape.DecodeResponse(body, p.dialect)
}

// DecodeStream maps the vendor's chunk stream to canonical events.
func (p *Provider) DecodeStream(body io.ReadCloser) gw.EventStream {
	return shape.NewStreamDecoder(body, p.dialect)
}
