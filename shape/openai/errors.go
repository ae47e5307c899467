package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gwlabs/gateway"
)

// upstreamErr is a CodeUpstream error with a caller-facing message and a
// cause for the logs.
func upstreamErr(msg string, cause error) *gw.Error {
	return &gw.Error{Code: gw.CodeUpstream, Message: msg, Err: cause}
}

// invalid is a CodeInvalidRequest error with a formatted message.
func invalid(format string, args ...any) *gw.Error {
	return gw.Errorf(gw.CodeInvalidRequest, format, args...)
}

// wireError is a C error object: {"message","type","param","code"} with
// code a string (OpenAI, Groq) or an integer (OpenRouter).
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// streamError maps an in-stream error payload (the value of an "error"
// key: an object or a bare string) to a gateway error. vendor prefixes
// the message as the product decisions require; an overload signal
// (overloaded type or code, 503, 529) becomes CodeOverloaded, anything
// else CodeUpstream.
func streamError(vendor string, raw json.RawMessage) *gw.Error {
	raw = bytes.TrimSpace(raw)
	var msg, typ, code string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		_ = json.Unmarshal(raw, &msg)
	case len(raw) > 0 && raw[0] == '{':
		var w wireError
		if err := json.Unmarshal(raw, &w); err == nil {
			msg, typ = w.Message, w.Type
			code = strings.Trim(string(w.Code), `"`)
		}
	}
	return vendorError(vendor, msg, typ, code)
}

// vendorError builds the gateway error for a vendor's in-stream failure.
func vendorError(vendor, msg, typ, code string) *gw.Error {
	c := gw.CodeUpstream
	if isOverload(typ) || isOverload(code) {
		c = gw.CodeOverloaded
	}
	if msg == "" {
		msg = typ
	}
	if msg == "" {
		msg = "stream error"
	}
	if vendor == "" {
		vendor = "upstream"
	}
	return &gw.Error{Code: c, Message: vendor + ": " + msg}
}

func isOverload(s string) bool {
	if s == "" {
		return false
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n == 503 || n == 529
	}
	return strings.Contains(strings.ToLower(s), "overloaded")
}

// clientErrorChunk is the in-stream error payload sent to C clients.
type clientErrorChunk struct {
	Error clientError `json:"error"`
}

type clientError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
	// IncidentID names the guard's incident when an answer was stopped.
	IncidentID string `json:"incident_id,omitempty"`
}

// ErrorChunk returns the data payload of the in-stream error a C client
// receives after a stream has started: {"error":{"type","message",
// "request_id"}}, the gateway's envelope, which the OpenAI SDKs raise on.
// The caller writes it as one `data:` event followed by `data: [DONE]`.
func ErrorChunk(requestID string, e *gw.Error) []byte {
	if e == nil {
		e = &gw.Error{Code: gw.CodeInternal, Message: "internal error"}
	}
	b, err := json.Marshal(clientErrorChunk{Error: clientError{
		Type: string(e.Code), Message: e.Message, RequestID: requestID, IncidentID: e.IncidentID,
	}})
	if err != nil {
		// Strings always marshal; keep a valid payload regardless.
		return []byte(`{"error":{"type":"internal_error","message":"internal error"}}`)
	}
	return b
}
