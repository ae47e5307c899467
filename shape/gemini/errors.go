package gemini

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	gw "github.com/gwlabs/gateway"
)

// Status is the google.rpc code name for an HTTP status, as Google's APIs
// pair them.
func Status(httpStatus int) string {
	switch httpStatus {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusMethodNotAllowed:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusPaymentRequired:
		return "FAILED_PRECONDITION"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

type errorEnvelope struct {
	Error errorStatus `json:"error"`
}

type errorStatus struct {
	Code    int      `json:"code"`
	Message string   `json:"message"`
	Status  string   `json:"status"`
	Details []detail `json:"details,omitempty"`
}

// detail is a google.rpc ErrorInfo or RetryInfo.
type detail struct {
	Type       string            `json:"@type"`
	Reason     string            `json:"reason,omitempty"`
	Domain     string            `json:"domain,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	RetryDelay string            `json:"retryDelay,omitempty"`
}

// ErrorDomain is ErrorInfo.domain on the gateway's errors.
const ErrorDomain = "gateway"

// ErrorBody is e in Google's envelope, {"error":{"code","message",
// "status","details"}}: code is the HTTP status, status its google.rpc
// name, details an ErrorInfo (reason: the gateway's error code, or its
// finer error_code; metadata: the request id and any incident id) and,
// when the caller should wait (always on 429), a RetryInfo whose
// retryDelay is the wait in whole seconds.
func ErrorBody(e *gw.Error, requestID string) []byte {
	status := e.Code.Status()
	info := detail{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: string(e.Code), Domain: ErrorDomain, Metadata: map[string]string{"request_id": requestID}}
	if e.ErrorCode != "" {
		info.Reason = e.ErrorCode
	}
	if e.IncidentID != "" {
		info.Metadata["incident_id"] = e.IncidentID
	}
	out := errorEnvelope{Error: errorStatus{Code: status, Message: e.Message, Status: Status(status), Details: []detail{info}}}
	if e.Code == gw.CodeRateLimited || e.RetryAfter > 0 {
		secs := max(1, int(math.Ceil(e.RetryAfter.Seconds())))
		out.Error.Details = append(out.Error.Details, detail{Type: "type.googleapis.com/google.rpc.RetryInfo", RetryDelay: strconv.Itoa(secs) + "s"})
	}
	b, _ := json.Marshal(&out)
	return b
}
