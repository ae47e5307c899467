package gw

import (
	"context"
	"io"
	"net/http"
	"time"
)

// Call is one upstream request, already in the vendor's native shape.
type Call struct {
	RequestID string
	Model     string // vendor model id, prefix stripped
	Stream    bool
	Body      []byte
	// Endpoint is the shape of Body when it differs from the provider's
	// own (a native OpenAI Responses request, ShapeR, on a provider that
	// is a ResponsesNative); "" means the provider's shape.
	Endpoint Shape
	// Header holds the caller's headers; each provider forwards only
	// those meant for it (anthropic-version and anthropic-beta to
	// Anthropic, OpenAI-Organization and OpenAI-Project to OpenAI).
	Header http.Header
	// Received is when the caller's request arrived: retries start only
	// within the retry budget counted from it (zero: from the call).
	Received time.Time
}

// Provider is one upstream vendor.
//
// Send performs the call and returns the vendor's 2xx answer with its body
// unread, or an *Error mapped from the vendor's failure: invalid_request,
// not_found, request_too_large, rate_limited (with RetryAfter),
// overloaded, upstream_error, upstream_timeout or vendor_unavailable.
// Send retries only before it returns an answer. Cancelling ctx aborts the
// call and, after Send returned, the body.
//
// PassThrough prepares a caller body of the provider's own shape for
// Send: it rewrites only "model" and, on a stream whose caller did not ask
// for usage, asks the vendor for it; hideUsage then says the usage-only
// chunk must be held back from the caller. (The Anthropic adapter also adds
// prompt-cache breakpoints when the caller set none; see its cache.go.)
type Provider interface {
	Name() string
	Shape() Shape
	Send(ctx context.Context, c *Call) (*Upstream, error)
	PassThrough(body []byte, model string, stream bool) (out []byte, hideUsage bool, err error)
}

// ResponsesNative is an optional ability of a Provider (found by type
// assertion) whose vendor serves the OpenAI Responses API (shape R)
// itself. SpeaksResponses says whether this vendor does (one adapter
// type serves several vendors); PassThroughResponses prepares a caller's
// R body for Send (with Call.Endpoint ShapeR), rewriting only "model".
type ResponsesNative interface {
	SpeaksResponses() bool
	PassThroughResponses(body []byte, model string) ([]byte, error)
}

// SpeaksNatively reports whether p serves the endpoint shape itself:
// its own shape, or R on a ResponsesNative vendor that speaks it.
func SpeaksNatively(p Provider, endpoint Shape) bool {
	if p.Shape() == endpoint {
		return true
	}
	if endpoint == ShapeR {
		if rn, ok := p.(ResponsesNative); ok {
			return rn.SpeaksResponses()
		}
	}
	return false
}

// Normalizer is an optional ability of a Provider (found by type
// assertion) whose native answers deviate from its own shape in ways that
// break the official SDKs' helpers. On native routes the server passes
// the vendor's answer through it: a whole body through NormalizeBody, and
// each stream event's data through the function NormalizeStream returns
// for that stream (nil: the stream needs none). Both change only the
// deviating members and return their input itself when there is nothing
// to fix.
type Normalizer interface {
	NormalizeBody(body []byte) []byte
	NormalizeStream() func(data []byte) []byte
}

// Codec translates between the canonical types and a vendor's native
// shape, for mapped routes (the caller's shape differs from the vendor's).
// Every Provider implements it.
//
// EncodeRequest returns an *Error with CodeInvalidRequest naming the field
// when the request asks for something the vendor cannot honour.
// DecodeStream takes ownership of body and closes it on Close.
type Codec interface {
	EncodeRequest(r *Request) ([]byte, error)
	DecodeResponse(body []byte) (*Response, error)
	DecodeStream(body io.ReadCloser) EventStream
}
