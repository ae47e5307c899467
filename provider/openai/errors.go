package openai

import (
	"encoding/json"
	"net/http"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// errorBody covers the error bodies of the OpenAI-compatible vendors:
// OpenAI, Groq, DeepSeek, Together and Fireworks nest {"error":{message,
// type, code}}; OpenRouter nests {"error":{code (a number), message,
// metadata}}; Mistral puts {"object":"error", message, type, code} at the
// top level, and its validation errors carry "detail".
type errorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
	Object  string          `json:"object"`
	Message json.RawMessage `json:"message"`
	Detail  json.RawMessage `json:"detail"`
}

// vendorMessage extracts a human-readable message and the vendor's error
// code from an error body; it never returns the raw body of a non-JSON
// answer (an HTML error page, say).
func vendorMessage(body []byte) (msg, code string) {
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil {
		return "", ""
	}
	if eb.Error != nil {
		code = strings.Trim(string(eb.Error.Code), `"`)
		return eb.Error.Message, code
	}
	if len(eb.Message) > 0 {
		var s string
		if json.Unmarshal(eb.Message, &s) == nil {
			return s, ""
		}
		return string(eb.Message), ""
	}
	if len(eb.Detail) > 0 {
		var s string
		if json.Unmarshal(eb.Detail, &s) == nil {
			return s, ""
		}
		return "invalid request: " + string(eb.Detail), ""
	}
	return "", ""
}

func (p *Provider) statusError(status int, h http.Header, body []byte) *gw.Error {
	msg, code := vendorMessage(body)
	e := upstream.StatusError(p.cfg.Vendor, status, h, msg)
	// OpenAI says 429 both for rate limits and for an exhausted account;
	// the latter is the gateway's own billing problem at the vendor and
	// retrying will not help.
	if status == http.StatusTooManyRequests && code == "insufficient_quota" {
		e.Code, e.NoRetry, e.RetryAfter = gw.CodeUpstream, true, 0
	}
	return e
}
