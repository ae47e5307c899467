package google

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// maxMessage bounds the vendor text kept in an error message (Gemini's
// schema errors list every offending field and can run to kilobytes).
const maxMessage = 2000

// parseRPC reads a google.rpc error body: {"error":{...}}, or the same
// inside a one-element array (how streamGenerateContent without alt=sse
// answers). It returns nil when body is neither.
func parseRPC(body []byte) *rpcStatus {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var arr []struct {
			Error *rpcStatus `json:"error"`
		}
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
			return arr[0].Error
		}
		return nil
	}
	var env struct {
		Error *rpcStatus `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		return nil
	}
	return env.Error
}

// statusError maps a failed answer (status, headers, body) to the
// gateway's error. apiKey, when not empty, is scrubbed from the message.
func statusError(status int, h http.Header, body []byte, apiKey string) *gw.Error {
	e := rpcError(status, h, parseRPC(body))
	if apiKey != "" && strings.Contains(e.Message, apiKey) {
		e.Message = strings.ReplaceAll(e.Message, apiKey, "[redacted]")
	}
	if apiKey != "" && e.Err != nil && strings.Contains(e.Err.Error(), apiKey) {
		e.Err = fmt.Errorf("google answered %d (detail withheld: it named the key)", status)
	}
	return e
}

// rpcError maps a google.rpc status (st may be nil: then only the HTTP
// status counts) to the gateway's error:
//
//	RESOURCE_EXHAUSTED                          rate_limited, RetryAfter from RetryInfo.retryDelay
//	UNAVAILABLE                                 overloaded
//	INVALID_ARGUMENT, FAILED_PRECONDITION,
//	OUT_OF_RANGE                                invalid_request, "google: " + the vendor's message
//	NOT_FOUND                                   not_found
//	DEADLINE_EXCEEDED                           upstream_timeout
//	UNAUTHENTICATED, PERMISSION_DENIED, and a
//	400 whose ErrorInfo reason is API_KEY_*     upstream_error (the gateway's key, not the caller's)
//	anything else                               by HTTP status (internal/upstream)
func rpcError(status int, h http.Header, st *rpcStatus) *gw.Error {
	if h == nil {
		h = http.Header{}
	}
	var msg, code string
	if st != nil {
		msg, code = truncate(strings.TrimSpace(st.Message), maxMessage), st.Status
		if status == 0 {
			status = st.Code
		}
	}
	if status < 400 || status > 599 {
		status = http.StatusBadGateway
	}
	if st != nil && keyProblem(st) {
		// Google answers a wrong key with 400 INVALID_ARGUMENT: that is
		// the gateway's configuration, never the caller's request.
		return upstream.StatusError("google", http.StatusUnauthorized, h, msg)
	}
	switch code {
	case "UNAUTHENTICATED":
		return upstream.StatusError("google", http.StatusUnauthorized, h, msg)
	case "PERMISSION_DENIED":
		return upstream.StatusError("google", http.StatusForbidden, h, msg)
	}
	e := upstream.StatusError("google", status, h, msg)
	switch code {
	case "RESOURCE_EXHAUSTED":
		e.Code = gw.CodeRateLimited
		if d, ok := retryDelay(st); ok && h.Get("Retry-After") == "" {
			// The upstream client passes the delay on as Retry-After,
			// capped (GATEWAY_KEY_REST_MAX); the body's is uncapped.
			e.RetryAfter = d
		}
		if e.RetryAfter <= 0 {
			e.RetryAfter = time.Second
		}
	case "UNAVAILABLE":
		e.Code = gw.CodeOverloaded
		if d, ok := retryDelay(st); ok {
			e.RetryAfter = d
		}
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		e.Code, e.RetryAfter = gw.CodeInvalidRequest, 0
		e.Message = "google: " + orStatus(msg, status)
	case "NOT_FOUND":
		e.Code, e.RetryAfter = gw.CodeNotFound, 0
		e.Message = "model_not_found: google: " + orStatus(msg, status)
	case "DEADLINE_EXCEEDED":
		e.Code, e.RetryAfter = gw.CodeUpstreamTimeout, 0
	case "INTERNAL", "UNKNOWN", "DATA_LOSS", "ABORTED", "CANCELLED":
		e.Code, e.RetryAfter = gw.CodeUpstream, 0
	}
	return e
}

func orStatus(msg string, status int) string {
	if msg == "" {
		return http.StatusText(status)
	}
	return msg
}

// keyProblem reports an ErrorInfo that blames the API key.
func keyProblem(st *rpcStatus) bool {
	for _, d := range st.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && strings.HasPrefix(d.Reason, "API_KEY_") {
			return true
		}
	}
	return false
}

// retryDelay reads RetryInfo.retryDelay, a protobuf Duration in JSON
// ("30s", "1.5s").
func retryDelay(st *rpcStatus) (time.Duration, bool) {
	if st == nil {
		return 0, false
	}
	for _, d := range st.Details {
		if !strings.HasSuffix(d.Type, "google.rpc.RetryInfo") || !strings.HasSuffix(d.RetryDelay, "s") {
			continue
		}
		v, err := time.ParseDuration(d.RetryDelay)
		if err == nil && v > 0 {
			return v, true
		}
	}
	return 0, false
}

// streamError maps an error record that arrived after HTTP 200: overloaded
// for UNAVAILABLE (503), upstream_error otherwise, with the vendor's
// message.
func streamError(st *rpcStatus) *gw.Error {
	msg := truncate(strings.TrimSpace(st.Message), maxMessage)
	if msg == "" {
		msg = "the stream failed"
	}
	e := &gw.Error{Code: gw.CodeUpstream, Message: "google: " + msg, Err: fmt.Errorf("google stream error %d %s", st.Code, st.Status)}
	if st.Status == "UNAVAILABLE" || st.Code == http.StatusServiceUnavailable {
		e.Code = gw.CodeOverloaded
	}
	return e
}
