package anthropic

import (
	"encoding/json"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// statusError maps Anthropic's {"type":"error","error":{"type","message"}}
// answer. A 413 may come from the vendor's edge as an HTML page: only the
// status counts then, never the body.
func statusError(status int, h http.Header, body []byte) *gw.Error {
	var eb struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Details struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &eb) == nil {
		msg = eb.Error.Message
	}
	e := upstream.StatusError("anthropic", status, h, msg)
	// overloaded_error can come with 529 or, behind some proxies, 503.
	if eb.Error.Type == "overloaded_error" {
		e.Code = gw.CodeOverloaded
	}
	// A finer reason the SDKs act on (thread_not_found: replay the
	// conversation) goes on to the caller.
	e.ErrorCode = eb.Error.Details.ErrorCode
	return e
}
