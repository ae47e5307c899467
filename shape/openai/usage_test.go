package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

func TestDecodeUsage(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want gw.Usage
	}{
		{
			name: "openai cached tokens are a subset of prompt tokens",
			raw:  `{"prompt_tokens":1816,"completion_tokens":40,"total_tokens":1856,"prompt_tokens_details":{"cached_tokens":1792},"completion_tokens_details":{"reasoning_tokens":12}}`,
			want: gw.Usage{InputTokens: 24, CacheReadTokens: 1792, OutputTokens: 40, ReasoningTokens: 12, Reported: true},
		},
		{
			name: "cache writes are taken out of the plain input",
			raw:  `{"prompt_tokens":5000,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":3000}}`,
			want: gw.Usage{InputTokens: 1000, CacheReadTokens: 1000, CacheWrite5mTokens: 3000, OutputTokens: 10, Reported: true},
		},
		{
			name: "deepseek hit and miss",
			raw:  `{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			want: gw.Usage{InputTokens: 36, CacheReadTokens: 64, OutputTokens: 7, Reported: true},
		},
		{
			// Issue 19.6: cached_tokens above prompt_tokens was billed as
			// 50 cached tokens; it is clamped to the prompt and flagged.
			name: "cached above the prompt clamped to it",
			raw:  `{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":50}}`,
			want: gw.Usage{InputTokens: 0, CacheReadTokens: 10, OutputTokens: 1, Reported: true, Clamped: true},
		},
		{
			name: "cache writes clamped to what the reads leave",
			raw:  `{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":6,"cache_write_tokens":9}}`,
			want: gw.Usage{InputTokens: 0, CacheReadTokens: 6, CacheWrite5mTokens: 4, OutputTokens: 1, Reported: true, Clamped: true},
		},
		{
			name: "openrouter cost is exact",
			raw:  `{"prompt_tokens":10,"completion_tokens":2,"cost":0.000123456789}`,
			want: gw.Usage{InputTokens: 10, OutputTokens: 2, Reported: true, ReportedCost: 12346, HasReportedCost: true, ReportedCostUSD: "123456789/1000000000000"},
		},
		{
			name: "openrouter cost in exponent form",
			raw:  `{"prompt_tokens":1,"completion_tokens":1,"cost":1.5e-05}`,
			want: gw.Usage{InputTokens: 1, OutputTokens: 1, Reported: true, ReportedCost: 1500, HasReportedCost: true, ReportedCostUSD: "3/200000"},
		},
		{
			name: "zero cost is still a reported cost",
			raw:  `{"prompt_tokens":1,"completion_tokens":1,"cost":0}`,
			want: gw.Usage{InputTokens: 1, OutputTokens: 1, Reported: true, HasReportedCost: true, ReportedCostUSD: "0"},
		},
		{
			name: "groq extra timing fields are ignored",
			raw:  `{"queue_time":0.01,"prompt_tokens":20,"prompt_time":0.002,"completion_tokens":5,"completion_time":0.1,"total_tokens":25,"total_time":0.12}`,
			want: gw.Usage{InputTokens: 20, OutputTokens: 5, Reported: true},
		},
		{
			name: "null is not reported",
			raw:  `null`,
			want: gw.Usage{},
		},
		{
			// Issue 29 item 5: no counts at all is malformed (it charged
			// 0 for a delivered answer).
			name: "empty object is malformed",
			raw:  `{}`,
			want: gw.Usage{Malformed: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeUsage([]byte(tt.raw))
			if err != nil {
				t.Fatalf("DecodeUsage: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeUsageMalformed(t *testing.T) {
	for _, raw := range []string{`[1]`, `{`} {
		_, err := DecodeUsage([]byte(raw))
		var ge *gw.Error
		if !errors.As(err, &ge) || ge.Code != gw.CodeUpstream {
			t.Errorf("DecodeUsage(%s) = %v, want an upstream_error", raw, err)
		}
	}
	// Issue 46 D4: an unreadable cost is priced from the list, never an
	// error; the counts stay the vendor's word.
	for _, raw := range []string{`{"prompt_tokens":1,"completion_tokens":1,"cost":"abc"}`, `{"prompt_tokens":1,"completion_tokens":1,"cost":1e400}`,
		`{"prompt_tokens":1,"completion_tokens":1,"cost":1e12}`, `{"prompt_tokens":1,"completion_tokens":1,"cost":{}}`} {
		u, err := DecodeUsage([]byte(raw))
		if err != nil || !u.Reported || u.Malformed || u.HasReportedCost || !u.CostUnreadable() || u.InputTokens != 1 {
			t.Errorf("DecodeUsage(%s) = %+v, %v; want the counts, the cost unreadable, no error", raw, u, err)
		}
	}
	// Issue 29 item 5: malformed counts mark the usage malformed (billed
	// from the gateway's own count) on every route, never an error.
	for _, raw := range []string{`{"prompt_tokens":"x","completion_tokens":1}`, `{"prompt_tokens":1.5,"completion_tokens":1}`, `{"prompt_tokens":1e3,"completion_tokens":1}`,
		`{"prompt_tokens":99999999999999999999,"completion_tokens":1}`, `{"prompt_tokens":-4,"completion_tokens":1}`, `{}`, `{"cost":"abc"}`} {
		u, err := DecodeUsage([]byte(raw))
		if err != nil || !u.Malformed || u.Reported {
			t.Errorf("DecodeUsage(%s) = %+v, %v; want malformed, not reported", raw, u, err)
		}
	}
}

func TestUsageFromBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want gw.Usage
	}{
		{
			name: "top-level usage",
			body: `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
			want: gw.Usage{InputTokens: 9, OutputTokens: 3, Reported: true},
		},
		{
			name: "groq x_groq usage when no top-level usage",
			body: `{"id":"x","choices":[],"x_groq":{"id":"req_1","usage":{"prompt_tokens":4,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":2}}}}`,
			want: gw.Usage{InputTokens: 2, CacheReadTokens: 2, OutputTokens: 2, Reported: true},
		},
		{
			name: "top-level usage wins over x_groq",
			body: `{"usage":{"prompt_tokens":5,"completion_tokens":1},"x_groq":{"usage":{"prompt_tokens":99,"completion_tokens":99}}}`,
			want: gw.Usage{InputTokens: 5, OutputTokens: 1, Reported: true},
		},
		{
			name: "deepseek keep-alive blank lines before the body",
			body: "\n\n\n{\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"prompt_cache_hit_tokens\":8}}",
			want: gw.Usage{InputTokens: 2, CacheReadTokens: 8, OutputTokens: 1, Reported: true},
		},
		{
			name: "no usage",
			body: `{"id":"x","choices":[]}`,
			want: gw.Usage{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UsageFromBody([]byte(tt.body))
			if err != nil {
				t.Fatalf("UsageFromBody: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := UsageFromBody([]byte("<html>")); gw.ErrorCode(err) != gw.CodeUpstream {
		t.Errorf("non-JSON body: err = %v, want upstream_error", err)
	}
}

func TestEncodeUsageRoundTrip(t *testing.T) {
	u := gw.Usage{InputTokens: 3, CacheReadTokens: 100, CacheWrite5mTokens: 7, CacheWrite1hTokens: 5, OutputTokens: 40, ReasoningTokens: 30, Reported: true}
	b, err := jsonMarshal(encodeUsage(u))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"prompt_tokens":115,"completion_tokens":40,"total_tokens":155,"prompt_tokens_details":{"cached_tokens":100,"cache_write_tokens":12},"completion_tokens_details":{"reasoning_tokens":30}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	back, err := DecodeUsage(b)
	if err != nil {
		t.Fatal(err)
	}
	// The 1h bucket has no C field: it comes back as 5m writes.
	if back.PromptTokens() != u.PromptTokens() || back.CacheWriteTokens() != u.CacheWriteTokens() || back.OutputTokens != u.OutputTokens {
		t.Errorf("round trip %+v -> %+v", u, back)
	}
}

// FuzzUsageBodyMatchesUnmarshal: reading only the usage members gives
// what decoding the whole body gives, error or not.
func FuzzUsageBodyMatchesUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":9,"completion_tokens":3}}`,
		`{"usage":{"prompt_tokens":5,"completion_tokens":1},"usage":{"prompt_tokens":7}}`,
		`{"USAGE":{"prompt_tokens":5},"Usage":null,"x_groq":{"usage":{"completion_tokens":2}}}`,
		`{"usage":"5"}`, `{"usage":{"prompt_tokens":1.5}}`, `[1]`, `null`, `"s"`, `{"a":tru}`, `{"a":1}x`,
		"\n\n{\"x_groq\":{\"usage\":{\"prompt_tokens\":4}},\"x_groq\":{\"id\":\"r\"}}",
		`{"us\u0061ge":{"prompt_tokens":3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var want, got usageBody
		werr := json.Unmarshal(body, &want)
		gerr := unmarshalUsageBody(body, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: Unmarshal error %v, usage-only error %v", body, werr, gerr)
		}
		if werr != nil {
			return
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) {
			t.Fatalf("%q: Unmarshal %s, usage-only %s", body, wj, gj)
		}
	})
}

// BenchmarkUsageFromBody meters a 2 KB non-streaming answer: reading
// only its usage members, against decoding the whole body (the way it
// was read before), in the same run.
func BenchmarkUsageFromBody(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-6-sol","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("A fairly ordinary sentence of an answer. ", 48) +
		`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":480,"total_tokens":600,"prompt_tokens_details":{"cached_tokens":64}}}`)
	b.Run("members", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := UsageFromBody(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u usageBody
			if err := json.Unmarshal(body, &u); err != nil {
				b.Fatal(err)
			}
			if _, err := u.pick().normalise(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Issue 29 item 6: the tier that served a Chat answer, from the body and
// from a stream's usage chunk; the standard tier under any name is "".
func TestServiceTierRead(t *testing.T) {
	for body, want := range map[string]string{
		`{"service_tier":"priority","usage":{"prompt_tokens":3,"completion_tokens":1}}`: "priority",
		`{"service_tier":"flex","usage":{"prompt_tokens":3,"completion_tokens":1}}`:     "flex",
		`{"service_tier":"default","usage":{"prompt_tokens":3,"completion_tokens":1}}`:  "",
		`{"service_tier":null,"usage":{"prompt_tokens":3,"completion_tokens":1}}`:       "",
		`{"usage":{"prompt_tokens":3,"completion_tokens":1}}`:                           "",
	} {
		u, err := UsageFromBody([]byte(body))
		if err != nil || u.Hosted.ServiceTier != want {
			t.Errorf("%s: tier %q (%v), want %q", body, u.Hosted.ServiceTier, err, want)
		}
	}
	m := NewMeter(false)
	m.Observe(&sse.Event{Data: []byte(`{"choices":[],"service_tier":"priority","usage":{"prompt_tokens":3,"completion_tokens":1}}`)})
	if got := m.Usage().Hosted.ServiceTier; got != "priority" {
		t.Errorf("stream tier %q, want priority", got)
	}
}
