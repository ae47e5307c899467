package optimize

import (
	"strconv"
	"strings"
)

// Version is the directive's version. It changes whenever Text does; the
// count cache is keyed on it and each request's record carries it.
const Version = 1

// Text is the directive. It must stay short (it rides on every request),
// must never ask to shorten what the caller asked for, and must contain no
// character that JSON encoders escape (quotes, backslash, <, >, &), so
// that its bytes appear verbatim in every body.
const Text = "Answer concisely: no preamble, no restating the question, no closing summary unless asked. " +
	"Never shorten code, data, structured output, or any format or length the user asked for."

// Header is the request and response header that switches the layer off
// for one request ("off") and reports what ran.
const Header = "X-Gateway-Optimize"

// Note returns the note a request's record carries when the directive
// was sent: "optimizer=vN".
func Note() string { return note }

// HeaderValue returns the response header value: "applied; v=N" or "off".
func HeaderValue(applied bool) string {
	if !applied {
		return "off"
	}
	return appliedValue
}

// The note and header value, made once (they ride on every request).
var (
	note         = "optimizer=v" + strconv.Itoa(Version)
	appliedValue = "applied; v=" + strconv.Itoa(Version)
)

// RequestOff reports whether a request header value asks for the layer to
// be off for this request ("off", "false", "0", case-insensitive).
func RequestOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "false", "0":
		return true
	}
	return false
}
