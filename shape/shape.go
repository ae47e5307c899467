// Package shape declares what an ingress shape provides to the server:
// Shape, implemented by shape/anthropic (M), shape/openai (C),
// shape/responses (R) and shape/gemini (G), and Registry, the server's
// table of them. The server looks a request's shape up once and calls it
// to read the request, write the answer, an error or a stream, and meter
// a relayed answer; it holds no case per shape.
package shape

import (
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/sse"
)

// Shape is one ingress shape: how its callers' requests read and how its
// answers, errors and streams are written. A shape may have extra
// abilities, found by type assertion: Stateful, Echoer.
type Shape interface {
	Endpoint
	Decoder
	Writer
	Metering
}

// Endpoint is how a shape's requests arrive over HTTP.
type Endpoint interface {
	// Name is the shape's endpoint name (gw.ShapeM...).
	Name() gw.Shape
	// Path is the POST path of its chat endpoint, or "" when the shape
	// routes by pattern (G: /v1beta/models/{model}:{method}).
	Path() string
	// Credential is the caller's key as an Authorization value, read
	// where the shape's SDKs send it.
	Credential(r *http.Request) string
	// RequestIDHeader names the header that echoes the request id to
	// the shape's SDKs.
	RequestIDHeader() string
	// SpanName names the request's trace span.
	SpanName(r *http.Request) string
}

// Decoder reads a shape's requests. Errors are *gw.Error with
// gw.CodeInvalidRequest.
type Decoder interface {
	// Parse validates the body and reads it, once, for routing, hold
	// sizing and the guard. path is the URL path (G names the model
	// there).
	Parse(path string, body []byte) (Request, error)
	// Canonical is the request in canonical form, for a vendor that
	// speaks another shape; req is what Parse returned for body. A
	// shape whose canonical form needs kept conversation state (R)
	// returns nil, nil: the server builds it.
	Canonical(req *Request, body []byte) (*gw.Request, error)
}

// Writer writes a shape's answers and errors.
type Writer interface {
	// EncodeResponse writes a canonical answer in the shape.
	EncodeResponse(resp *gw.Response, meta Meta) ([]byte, error)
	// NewStreamEncoder writes canonical stream events in the shape, as
	// SSE.
	NewStreamEncoder(w io.Writer, meta Meta) Encoder
	// ErrorBody is e in the shape's error envelope.
	ErrorBody(requestID string, e *gw.Error) []byte
	// StreamError is e as the shape's in-stream error, sent after a
	// stream has begun (with the stream's terminator where it has one).
	StreamError(requestID string, e *gw.Error) []byte
	// StreamTail is what a caller's SDK still waits for when a relayed
	// stream stopped before its terminator: after a whole answer
	// (afterError false) or after the vendor's own error event. nil:
	// nothing.
	StreamTail(afterError bool) []byte
}

// Metering reads the usage of a vendor's answer in the shape, relayed as
// the vendor sent it.
type Metering interface {
	// UsageFromBody reads the usage of a whole answer. An error says
	// the body is not an answer at all; malformed counts only mark the
	// usage Malformed.
	UsageFromBody(body []byte) (gw.Usage, error)
	// NewMeter returns a Meter for one relayed stream of vendor.
	// hideUsage: the gateway asked for stream usage the caller did not.
	NewMeter(vendor string, hideUsage bool) Meter
}

// Stateful is a shape whose callers use the gateway's conversation state.
type Stateful interface {
	State() State
}

// State is the conversation state the gateway keeps for a shape's
// callers (package convstate), beyond the reasoning and signatures it
// keeps for any mapped answer.
type State struct {
	// Threads: the thread extension (a request names the thread it
	// continues; a native answer's size is kept for its next continue),
	// and an answer is shown without the Gemini signature carriers the
	// gateway keeps for the next turn. M.
	Threads bool
	// ReasoningInBody: a native request's body gets back the reasoning
	// its vendor needs and the client left out, and a relayed answer's
	// reasoning is kept. C.
	ReasoningInBody bool
	// KeptResponses: answers are kept as response objects the next turn
	// names (previous_response_id), and a native one is marked as the
	// account's; nothing else is kept of an answer. R.
	KeptResponses bool
}

// Echoer is a shape whose native answers echo part of the request.
type Echoer interface {
	// Unoptimized returns the edit that makes a native answer (stream:
	// each event's data) echo the caller's body rather than the one the
	// optimizer changed.
	Unoptimized(body []byte, stream bool) func([]byte) []byte
}

// Request is what Parse reads of a request.
type Request struct {
	Model     string
	Stream    bool
	MaxOutput int64
	// Text is what the guard reads.
	Text []gw.Text
	// Models is the caller's fallback list; HasModels says the body had
	// a "models" member (removed before a vendor sees it).
	Models    []string
	HasModels bool
	// Top is the body's top-level members with their offsets, when the
	// parse found them on its way (M and C): later stages look members
	// up there instead of scanning the body again. Nil otherwise.
	Top []rawjson.Member
	// Messages is the elements of the messages array, offsets into its
	// value, when the parse found them (M and C); nil otherwise (and for
	// an empty array).
	Messages []rawjson.Span
	// Parsed is the shape's own reading, for what only it uses (R: its
	// *responses.Request; G: its *gemini.Parsed).
	Parsed any
}

// Meta is what an answer says beyond its content.
type Meta struct {
	RequestID string
	// Vendor and Model serve the answer.
	Vendor, Model string
	// Created is the time the request was received, in Unix seconds.
	Created int64
	// Body is the caller's request body; Canonical its canonical form.
	Body      []byte
	Canonical *gw.Request
	// State is what the shape's conversation state made for this
	// answer (R: a responses.Meta), nil when it keeps none.
	State any
}

// Encoder writes canonical stream events.
type Encoder interface{ Encode(ev gw.Event) error }

// Meter reads usage on the side of a relayed stream, event by event.
type Meter interface {
	// Observe looks at one event; hide says the caller must not get it
	// (usage the gateway asked for on the caller's behalf).
	Observe(ev *sse.Event) (hide bool)
	Usage() gw.Usage
	// Done: the vendor said how the answer ended.
	Done() bool
	// Err is the vendor's in-stream error, if it sent one.
	Err() *gw.Error
	// ID is the answer's id, "" until seen.
	ID() string
	// StreamError is e as the in-stream error that follows the events
	// observed.
	StreamError(requestID string, e *gw.Error) []byte
}

// Registry is the server's table of ingress shapes.
type Registry struct {
	byName map[gw.Shape]Shape
	byPath map[string]Shape
}

// NewRegistry returns a registry of shapes.
func NewRegistry(shapes ...Shape) *Registry {
	r := &Registry{byName: map[gw.Shape]Shape{}, byPath: map[string]Shape{}}
	for _, s := range shapes {
		if _, dup := r.byName[s.Name()]; dup {
			panic("shape: " + string(s.Name()) + " registered twice")
		}
		r.byName[s.Name()] = s
		if p := s.Path(); p != "" {
			r.byPath[p] = s
		}
	}
	return r
}

// Get returns the shape named n, or nil.
func (r *Registry) Get(n gw.Shape) Shape { return r.byName[n] }

// ByPath returns the shape whose chat endpoint is path, or nil.
func (r *Registry) ByPath(path string) Shape { return r.byPath[path] }

// BearerOr is the Authorization header, else the named header's key as a
// Bearer value ("" when neither is set).
func BearerOr(r *http.Request, header string) string {
	if a := r.Header.Get("Authorization"); a != "" {
		return a
	}
	if header != "" {
		if k := r.Header.Get(header); k != "" {
			return "Bearer " + k
		}
	}
	return ""
}
