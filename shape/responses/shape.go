package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/shape"
)

// Shape is the R ingress shape: OpenAI Responses on /v1/responses.
type Shape struct{}

// Name is gw.ShapeR.
func (Shape) Name() gw.Shape { return gw.ShapeR }

// Path is /v1/responses.
func (Shape) Path() string { return "/v1/responses" }

// Credential is the Authorization header.
func (Shape) Credential(r *http.Request) string { return shape.BearerOr(r, "") }

// RequestIDHeader is X-Request-Id.
func (Shape) RequestIDHeader() string { return "X-Request-Id" }

// SpanName is the method and path.
func (Shape) SpanName(r *http.Request) string { return "POST " + r.URL.Path }

// Parse reads a Responses body (see Parse) and its fallback list, as on
// the other endpoints. Parsed is the *Request.
func (Shape) Parse(_ string, body []byte) (shape.Request, error) {
	r, err := Parse(body)
	if err != nil {
		return shape.Request{}, err
	}
	p := shape.Request{Model: r.Model, Stream: r.Stream, MaxOutput: r.MaxOutput, Text: r.Text, Parsed: r}
	if raw := rawjson.Get(body, "models"); raw != nil {
		// The strict parse already refused duplicate keys.
		p.HasModels = true
		if err := json.Unmarshal(raw, &p.Models); err != nil {
			return shape.Request{}, gw.Errorf(gw.CodeInvalidRequest, "models must be an array of model ids")
		}
		for _, m := range p.Models {
			if m == "" || len(m) > MaxModelBytes {
				return shape.Request{}, gw.Errorf(gw.CodeInvalidRequest, "models: a model id has 1 to %d bytes", MaxModelBytes)
			}
		}
	}
	return p, nil
}

// Canonical is nil: a Responses request's canonical form joins the kept
// conversation it continues, which the server's state builds
// (Request.Canonical).
func (Shape) Canonical(*shape.Request, []byte) (*gw.Request, error) { return nil, nil }

// meta is the Meta the conversation state made (shape.Meta.State), else
// one from the answer's model and time.
func meta(m shape.Meta) Meta {
	if rm, ok := m.State.(Meta); ok {
		return rm
	}
	return Meta{Model: m.Model, CreatedAt: m.Created}
}

// EncodeResponse writes a response object (see EncodeResponse).
func (Shape) EncodeResponse(resp *gw.Response, m shape.Meta) ([]byte, error) {
	return EncodeResponse(resp, meta(m))
}

// NewStreamEncoder returns a *StreamEncoder.
func (Shape) NewStreamEncoder(w io.Writer, m shape.Meta) shape.Encoder {
	return NewStreamEncoder(w, meta(m))
}

// ErrorBody is {"error":{...}} with error.code: the finer reason when
// there is one, else the type.
func (Shape) ErrorBody(requestID string, e *gw.Error) []byte {
	obj := shape.NewErrorObject(requestID, e)
	code := string(e.Code)
	if e.ErrorCode != "" {
		code = e.ErrorCode
	}
	obj.Code = &code
	b, _ := json.Marshal(struct {
		Error shape.ErrorObject `json:"error"`
	}{obj})
	return b
}

// StreamError is an error event without a sequence number.
func (Shape) StreamError(requestID string, e *gw.Error) []byte { return ErrorEvent(-1, e, requestID) }

// StreamTail is nil: the terminal event is the vendor's.
func (Shape) StreamTail(bool) []byte { return nil }

// UsageFromBody reads a response object's usage (see UsageFromBody).
func (Shape) UsageFromBody(body []byte) (gw.Usage, error) { return UsageFromBody(body) }

// NewMeter returns a Meter for vendor's stream.
func (Shape) NewMeter(vendor string, _ bool) shape.Meter { return NewMeter(vendor) }

// StreamError is an error event numbered after the vendor's last event.
func (m *Meter) StreamError(requestID string, e *gw.Error) []byte {
	return ErrorEvent(m.NextSeq(), e, requestID)
}

// State: see shape.State.KeptResponses.
func (Shape) State() shape.State { return shape.State{KeptResponses: true} }

// Unoptimized gives back the caller's own instructions in a native
// answer's echo of them, when the optimizer put its directive there (see
// EchoInstructions).
func (Shape) Unoptimized(body []byte, stream bool) func([]byte) []byte {
	caller := CallerInstructions(body)
	return func(d []byte) []byte { return EchoInstructions(d, caller, stream) }
}

// EchoInstructions puts the caller's own instructions back into a native
// Responses answer whose vendor request carried the optimizer's
// directive in them (OpenAI echoes the instructions it was sent): doc is
// a response object (nested says it is a stream event holding one in
// "response"), caller the caller's raw instructions value (null when it
// sent none). A document without instructions, or with the caller's
// already, is returned as it is.
func EchoInstructions(doc, caller []byte, nested bool) []byte {
	if !bytes.Contains(doc, []byte(`"instructions"`)) {
		return doc
	}
	obj := doc
	if nested {
		if obj = rawjson.Get(doc, "response"); obj == nil {
			return doc
		}
	}
	v := rawjson.Get(obj, "instructions")
	if v == nil || bytes.Equal(v, caller) {
		return doc
	}
	fixed, err := rawjson.Set(obj, "instructions", caller)
	if err != nil {
		return doc
	}
	if !nested {
		return fixed
	}
	out, err := rawjson.Set(doc, "response", fixed)
	if err != nil {
		return doc
	}
	return out
}

// CallerInstructions is the raw instructions value of the caller's
// Responses body, null when it has none.
func CallerInstructions(body []byte) []byte {
	if v := rawjson.Get(body, "instructions"); v != nil {
		return v
	}
	return []byte("null")
}

// Interface guards.
var (
	_ shape.Shape    = Shape{}
	_ shape.Stateful = Shape{}
	_ shape.Echoer   = Shape{}
)
