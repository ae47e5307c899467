package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Google's Gemini API sends no rate-limit headers. Its 429 is a
// google.rpc.Status error body (RESOURCE_EXHAUSTED) whose details say
// why and for how long:
//
//	{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"...","details":[
//	  {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
//	    {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests",
//	     "quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier", ...}]},
//	  {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}
//
// The RetryInfo delay is the wait the vendor asks for (as Retry-After is
// elsewhere); a QuotaFailure naming a quota of the key's project (every
// Gemini API quota is one: its metrics are generativelanguage.googleapis.com
// ones, its ids say PerProject) makes the 429 about the key. A
// RESOURCE_EXHAUSTED without a QuotaFailure (shared capacity) is not.
const (
	rpcRetryInfo    = "type.googleapis.com/google.rpc.RetryInfo"
	rpcQuotaFailure = "type.googleapis.com/google.rpc.QuotaFailure"
)

// rpcStatus is the part of a google.rpc.Status error body read here.
type rpcStatus struct {
	Error struct {
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
			Violations []struct {
				QuotaMetric string `json:"quotaMetric"`
				QuotaID     string `json:"quotaId"`
			} `json:"violations"`
		} `json:"details"`
	} `json:"error"`
}

// rpcRetry reads a google.rpc.Status error body: the RetryInfo delay
// (hasDelay when there is a valid one) and whether a QuotaFailure names
// a quota of the key's project or the key (keyQuota).
func rpcRetry(body []byte) (delay time.Duration, hasDelay, keyQuota bool) {
	var s rpcStatus
	if !bytes.Contains(body, []byte("google.rpc.")) || json.Unmarshal(body, &s) != nil {
		return 0, false, false
	}
	for _, d := range s.Error.Details {
		switch d.Type {
		case rpcRetryInfo:
			// A protobuf Duration in JSON: decimal seconds, "s" suffix.
			if v, err := time.ParseDuration(strings.TrimSpace(d.RetryDelay)); err == nil && v >= 0 && strings.HasSuffix(d.RetryDelay, "s") {
				delay, hasDelay = v, true
			}
		case rpcQuotaFailure:
			for _, v := range d.Violations {
				if keyQuotaName(v.QuotaID) || keyQuotaName(v.QuotaMetric) ||
					strings.HasPrefix(v.QuotaMetric, "generativelanguage.googleapis.com/") {
					keyQuota = true
				}
			}
		}
	}
	return delay, hasDelay, keyQuota
}

// keyQuotaName reports whether a quota id or metric names a per-project,
// per-key or per-user quota ("GenerateRequestsPerMinutePerProjectPerModel",
// "generate_content_requests_per_minute_per_project_per_base_model").
func keyQuotaName(s string) bool {
	n := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	return strings.Contains(n, "perproject") || strings.Contains(n, "perkey") || strings.Contains(n, "peruser")
}

// peekBody returns up to the first 64 KiB of resp's body and gives the
// body back whole.
func peekBody(resp *http.Response) ([]byte, error) {
	head, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return head, err
}

// bodyRetryAfter is the wait a 429 without a Retry-After header asks for
// in its body (Google's RetryInfo). The answer gets it as Retry-After
// (whole seconds, rounded up), so the caller is told it too.
func bodyRetryAfter(resp *http.Response) (time.Duration, bool) {
	head, err := peekBody(resp)
	if err != nil {
		return 0, false
	}
	d, ok, _ := rpcRetry(head)
	if ok {
		resp.Header.Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	}
	return d, ok
}
