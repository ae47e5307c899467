package fakevendor

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// vendorError is an error answer in a vendor's own format.
type vendorError struct {
	status int
	body   []byte
	header http.Header
}

// defaultMessage is the message the fake puts in a scripted error.
func defaultMessage(status int) string {
	switch status {
	case 400:
		return "Invalid request (fake vendor)."
	case 401:
		return "Invalid API key (fake vendor)."
	case 402:
		return "Insufficient balance (fake vendor)."
	case 403:
		return "Permission denied (fake vendor)."
	case 404:
		return "Not found (fake vendor)."
	case 408:
		return "Request timed out (fake vendor)."
	case 429:
		return "Rate limit reached (fake vendor)."
	case 500:
		return "Internal server error (fake vendor)."
	case 502:
		return "Bad gateway (fake vendor)."
	case 503:
		return "Service unavailable (fake vendor)."
	case 504:
		return "Gateway timeout (fake vendor)."
	case 529:
		return "Overloaded"
	}
	return "Error " + strconv.Itoa(status) + " (fake vendor)."
}

// openaiType returns OpenAI's error type and code for a status.
func openaiType(vendor string, status int) (typ string, code any) {
	switch status {
	case 401:
		if vendor == "deepseek" {
			return "authentication_error", "invalid_request_error"
		}
		return "invalid_request_error", "invalid_api_key"
	case 402:
		return "insufficient_balance_error", "insufficient_balance"
	case 403:
		return "permission_error", "unsupported_country_region_territory"
	case 404:
		return "invalid_request_error", "model_not_found"
	case 429:
		return "requests", "rate_limit_exceeded"
	}
	if status >= 500 {
		return "server_error", nil
	}
	return "invalid_request_error", nil
}

// anthropicType returns Anthropic's error type for a status.
func anthropicType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// googleStatus returns the google.rpc status name for an HTTP status.
func googleStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// mistralType returns Mistral's error type for a status.
func mistralType(status int) string {
	switch status {
	case 401:
		return "unauthorized"
	case 404:
		return "invalid_model"
	case 422:
		return "invalid_request_error"
	case 429:
		return "rate_limited"
	}
	if status >= 500 {
		return "service_unavailable"
	}
	return "invalid_request_error"
}

// errorObject returns the JSON value of a vendor's error body (also used
// for in-stream errors of the OpenAI-compatible and Gemini vendors).
func errorObject(c *call, vendor string, status int, msg string, retry int) map[string]any {
	switch vendor {
	case "anthropic":
		return map[string]any{
			"type":       "error",
			"error":      map[string]any{"type": anthropicType(status), "message": msg},
			"request_id": "req_011" + idFrom(seedOf(c), "request", 21),
		}
	case "google":
		e := map[string]any{"code": status, "message": msg, "status": googleStatus(status)}
		if status == 429 {
			e["details"] = googleQuotaDetails(c, retry)
		}
		return map[string]any{"error": e}
	case "mistral":
		return map[string]any{"object": "error", "message": msg, "type": mistralType(status), "param": nil, "code": strconv.Itoa(status)}
	case "openrouter":
		meta := map[string]any{"provider_name": nil}
		if c != nil {
			meta["provider_name"] = openrouterProvider(c.model)
		}
		if status == 502 {
			meta["raw"] = msg
		}
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "metadata": meta}}
	}
	typ, code := openaiType(vendor, status)
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": code}
	if vendor == "groq" {
		delete(e, "param")
	}
	return map[string]any{"error": e}
}

// googleQuotaDetails are the details of Google's 429: a QuotaFailure
// naming the project's quota that ran out ([fake:quota=ID]; "none": no
// QuotaFailure, Google's answer when shared capacity ran out), a Help
// link and the RetryInfo delay ([fake:retry=SECONDS]). No rate-limit
// headers come with it.
func googleQuotaDetails(c *call, retry int) []any {
	quota, model := "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", ""
	if c != nil {
		model = c.model
		if c.dirs.quota != "" {
			quota = c.dirs.quota
		}
	}
	var out []any
	if quota != "none" {
		metric := "generativelanguage.googleapis.com/generate_content_free_tier_requests"
		if strings.Contains(quota, "Tokens") {
			metric = "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count"
		}
		out = append(out, map[string]any{
			"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{
				"quotaMetric":     metric,
				"quotaId":         quota,
				"quotaDimensions": map[string]any{"location": "global", "model": model},
				"quotaValue":      "15",
			}},
		})
	}
	return append(out,
		map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{map[string]any{
			"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
		map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(retry) + "s"})
}

func seedOf(c *call) [32]byte {
	if c == nil {
		return [32]byte{}
	}
	return c.seed
}

// newVendorError builds a status answer in vendor's format, with
// retry-after on 429 (all but Google, which puts RetryInfo in the body).
func newVendorError(c *call, vendor string, status int, msg string, retry int) *vendorError {
	body, _ := json.Marshal(errorObject(c, vendor, status, msg, retry))
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if status == 429 && vendor != "google" {
		h.Set("Retry-After", strconv.Itoa(retry))
	}
	if vendor == "anthropic" {
		h.Set("X-Should-Retry", strconv.FormatBool(status == 408 || status == 409 || status == 429 || status >= 500))
	}
	return &vendorError{status: status, body: body, header: h}
}

// authError returns the vendor's answer to a missing or wrong key. Google
// answers a wrong key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID)
// and a missing one with 403 PERMISSION_DENIED, as the real API does.
func authError(vendor string, missing bool) *vendorError {
	var msg string
	switch vendor {
	case "google":
		if missing {
			return newVendorError(nil, vendor, 403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", 0)
		}
		e := map[string]any{"error": map[string]any{
			"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
			"details": []any{map[string]any{
				"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
				"metadata": map[string]any{"service": "generativelanguage.googleapis.com"},
			}},
		}}
		body, _ := json.Marshal(e)
		return &vendorError{status: 400, body: body, header: http.Header{"Content-Type": {"application/json"}}}
	case "anthropic":
		msg = "invalid x-api-key"
		if missing {
			msg = "x-api-key header is required"
		}
	case "openrouter":
		msg = "User not found."
		if missing {
			msg = "No auth credentials found"
		}
	case "mistral":
		msg = "Unauthorized"
	case "deepseek":
		msg = "Authentication Fails, Your api key is invalid"
	case "groq":
		msg = "Invalid API Key"
	default:
		msg = "Incorrect API key provided. You can find your API key in your account settings."
		if missing {
			msg = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
		}
	}
	return newVendorError(nil, vendor, 401, msg, 0)
}

// modelNotFound returns the vendor's 404 for an unknown model.
func modelNotFound(c *call) *vendorError {
	var msg string
	switch c.vendor {
	case "anthropic":
		msg = "model: " + c.model
	case "google":
		msg = "models/" + c.model + " is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods."
	case "openrouter":
		msg = "No endpoints found for " + c.model + "."
	case "mistral":
		msg = "Invalid model: " + c.model
	default:
		msg = "The model `" + c.model + "` does not exist or you do not have access to it."
	}
	return newVendorError(c, c.vendor, 404, msg, 0)
}
