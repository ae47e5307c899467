package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	gw "github.com/gwlabs/gateway"
	geminishape "github.com/gwlabs/gateway/shape/gemini"
)

// errorObject is error in the envelope.
type errorObject struct {
	Type    gw.Code `json:"type"`
	Message string  `json:"message"`
	// Code and Param are the Responses shape's (OpenAI's error.code,
	// error.param): the finer reason when there is one, else the type.
	Code       *string       `json:"code,omitempty"`
	Param      *string       `json:"param,omitempty"`
	RequestID  string        `json:"request_id"`
	IncidentID string        `json:"incident_id,omitempty"`
	Details    *errorDetails `json:"details,omitempty"`
}

// errorDetails carries gw.Error.ErrorCode.
type errorDetails struct {
	ErrorCode string `json:"error_code"`
}

// envelopeC is the error body on the chat-completions endpoint.
type envelopeC struct {
	Error errorObject `json:"error"`
}

// envelopeM is the error body on the messages endpoint: a top-level
// "type":"error", as Anthropic's SDK expects.
type envelopeM struct {
	Type  string      `json:"type"`
	Error errorObject `json:"error"`
}

// errorBody encodes the envelope of shape.
func errorBody(shape gw.Shape, rid string, e *gw.Error) []byte {
	if shape == gw.ShapeG {
		return geminishape.ErrorBody(e, rid)
	}
	obj := errorObject{Type: e.Code, Message: e.Message, RequestID: rid, IncidentID: e.IncidentID}
	if e.ErrorCode != "" {
		obj.Details = &errorDetails{ErrorCode: e.ErrorCode}
	}
	if shape == gw.ShapeR {
		code := string(e.Code)
		if e.ErrorCode != "" {
			code = e.ErrorCode
		}
		obj.Code = &code
	}
	var v any = envelopeC{Error: obj}
	if shape == gw.ShapeM {
		v = envelopeM{Type: "error", Error: obj}
	}
	b, _ := json.Marshal(v)
	return b
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1.
func retryAfterSeconds(e *gw.Error) string {
	return strconv.Itoa(max(1, int(math.Ceil(e.RetryAfter.Seconds()))))
}

// writeError sends e in shape's envelope with its status, Retry-After
// (always on 429) and x-should-retry: false on errors a retry cannot fix.
func writeError(w http.ResponseWriter, shape gw.Shape, rid string, e *gw.Error) {
	if sw, ok := w.(*statusWriter); ok {
		sw.err = e
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del(HeaderCharge)
	h.Del("Trailer")
	if e.Code == gw.CodeRateLimited || e.RetryAfter > 0 {
		h.Set("Retry-After", retryAfterSeconds(e))
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(e.Code.Status())
	_, _ = w.Write(errorBody(shape, rid, e))
}
