package gemini_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/gemini"
)

func TestSplitPath(t *testing.T) {
	for _, c := range []struct{ path, model, method string }{
		{"/v1beta/models/anthropic/claude-sonnet-5-5:streamGenerateContent", "anthropic/claude-sonnet-5-5", "streamGenerateContent"},
		{"/v1/models/openai/gpt-6-sol:generateContent", "openai/gpt-6-sol", "generateContent"},
		{"/v1beta/models/fireworks/accounts/fireworks/models/kimi-k2p6:countTokens", "fireworks/accounts/fireworks/models/kimi-k2p6", "countTokens"},
		{"/v1beta/models/google/gemini-3-flash", "google/gemini-3-flash", ""},
		{"/v1beta/models/anthropic%2Fclaude-sonnet-5-5:generateContent", "anthropic/claude-sonnet-5-5", "generateContent"},
		{"/v1beta/models/a:b/c:generateContent", "a:b/c", "generateContent"},
	} {
		m, meth, ok := gemini.SplitPath(c.path)
		if !ok || m != c.model || meth != c.method {
			t.Errorf("%s: %q %q %v", c.path, m, meth, ok)
		}
	}
	if _, _, ok := gemini.SplitPath("/v1/messages"); ok {
		t.Error("/v1/messages is not a model path")
	}
}

func TestErrorBody(t *testing.T) {
	for _, c := range []struct {
		e      *gw.Error
		status int
		rpc    string
		retry  string
	}{
		{&gw.Error{Code: gw.CodeRateLimited, Message: "slow down", RetryAfter: 1500 * time.Millisecond}, 429, "RESOURCE_EXHAUSTED", "2s"},
		{&gw.Error{Code: gw.CodeRateLimited, Message: "slow down"}, 429, "RESOURCE_EXHAUSTED", "1s"},
		{&gw.Error{Code: gw.CodeInvalidRequest, Message: "bad"}, 400, "INVALID_ARGUMENT", ""},
		{&gw.Error{Code: gw.CodeAuthentication, Message: "who"}, 401, "UNAUTHENTICATED", ""},
		{&gw.Error{Code: gw.CodeInsufficientBalance, Message: "poor"}, 402, "FAILED_PRECONDITION", ""},
		{&gw.Error{Code: gw.CodeRequestBlocked, Message: "no", IncidentID: "inc_1"}, 403, "PERMISSION_DENIED", ""},
		{&gw.Error{Code: gw.CodeOverloaded, Message: "busy", RetryAfter: time.Second}, 503, "UNAVAILABLE", "1s"},
		{&gw.Error{Code: gw.CodeUpstreamTimeout, Message: "late"}, 504, "DEADLINE_EXCEEDED", ""},
	} {
		var env struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
				Details []struct {
					Type       string            `json:"@type"`
					Reason     string            `json:"reason"`
					Metadata   map[string]string `json:"metadata"`
					RetryDelay string            `json:"retryDelay"`
				} `json:"details"`
			} `json:"error"`
		}
		b := gemini.ErrorBody(c.e, "req_x")
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		retry := ""
		for _, d := range env.Error.Details {
			if strings.HasSuffix(d.Type, "RetryInfo") {
				retry = d.RetryDelay
			}
			if strings.HasSuffix(d.Type, "ErrorInfo") && (d.Reason != string(c.e.Code) || d.Metadata["request_id"] != "req_x" || d.Metadata["incident_id"] != c.e.IncidentID) {
				t.Errorf("%s: ErrorInfo %+v", c.e.Code, d)
			}
		}
		if env.Error.Code != c.status || env.Error.Status != c.rpc || env.Error.Message != c.e.Message || retry != c.retry {
			t.Errorf("%s: %s", c.e.Code, b)
		}
	}
}

func TestPage(t *testing.T) {
	var ms []gemini.Model
	for i := range 7 {
		ms = append(ms, gemini.NewModel(fmt.Sprintf("v/m%d", i), 100, 10))
	}
	var got []string
	tok := ""
	for range 10 {
		p, ok := gemini.Page(ms, 3, tok)
		if !ok {
			t.Fatal("token refused")
		}
		for _, m := range p.Models {
			got = append(got, m.Name)
		}
		if tok = p.NextPageToken; tok == "" {
			break
		}
	}
	if len(got) != 7 || got[0] != "models/v/m0" || got[6] != "models/v/m6" {
		t.Errorf("pages %v", got)
	}
	if _, ok := gemini.Page(ms, 3, "!!"); ok {
		t.Error("a bad token was taken")
	}
}

// TestUsageRoundTrip: usage written as usageMetadata reads back the same
// (cache writes, which Gemini has no field for, count as prompt).
func TestUsageRoundTrip(t *testing.T) {
	u := gw.Usage{InputTokens: 100, CacheReadTokens: 40, OutputTokens: 70, ReasoningTokens: 30, Reported: true}
	b, _ := json.Marshal(map[string]any{"usageMetadata": gemini.EncodeUsage(u)})
	got, err := gemini.UsageFromBody(b)
	if err != nil || got != u {
		t.Errorf("read back %+v from %s, want %+v", got, b, u)
	}
}

// TestStreamErrorEnds: an error record ends both framings; the array
// stays valid JSON.
func TestStreamErrorEnds(t *testing.T) {
	for _, sse := range []bool{true, false} {
		var out bytes.Buffer
		enc := gemini.NewStreamEncoder(&out, gemini.Meta{ModelVersion: "m"}, sse, "req_1")
		_ = enc.Encode(gw.Event{Type: gw.EventBlockStart, Index: 0, Part: &gw.Part{Type: gw.PartText}})
		_ = enc.Encode(gw.Event{Type: gw.EventDelta, Index: 0, Text: "par"})
		_ = enc.Encode(gw.Event{Type: gw.EventError, Err: &gw.Error{Code: gw.CodeOverloaded, Message: "busy"}})
		_ = enc.Encode(gw.Event{Type: gw.EventDelta, Index: 0, Text: "ignored"})
		s := out.String()
		if strings.Contains(s, "ignored") || !strings.Contains(s, `"status":"UNAVAILABLE"`) {
			t.Errorf("sse=%v: %s", sse, s)
		}
		if !sse {
			var recs []json.RawMessage
			if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) != 2 {
				t.Errorf("array: %v %s", err, s)
			}
		}
	}
}
