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

func leakRoutes() []leakRoute {
	m := func(model, text string, stream bool) []byte {
		return messagesBody(model, text, stream, `,"system":`+quote(leakSystem))
	}
	c := func(model, text string, stream bool) []byte {
		s := `{"model":` + quote(model) + `,"messages":[{"role":"system","content":` + quote(leakSystem) + `},{"role":"user","content":` + quote(text) + `}]`
		if stream {
			s += `,"stream":true`
		}
		return []byte(s + `}`)
	}
	r := func(model, text string, stream bool) []byte {
		s := `{"model":` + quote(model) + `,"instructions":` + quote(leakSystem) + `,"input":` + quote(text)
		if stream {
			s += `,"stream":true`
		}
		return []byte(s + `}`)
	}
	g := func(_, text string, _ bool) []byte {
		return []byte(`{"systemInstruction":{"parts":[{"text":` + quote(leakSystem) + `}]},"contents":[{"role":"user","parts":[{"text":` + quote(text) + `}]}],"generationConfig":{"maxOutputTokens":256}}`)
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

func TestAnswerLeakStoppedEverywhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	protected := leak.New(leak.Protected{Texts: []string{leakSystem}})
	for _, rt := range leakRoutes() {
		for _, stream := range []bool{false, true} {
			name := rt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				model := rt.vendor + "/" + nativeModels[rt.vendor]
				for _, form := range fakevendor.LeakForms {
					resp := e.post(rt.path(model, stream), e.key, rt.body(model, "Which flights leave tomorrow? [fake:leak="+form+"]", stream),
						"Anthropic-Version", "2023-06-01", "X-Goog-Api-Key", e.key)
					body := readAll(t, resp.Body)
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
					resp := e.post(rt.path(model, stream), e.key, rt.body(model, "Which flights leave tomorrow? [fake:leak="+form+"]", stream),
						"Anthropic-Version", "2023-06-01", "X-Goog-Api-Key", e.key)
					body := readAll(t, resp.Body)
					want := fakevendor.Leaked(leakSystem, form)
					if resp.StatusCode != http.StatusOK || !strings.Contains(shownText(body), want) {
						t.Fatalf("%s: status %d, want the whole answer %q: %s", form, resp.StatusCode, want, body)
					}
				}
			})
		}
	}
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
