package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 38 item 4: a model without a vendor prefix, or with an unknown
// one, is refused 400 naming the listed full id it most likely means,
// verbatim, on every route: M, C, R and the two count endpoints (before:
// 'it looks like an id of openai: "openai/<model>"').
func TestUnprefixedModelNamesFullID(t *testing.T) {
	e := newEnv(t)
	responsesBody := func(model string) []byte { return []byte(`{"model":` + quote(model) + `,"input":"hi"}`) }
	for _, c := range []struct {
		model, want string
	}{
		{"gpt-4.1-mini", `did you mean \"openai/gpt-4.1-mini\"?`},
		{"azure/gpt-4.1-mini", `did you mean \"openai/gpt-4.1-mini\"?`},
		{"GPT-4.1-MINI", `did you mean \"openai/gpt-4.1-mini\"?`},
		// Listed by OpenRouter's price list only.
		{"meta-llama/llama-3.3-70b-instruct", `did you mean \"openrouter/meta-llama/llama-3.3-70b-instruct\"?`},
		// A near miss of a listed id.
		{"gpt-4.1-minu", `did you mean \"openai/gpt-4.1-mini\"?`},
	} {
		for _, r := range []struct {
			path string
			body []byte
		}{
			{"/v1/messages", messagesBody(c.model, "hi", false, "")},
			{"/v1/chat/completions", chatBody(c.model, "hi", false, "")},
			{"/v1/responses", responsesBody(c.model)},
			{"/v1/messages/count_tokens", []byte(`{"model":` + quote(c.model) + `,"messages":[{"role":"user","content":"hi"}]}`)},
			{"/v1/responses/input_tokens", responsesBody(c.model)},
		} {
			resp := e.post(r.path, e.key, r.body)
			b := string(readAll(t, resp.Body))
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, c.want) {
				t.Errorf("%s with model %q: %d %s; want 400 with %s", r.path, c.model, resp.StatusCode, b, c.want)
			}
		}
	}
}
