package openai_test

import (
	"fmt"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/openai"
)

// DecodeRequest reads a Chat Completions body into the canonical request;
// EncodeRequest writes it for one vendor's dialect (here Mistral's, which
// has no stream_options and names the seed random_seed).
func ExampleDecodeRequest() {
	r, err := openai.DecodeRequest([]byte(`{
		"model": "mistral/mistral-large-latest",
		"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
		"seed": 7
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Model, len(r.System), len(r.Messages), *r.Seed)
	d, _ := openai.DialectFor("mistral")
	r.Model = "mistral-large-latest" // the vendor's id, the prefix stripped
	b, err := openai.EncodeRequest(r, d)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// mistral/mistral-large-latest 1 1 7
	// {"model":"mistral-large-latest","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello"}],"random_seed":7}
}

// EncodeResponse writes a canonical answer as a chat.completion body.
func ExampleEncodeResponse() {
	resp := &gw.Response{
		Content:    []gw.Part{{Type: gw.PartText, Text: "Hi there."}},
		StopReason: gw.StopEndTurn,
		Usage:      gw.Usage{InputTokens: 12, OutputTokens: 4, Reported: true},
	}
	b, err := openai.EncodeResponse(resp, openai.ResponseMeta{ID: "chatcmpl_01", Model: "openai/gpt-6-sol", Created: 1764000000})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"id":"chatcmpl_01","object":"chat.completion","created":1764000000,"model":"openai/gpt-6-sol","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}
}

// A native route relays the vendor's bytes, fixing only the deviations
// that break the OpenAI SDKs: Mistral's tool calls without "type".
func ExampleDialect_NormalizeBody() {
	d, _ := openai.DialectFor("mistral")
	body := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"abcDEF123","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	fmt.Println(string(d.NormalizeBody(body)))
	// Output:
	// {"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"type":"function","id":"abcDEF123","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}
}
