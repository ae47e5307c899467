package fakevendor

import (
	"encoding/json"
	"strings"
	"testing"
)

// Google's 429 as the Gemini API sends it: RESOURCE_EXHAUSTED, no
// rate-limit or Retry-After headers, and in the body a QuotaFailure
// naming the project's quota (with its dimensions and value), a Help
// link and a RetryInfo delay; [fake:quota=ID] names another quota,
// [fake:quota=none] sends no QuotaFailure.
func TestGoogle429Shape(t *testing.T) {
	s := startServer(t)
	type detail struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
		Violations []struct {
			QuotaMetric     string            `json:"quotaMetric"`
			QuotaID         string            `json:"quotaId"`
			QuotaDimensions map[string]string `json:"quotaDimensions"`
			QuotaValue      string            `json:"quotaValue"`
		} `json:"violations"`
		Links []struct{ URL string } `json:"links"`
	}
	for _, c := range []struct {
		directives, quota, metric string
	}{
		{"", "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "generativelanguage.googleapis.com/generate_content_free_tier_requests"},
		{"[fake:quota=GenerateContentInputTokensPerModelPerMinute-FreeTier]", "GenerateContentInputTokensPerModelPerMinute-FreeTier", "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count"},
		{"[fake:quota=none]", "", ""},
	} {
		for _, stream := range []bool{false, true} {
			resp, b, _ := send(t, s, "google", modelFor("google"), "[fake:status=429][fake:retry=37]"+c.directives, reqOpts{stream: stream})
			if resp.StatusCode != 429 {
				t.Fatalf("%s: status %d", c.directives, resp.StatusCode)
			}
			for name := range resp.Header {
				if l := strings.ToLower(name); l == "retry-after" || strings.Contains(l, "ratelimit") {
					t.Errorf("%s: header %s; Google sends none", c.directives, name)
				}
			}
			var e struct {
				Error struct {
					Code    int      `json:"code"`
					Status  string   `json:"status"`
					Message string   `json:"message"`
					Details []detail `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != 429 || e.Error.Status != "RESOURCE_EXHAUSTED" || e.Error.Message == "" {
				t.Fatalf("%s: body %s (%v)", c.directives, b, err)
			}
			var got []string
			var quota, metric, delay string
			for _, d := range e.Error.Details {
				got = append(got, strings.TrimPrefix(d.Type, "type.googleapis.com/google.rpc."))
				switch d.Type {
				case "type.googleapis.com/google.rpc.QuotaFailure":
					if len(d.Violations) != 1 || d.Violations[0].QuotaDimensions["model"] != modelFor("google") || d.Violations[0].QuotaValue == "" {
						t.Errorf("%s: violations %+v", c.directives, d.Violations)
					} else {
						quota, metric = d.Violations[0].QuotaID, d.Violations[0].QuotaMetric
					}
				case "type.googleapis.com/google.rpc.RetryInfo":
					delay = d.RetryDelay
				case "type.googleapis.com/google.rpc.Help":
					if len(d.Links) == 0 || d.Links[0].URL == "" {
						t.Errorf("%s: help without a link", c.directives)
					}
				}
			}
			want := "QuotaFailure,Help,RetryInfo"
			if c.quota == "" {
				want = "Help,RetryInfo"
			}
			if strings.Join(got, ",") != want || quota != c.quota || metric != c.metric || delay != "37s" {
				t.Errorf("%s stream=%v: details %v quota %q metric %q delay %q; want %s, %q, %q, 37s", c.directives, stream, got, quota, metric, delay, want, c.quota, c.metric)
			}
		}
	}
}
