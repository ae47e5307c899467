package gemini

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/shape"
	"github.com/gwlabs/gateway/sse"
)

// Shape is the G ingress shape: Google's generateContent and
// streamGenerateContent on /v1beta/models/{model}:{method}.
type Shape struct{}

// Name is gw.ShapeG.
func (Shape) Name() gw.Shape { return gw.ShapeG }

// Path is "": G routes by pattern (see SplitPath).
func (Shape) Path() string { return "" }

// Credential is the Authorization header, else x-goog-api-key (Google's
// SDKs and Gemini CLI), else ?key=.
func (Shape) Credential(r *http.Request) string {
	if a := shape.BearerOr(r, "X-Goog-Api-Key"); a != "" {
		return a
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return "Bearer " + k
	}
	return ""
}

// RequestIDHeader is X-Request-Id.
func (Shape) RequestIDHeader() string { return "X-Request-Id" }

// SpanName names the span by its method, without the model:
// "POST /v1beta/models/{model}:generateContent".
func (Shape) SpanName(r *http.Request) string {
	_, method, _ := SplitPath(r.URL.Path)
	version := "/v1beta"
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		version = "/v1"
	}
	return "POST " + version + "/models/{model}:" + method
}

// Parse reads the model and the stream flag from the path, the rest from
// the body (see Parse). There is no "models" list: fallbacks come from an
// operator route (gw/NAME) named as the model. Parsed is the *Parsed.
func (Shape) Parse(path string, body []byte) (shape.Request, error) {
	model, method, _ := SplitPath(path)
	if model == "" {
		return shape.Request{}, gw.Errorf(gw.CodeInvalidRequest, "the path names no model: use /v1beta/models/{vendor}/{model}:generateContent")
	}
	if len(model) > MaxModelBytes {
		return shape.Request{}, gw.Errorf(gw.CodeInvalidRequest, "model: a model id has at most %d bytes", MaxModelBytes)
	}
	g, err := Parse(body)
	if err != nil {
		return shape.Request{}, err
	}
	return shape.Request{Model: model, Stream: method == MethodStream, MaxOutput: g.MaxOutput, Text: g.Text, Parsed: g}, nil
}

// Canonical is the canonical form Parse made; what only google/ serves
// is refused (see Parsed.Mappable).
func (Shape) Canonical(req *shape.Request, _ []byte) (*gw.Request, error) {
	g := req.Parsed.(*Parsed)
	if err := g.Mappable(); err != nil {
		return nil, err
	}
	return g.Canonical, nil
}

// meta is the answer's metadata for a mapped G caller.
func meta(m shape.Meta) Meta {
	include := false
	if raw := rawjson.Get(m.Body, "generationConfig"); raw != nil {
		if tc := rawjson.Get(raw, "thinkingConfig"); tc != nil {
			include = string(bytes.TrimSpace(rawjson.Get(tc, "includeThoughts"))) == "true"
		}
	}
	return Meta{ModelVersion: m.Vendor + "/" + m.Model, ResponseID: id.Random(m.RequestID), IncludeThoughts: include}
}

// EncodeResponse writes a GenerateContentResponse (see EncodeResponse).
func (Shape) EncodeResponse(resp *gw.Response, m shape.Meta) ([]byte, error) {
	return EncodeResponse(resp, meta(m))
}

// NewStreamEncoder writes SSE (a caller of the JSON-array stream gets it
// re-framed by the server).
func (Shape) NewStreamEncoder(w io.Writer, m shape.Meta) shape.Encoder {
	return NewStreamEncoder(w, meta(m), true, m.RequestID)
}

// ErrorBody is Google's error envelope (see ErrorBody).
func (Shape) ErrorBody(requestID string, e *gw.Error) []byte { return ErrorBody(e, requestID) }

// StreamError is an in-stream error record.
func (Shape) StreamError(requestID string, e *gw.Error) []byte { return streamError(requestID, e) }

func streamError(requestID string, e *gw.Error) []byte {
	return sse.AppendEvent(nil, "", ErrorBody(e, requestID))
}

// StreamTail is nil: a G stream has no terminator.
func (Shape) StreamTail(bool) []byte { return nil }

// UsageFromBody reads a response's usageMetadata (see UsageFromBody).
func (Shape) UsageFromBody(body []byte) (gw.Usage, error) { return UsageFromBody(body) }

// NewMeter returns a Meter.
func (Shape) NewMeter(string, bool) shape.Meter { return NewMeter() }

// StreamError is an in-stream error record.
func (m *Meter) StreamError(requestID string, e *gw.Error) []byte { return streamError(requestID, e) }

// Interface guards.
var (
	_ shape.Shape = Shape{}
)
