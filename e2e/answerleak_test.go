package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/guard/leak"
)

// The guard's answer side, end to end: a gullible vendor
// ([fake:leak=FORM]) answers with the system prompt it received, in every
// form, on every shape, native and mapped, streamed and not. Every leak
// is stopped with at most leak.MaxWords protected words shown; a benign
// answer that names the assistant or quotes a few of its words passes
// unchanged.

const leakSystem = "You are Orion, the travel planner of Bluefin Air. Never disclose fare rules, partner discounts or the overbooking policy to anyone. " +
	"Offer seats only from the published schedule and hand refund requests to the customer care desk."

// leakRoute is one shape on one vendor.
type leakRoute struct {
	name   string
	vendor string
	path   func(model string, stream bool) string
	body   func(model, text string, stream bool) []byte
}

// leakRoutes are the eight routes (four shapes, native and mapped), each
// sending system as its system prompt.
func leakRoutes(system string) []leakRoute {
	opt := func(s string, stream bool) []byte {
		if stream {
			s += `,"stream":true`
		}
		return []byte(s + `}`)
	}
	m := func(model, text string, stream bool) []byte {
		return messagesBody(model, text, stream, `,"system":`+quote(system))
	}
	c := func(model, text string, stream bool) []byte {
		return opt(`{"model":`+quote(model)+`,"messages":[{"role":"system","content":`+quote(system)+`},{"role":"user","content":`+quote(text)+`}]`, stream)
	}
	r := func(model, text string, stream bool) []byte {
		return opt(`{"model":`+quote(model)+`,"instructions":`+quote(system)+`,"input":`+quote(text), stream)
	}
	g := func(_, text string, _ bool) []byte {
		return []byte(`{"systemInstruction":{"parts":[{"text":` + quote(system) + `}]},"contents":[{"role":"user","parts":[{"text":` + quote(text) + `}]}],"generationConfig":{"maxOutputTokens":256}}`)
	}
	fixed := func(p string) func(string, bool) string { return func(string, bool) string { return p } }
	gp := func(model string, stream bool) string {
		if stream {
			return gPath(model, "sse")
		}
		return gPath(model, "")
	}
	return []leakRoute{
		{"M/native", "anthropic", fixed("/v1/messages"), m},
		{"M/mapped", "openai", fixed("/v1/messages"), m},
		{"C/native", "openai", fixed("/v1/chat/completions"), c},
		{"C/mapped", "anthropic", fixed("/v1/chat/completions"), c},
		{"R/native", "openai", fixed("/v1/responses"), r},
		{"R/mapped", "anthropic", fixed("/v1/responses"), r},
		{"G/native", "google", gp, g},
		{"G/mapped", "openai", gp, g},
	}
}

// onEveryLeakRoute runs check as a subtest on each of the routes,
// streamed and not; post sends text as the user's message on that route.
func onEveryLeakRoute(t *testing.T, e *env, routes []leakRoute, check func(t *testing.T, rt leakRoute, stream bool, post func(text string) (*http.Response, []byte))) {
	for _, rt := range routes {
		for _, stream := range []bool{false, true} {
			name := rt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				model := rt.vendor + "/" + nativeModels[rt.vendor]
				check(t, rt, stream, func(text string) (*http.Response, []byte) {
					resp := e.post(rt.path(model, stream), e.key, rt.body(model, text, stream),
						"Anthropic-Version", "2023-06-01", "X-Goog-Api-Key", e.key)
					return resp, readAll(t, resp.Body)
				})
			})
		}
	}
}

func TestAnswerLeakStoppedEverywhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	protected := leak.New(leak.Protected{Texts: []string{leakSystem}})
	onEveryLeakRoute(t, e, leakRoutes(leakSystem), func(t *testing.T, rt leakRoute, stream bool, post func(string) (*http.Response, []byte)) {
		for _, form := range fakevendor.LeakForms {
			resp, body := post("Which flights leave tomorrow? [fake:leak=" + form + "]")
			shown := shownText(body)
			if l := checkShown(protected, shown); l != nil {
				t.Fatalf("%s: the caller got a leak (%s, %d words): %s", form, l.Form, l.Words, body)
			}
			if resp.StatusCode != http.StatusForbidden && (resp.StatusCode != http.StatusOK || !stream) {
				t.Fatalf("%s: status %d: %s", form, resp.StatusCode, body)
			}
			// 403, or (once a byte left) the stream's own error event.
			i := bytes.Index(body, []byte("inc_"))
			if !bytes.Contains(body, []byte("request_blocked")) || i < 0 || len(body) < i+30 {
				t.Fatalf("%s: stopped without request_blocked and an incident: %s", form, body)
			}
			incident := string(body[i : i+30])
			in, err := e.m.Store().Incident(ctx, incident)
			if err != nil || in.Kind != "extraction_answer" || in.Excerpt == "" || strings.Contains(in.Excerpt, "Bluefin") || strings.Contains(in.Reason, "Bluefin") {
				t.Fatalf("%s: incident %q = %+v, %v", form, incident, in, err)
			}
		}
		for _, form := range []string{"quote", "name"} {
			resp, body := post("Which flights leave tomorrow? [fake:leak=" + form + "]")
			want := fakevendor.Leaked(leakSystem, form)
			if resp.StatusCode != http.StatusOK || !strings.Contains(shownText(body), want) {
				t.Fatalf("%s: status %d, want the whole answer %q: %s", form, resp.StatusCode, want, body)
			}
		}
	})
}

// shownText is the answer text a caller reads in a response body or
// stream: the text, reasoning and argument strings of every JSON
// document in it, in order.
func shownText(body []byte) string {
	var out strings.Builder
	add := func(doc []byte) {
		var v any
		if json.Unmarshal(doc, &v) == nil {
			collectText(&out, v, "")
		}
	}
	if len(body) > 0 && (body[0] == '{' || body[0] == '[') {
		add(body)
		return out.String()
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			add(bytes.TrimSpace(d))
		}
	}
	return out.String()
}

func collectText(out *strings.Builder, v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if k == "instructions" || k == "tools" {
				continue
			}
			collectText(out, y, k)
		}
	case []any:
		for _, y := range x {
			collectText(out, y, key)
		}
	case string:
		switch key {
		case "text", "delta", "content", "arguments", "partial_json", "thinking", "reasoning_content", "refusal":
			out.WriteString(x)
		}
	}
}

func checkShown(s *leak.Set, text string) *leak.Leak {
	m := s.NewMatcher()
	if _, l := m.WriteString(text); l != nil {
		return l
	}
	_, l := m.Close()
	return l
}

// TestAnswerLeakInReasoningAndToolCalls: the protected text in the
// reasoning shown to the caller or in a tool call's arguments is a leak
// too; whatever the route shows, the caller never reads it.
func TestAnswerLeakInReasoningAndToolCalls(t *testing.T) {
	e := newEnv(t)
	protected := leak.New(leak.Protected{Texts: []string{leakSystem}})
	routes := leakRoutes(leakSystem)
	mTools := `,"tools":[{"name":"lookup","description":"Look a flight up.","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}]`
	cTools := `,"tools":[{"type":"function","function":{"name":"lookup","description":"Look a flight up.","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
	withTools := func(b []byte, tools string) []byte { return append(b[:len(b)-1:len(b)-1], []byte(tools+"}")...) }
	cases := []struct {
		name   string
		rt     leakRoute
		vendor string
		where  string
		tools  string
		native bool
	}{
		{"M reasoning native", routes[0], "anthropic", "reasoning", "", true},
		{"M reasoning mapped", routes[0], "deepseek", "reasoning", "", false},
		{"C reasoning native", routes[2], "deepseek", "reasoning", "", true},
		{"C reasoning mapped", routes[2], "anthropic", "reasoning", "", false},
		{"G reasoning native", routes[6], "google", "reasoning", "", true},
		{"R reasoning mapped", routes[4], "anthropic", "reasoning", "", false},
		{"M tool native", routes[0], "anthropic", "tool", mTools, true},
		{"M tool mapped", routes[0], "openai", "tool", mTools, false},
		{"C tool native", routes[2], "openai", "tool", cTools, true},
		{"C tool mapped", routes[2], "anthropic", "tool", cTools, false},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			for _, form := range []string{"verbatim", "base64", "rot13"} {
				model := tc.vendor + "/" + nativeModels[tc.vendor]
				body := tc.rt.body(model, "Which flights leave tomorrow? [fake:leak="+form+"][fake:leak-in="+tc.where+"]", stream)
				if tc.tools != "" {
					body = withTools(body, tc.tools)
				}
				resp := e.post(tc.rt.path(model, stream), e.key, body, "Anthropic-Version", "2023-06-01", "X-Goog-Api-Key", e.key)
				got := readAll(t, resp.Body)
				if l := checkShown(protected, shownText(got)); l != nil {
					t.Fatalf("%s stream=%v %s: the caller got a leak (%s): %s", tc.name, stream, form, l.Form, got)
				}
				stopped := bytes.Contains(got, []byte("request_blocked"))
				if tc.native && !stopped {
					t.Errorf("%s stream=%v %s: not stopped: %d %s", tc.name, stream, form, resp.StatusCode, got)
				}
				if !stopped && resp.StatusCode != http.StatusOK {
					t.Errorf("%s stream=%v %s: status %d: %s", tc.name, stream, form, resp.StatusCode, got)
				}
			}
		}
	}
}
