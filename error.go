// Package gw holds the gateway's vocabulary: the canonical chat request,
// response and stream events that the shape mappers and vendor adapters
// translate to and from, the normalised usage record that billing prices,
// money, errors, and the interfaces that several packages share (Provider,
// Store, Limiter). It imports only the standard library; every outside
// concern (HTTP, SQL, a vendor's wire format) lives in a package of its own.
package gw

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code is an error code: the value of error.type in the gateway's error
// envelope. The set is fixed by the product decisions; each maps to one
// HTTP status (see Status).
type Code string

// Error codes, as they appear in error.type.
const (
	CodeInvalidRequest      Code = "invalid_request"
	CodeAuthentication      Code = "authentication_error"
	CodeInsufficientBalance Code = "insufficient_balance"
	CodeRequestBlocked      Code = "request_blocked"
	CodeNotFound            Code = "not_found"
	// CodeConflict is the admin API's: the call contradicts the state
	// (an account name taken, a revoked key rotated).
	CodeConflict          Code = "conflict"
	CodeMethodNotAllowed  Code = "method_not_allowed"
	CodeRequestTooLarge   Code = "request_too_large"
	CodeRateLimited       Code = "rate_limited"
	CodeInternal          Code = "internal_error"
	CodeUpstream          Code = "upstream_error"
	CodeVendorUnavailable Code = "vendor_unavailable"
	CodeOverloaded        Code = "overloaded"
	CodeUpstreamTimeout   Code = "upstream_timeout"
)

// Status returns the HTTP status for the code. Unknown codes are 500.
func (c Code) Status() int {
	switch c {
	case CodeInvalidRequest:
		return http.StatusBadRequest
	case CodeAuthentication:
		return http.StatusUnauthorized
	case CodeInsufficientBalance:
		return http.StatusPaymentRequired
	case CodeRequestBlocked:
		return http.StatusForbidden
	case CodeConflict:
		return http.StatusConflict
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUpstream:
		return http.StatusBadGateway
	case CodeVendorUnavailable, CodeOverloaded:
		return http.StatusServiceUnavailable
	case CodeUpstreamTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// Error is the gateway's error. Message is what the caller sees; Err is the
// cause, for logs only (it may name hosts or carry vendor detail).
type Error struct {
	Code    Code
	Message string
	Err     error

	// RetryAfter, when positive, is sent as Retry-After (whole seconds,
	// at least 1). Always set for CodeRateLimited.
	RetryAfter time.Duration
	// IncidentID is set on CodeRequestBlocked.
	IncidentID string
	// NoRetry marks errors a client must not retry (x-should-retry: false).
	NoRetry bool
	// ErrorCode, when set, is a finer machine-readable reason, sent as
	// error.details.error_code (e.g. "thread_not_found", on which
	// Anthropic's SDKs replay a lost thread).
	ErrorCode string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted caller-facing message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal when there is none (and "" for a nil error).
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as an *Error, wrapping a foreign error as an internal
// one whose message hides the cause.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// ErrNotFound is returned by stores for a missing row.
var ErrNotFound = errors.New("not found")
