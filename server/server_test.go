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
	"github.com/gwlabs/gateway/internal/rawjson"
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
			if err == nil {
				// The top-level members come from the parse, as a scan
				// of the body finds them.
				if ms, _ := rawjson.Members([]byte(tt.body)); !reflect.DeepEqual(got.Top, ms) {
					t.Fatalf("Top = %+v, want %+v", got.Top, ms)
				}
				got.Top = nil
			}
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
