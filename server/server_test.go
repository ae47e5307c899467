package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/shape"
)

func TestParseEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		shape  gw.Shape
		body   string
		want   shape.Request
		errHas string
	}{
		{"chat minimal", gw.ShapeC, `{"model":"openai/x","messages":[]}`, shape.Request{Model: "openai/x"}, ""},
		{"chat max_completion_tokens wins", gw.ShapeC, `{"model":"m","messages":[],"max_tokens":5,"max_completion_tokens":9,"stream":true}`, shape.Request{Model: "m", Stream: true, MaxOutput: 9}, ""},
		{"messages", gw.ShapeM, `{"model":"a/b","messages":[],"max_tokens":0}`, shape.Request{Model: "a/b"}, ""},
		{"messages needs max_tokens", gw.ShapeM, `{"model":"a/b","messages":[]}`, shape.Request{}, "max_tokens is required"},
		{"negative max", gw.ShapeC, `{"model":"a/b","messages":[],"max_tokens":-1}`, shape.Request{}, "non-negative"},
		{"string stream", gw.ShapeC, `{"model":"a/b","messages":[],"stream":"yes"}`, shape.Request{}, "boolean"},
		{"messages object", gw.ShapeC, `{"model":"a/b","messages":{}}`, shape.Request{}, "array"},
		{"model number", gw.ShapeC, `{"model":5,"messages":[]}`, shape.Request{}, "string"},
		{"trailing garbage", gw.ShapeC, `{"model":"a/b","messages":[]} x`, shape.Request{}, "not valid JSON"},
		{"array body", gw.ShapeC, `[]`, shape.Request{}, "JSON object"},
		{"empty", gw.ShapeC, ``, shape.Request{}, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvelope(tt.shape, []byte(tt.body))
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) || gw.ErrorCode(err) != gw.CodeInvalidRequest {
					t.Fatalf("err = %v, want invalid_request containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestErrorEnvelopes(t *testing.T) {
	e := &gw.Error{Code: gw.CodeRateLimited, Message: "slow down", NoRetry: false}
	for _, shape := range []gw.Shape{gw.ShapeM, gw.ShapeC} {
		w := httptest.NewRecorder()
		writeError(w, shapes.Get(shape), "req_1", e)
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
			t.Fatalf("%s: status %d, Retry-After %q", shape, w.Code, w.Header().Get("Retry-After"))
		}
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		errObj := body["error"].(map[string]any)
		if errObj["type"] != "rate_limited" || errObj["request_id"] != "req_1" || errObj["message"] != "slow down" {
			t.Fatalf("%s: %s", shape, w.Body)
		}
		if _, has := body["type"]; has != (shape == gw.ShapeM) {
			t.Fatalf("%s: top-level type present = %v", shape, has)
		}
	}
	w := httptest.NewRecorder()
	writeError(w, plain, "req_2", &gw.Error{Code: gw.CodeRequestBlocked, Message: "no", IncidentID: "inc_9", NoRetry: true})
	if !strings.Contains(w.Body.String(), `"incident_id":"inc_9"`) || w.Header().Get("X-Should-Retry") != "false" || w.Code != 403 {
		t.Fatalf("blocked: %d %s", w.Code, w.Body)
	}
}

// parseEnvelope reads body as the chat endpoint of the named shape does.
func parseEnvelope(name gw.Shape, body []byte) (shape.Request, error) {
	return shapes.Get(name).Parse("", body)
}

func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{`{"model":"openai/x","messages":[],"stream":true}`, `{"model":"a","max_tokens":3,"messages":[{}]}`, `[]`, `{"model":null}`, `{`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, messages bool) {
		shape := gw.ShapeC
		if messages {
			shape = gw.ShapeM
		}
		_, err := parseEnvelope(shape, body)
		if err != nil {
			var e *gw.Error
			if !errors.As(err, &e) || e.Code != gw.CodeInvalidRequest || e.Message == "" {
				t.Fatalf("error %v is not an invalid_request *gw.Error", err)
			}
		}
	})
}

func TestStripUsageNull(t *testing.T) {
	tests := []struct{ in, want string }{
		{`data: {"id":"x","choices":[],"usage":null}` + "\n\n", `data: {"id":"x","choices":[]}` + "\n\n"},
		{`data: {"usage":{"prompt_tokens":1}}` + "\n\n", `data: {"usage":{"prompt_tokens":1}}` + "\n\n"},
		{": keep-alive\n\n", ": keep-alive\n\n"},
	}
	for _, tt := range tests {
		if got := string(stripUsageNull([]byte(tt.in))); got != tt.want {
			t.Errorf("stripUsageNull(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStreamOutcome(t *testing.T) {
	in := &proxy.Inbound{Vendor: "openai", Body: make([]byte, 400)}
	reported := gw.Usage{InputTokens: 10, OutputTokens: 20, Reported: true}
	vendorErr := &gw.Error{Code: gw.CodeOverloaded, Message: "openai: overloaded"}
	tests := []struct {
		name    string
		end     streamEnd
		success bool
		note    string
		code    gw.Code
		broke   bool
		output  int64
	}{
		{"complete", streamEnd{done: true, usage: reported, events: 5}, true, "", "", false, 20},
		{"complete, caller closed after the end", streamEnd{done: true, callerLeft: true, usage: reported}, true, "", "", false, 20},
		// Without usage the output is the text relayed, one token per
		// byte (an upper bound), never the event count.
		{"complete without usage", streamEnd{done: true, events: 7, textBytes: 31}, true, "usage_missing", "", false, 31},
		// A reported output older than the content relayed since (fewer
		// tokens than events) gives way to the text estimate.
		{"abandoned mid-way, stale count", streamEnd{callerLeft: true, usage: reported, events: 30, textBytes: 120}, true, "abandoned", "", false, 120},
		{"abandoned mid-way, current count", streamEnd{callerLeft: true, usage: reported, events: 12, textBytes: 120}, true, "abandoned", "", false, 20},
		{"abandoned before any usage", streamEnd{callerLeft: true, events: 3, textBytes: 17}, true, "abandoned; usage_missing", "", false, 17},
		// A vendor that failed after producing tokens: not a success (no
		// charge), but its usage is kept as the operator's cost.
		{"vendor error", streamEnd{vendorErr: vendorErr, callerLeft: true, usage: reported}, false, "", gw.CodeOverloaded, false, 20},
		{"cut without a word", streamEnd{readErr: errors.New("reset")}, false, "", gw.CodeUpstream, true, 0},
		{"cut after tokens", streamEnd{readErr: errors.New("reset"), events: 4, textBytes: 25}, false, "", gw.CodeUpstream, true, 25},
		{"ended early", streamEnd{}, false, "", gw.CodeUpstream, true, 0},
	}
	for _, tt := range tests {
		o, broke := streamOutcome(in, tt.end)
		if o.Success != tt.success || o.Note != tt.note || gw.ErrorCode(o.Err) != tt.code || (broke != nil) != tt.broke || o.Usage.OutputTokens != tt.output {
			t.Errorf("%s: outcome %+v broke=%v", tt.name, o, broke)
		}
	}
}
