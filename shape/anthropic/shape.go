package anthropic

import (
	"encoding/json"
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/reqbody"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/sse"
)

// Shape is the M ingress shape: Anthropic Messages on /v1/messages.
type Shape struct{}

// Name is gw.ShapeM.
func (Shape) Name() gw.Shape { return gw.ShapeM }

// Path is /v1/messages.
func (Shape) Path() string { return "/v1/messages" }

// Credential is the Authorization header, else x-api-key (Anthropic's
// SDKs and tools send the key there).
func (Shape) Credential(r *http.Request) string { return shape.BearerOr(r, "X-Api-Key") }

// RequestIDHeader is Request-Id, which Anthropic's SDKs read.
func (Shape) RequestIDHeader() string { return "Request-Id" }

// SpanName is the method and path.
func (Shape) SpanName(r *http.Request) string { return "POST " + r.URL.Path }

// Parse reads an M body (see reqbody.Parse).
func (Shape) Parse(_ string, body []byte) (shape.Request, error) {
	b, err := reqbody.Parse(gw.ShapeM, body)
	if err != nil {
		return shape.Request{}, err
	}
	return shape.Request{Model: b.Model, Stream: b.Stream, MaxOutput: b.MaxOutput, Text: b.Text, Models: b.Models, HasModels: b.HasModels, Top: b.Top, Messages: b.Messages}, nil
}

// Canonical decodes the body (see DecodeRequest).
func (Shape) Canonical(_ *shape.Request, body []byte) (*gw.Request, error) {
	return DecodeRequest(body)
}

func responseMeta(m shape.Meta) ResponseMeta {
	return ResponseMeta{ID: m.RequestID, Model: m.Model, Created: m.Created}
}

// EncodeResponse writes a message (see EncodeResponse).
func (Shape) EncodeResponse(resp *gw.Response, meta shape.Meta) ([]byte, error) {
	return EncodeResponse(resp, responseMeta(meta))
}

// NewStreamEncoder writes M stream events.
func (Shape) NewStreamEncoder(w io.Writer, meta shape.Meta) shape.Encoder {
	return NewStreamEncoder(w, responseMeta(meta))
}

// ErrorBody is {"type":"error","error":{...}}, as Anthropic's SDKs expect.
func (Shape) ErrorBody(requestID string, e *gw.Error) []byte {
	b, _ := json.Marshal(struct {
		Type  string            `json:"type"`
		Error shape.ErrorObject `json:"error"`
	}{"error", shape.NewErrorObject(requestID, e)})
	return b
}

// StreamError is an error event (see ErrorEvent).
func (Shape) StreamError(requestID string, e *gw.Error) []byte { return ErrorEvent(requestID, e) }

// StreamTail is message_stop after a whole answer; nothing follows an
// error event.
func (Shape) StreamTail(afterError bool) []byte {
	if afterError {
		return nil
	}
	return sse.AppendEvent(nil, "message_stop", []byte(`{"type":"message_stop"}`))
}

// UsageFromBody reads a message's usage (see UsageFromBody).
func (Shape) UsageFromBody(body []byte) (gw.Usage, error) { return UsageFromBody(body) }

// NewMeter returns a Meter.
func (Shape) NewMeter(string, bool) shape.Meter { return NewMeter() }

// StreamError is an error event (see ErrorEvent).
func (m *Meter) StreamError(requestID string, e *gw.Error) []byte { return ErrorEvent(requestID, e) }

// State: see shape.State.Threads.
func (Shape) State() shape.State { return shape.State{Threads: true} }

// Interface guards.
var (
	_ shape.Shape    = Shape{}
	_ shape.Stateful = Shape{}
)
