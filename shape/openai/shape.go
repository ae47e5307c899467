package openai

import (
	"encoding/json"
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/reqbody"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/sse"
)

// Shape is the C ingress shape: OpenAI Chat Completions on
// /v1/chat/completions. Its error envelope is also the one of the
// gateway's endpoints of no shape.
type Shape struct{}

// Name is gw.ShapeC.
func (Shape) Name() gw.Shape { return gw.ShapeC }

// Path is /v1/chat/completions.
func (Shape) Path() string { return "/v1/chat/completions" }

// Credential is the Authorization header.
func (Shape) Credential(r *http.Request) string { return shape.BearerOr(r, "") }

// RequestIDHeader is X-Request-Id.
func (Shape) RequestIDHeader() string { return "X-Request-Id" }

// SpanName is the method and path.
func (Shape) SpanName(r *http.Request) string { return "POST " + r.URL.Path }

// Parse reads a C body (see reqbody.Parse).
func (Shape) Parse(_ string, body []byte) (shape.Request, error) {
	b, err := reqbody.Parse(gw.ShapeC, body)
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
	return ResponseMeta{ID: "chatcmpl_" + id.Random(m.RequestID), Model: m.Model, Created: m.Created}
}

// EncodeResponse writes a chat.completion (see EncodeResponse).
func (Shape) EncodeResponse(resp *gw.Response, meta shape.Meta) ([]byte, error) {
	return EncodeResponse(resp, responseMeta(meta))
}

// NewStreamEncoder writes chunks, with the usage chunk when the caller
// asked for it.
func (Shape) NewStreamEncoder(w io.Writer, meta shape.Meta) shape.Encoder {
	include := meta.Canonical != nil && meta.Canonical.IncludeUsage
	return NewStreamEncoder(w, responseMeta(meta), include)
}

// ErrorBody is {"error":{...}}.
func (Shape) ErrorBody(requestID string, e *gw.Error) []byte {
	b, _ := json.Marshal(struct {
		Error shape.ErrorObject `json:"error"`
	}{shape.NewErrorObject(requestID, e)})
	return b
}

// StreamError is an error chunk then [DONE].
func (Shape) StreamError(requestID string, e *gw.Error) []byte { return errorChunkDone(requestID, e) }

func errorChunkDone(requestID string, e *gw.Error) []byte {
	buf := sse.AppendEvent(nil, "", ErrorChunk(requestID, e))
	return sse.AppendEvent(buf, "", []byte("[DONE]"))
}

// StreamTail is [DONE]: a C stream ends with it, after an error too
// (which vendors leave out).
func (Shape) StreamTail(bool) []byte { return sse.AppendEvent(nil, "", []byte("[DONE]")) }

// UsageFromBody reads a chat.completion's usage (see UsageFromBody).
func (Shape) UsageFromBody(body []byte) (gw.Usage, error) { return UsageFromBody(body) }

// NewMeter returns a Meter for vendor's stream.
func (Shape) NewMeter(vendor string, hideUsage bool) shape.Meter {
	m := NewMeter(hideUsage)
	m.SetVendor(vendor)
	return m
}

// ID is "": nothing is kept by a C answer's id.
func (m *Meter) ID() string { return "" }

// StreamError is an error chunk then [DONE].
func (m *Meter) StreamError(requestID string, e *gw.Error) []byte {
	return errorChunkDone(requestID, e)
}

// State: see shape.State.ReasoningInBody.
func (Shape) State() shape.State { return shape.State{ReasoningInBody: true} }

// Interface guards.
var (
	_ shape.Shape    = Shape{}
	_ shape.Stateful = Shape{}
)
