package anthropic_test

import (
	"fmt"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/anthropic"
)

// DecodeRequest reads a Messages request body into the canonical request
// (strictly: an unknown content block or a wrong type is an error).
func ExampleDecodeRequest() {
	r, err := anthropic.DecodeRequest([]byte(`{
		"model": "anthropic/claude-sonnet-5-5",
		"max_tokens": 256,
		"system": "Be brief.",
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Model, *r.MaxTokens, r.System[0].Text)
	for _, m := range r.Messages {
		fmt.Println(m.Role, m.Content[0].Type, m.Content[0].Text)
	}
	_, err = anthropic.DecodeRequest([]byte(`{"model":"x","max_tokens":"lots","messages":[]}`))
	fmt.Println(gw.ErrorCode(err))
	// Output:
	// anthropic/claude-sonnet-5-5 256 Be brief.
	// user text Hello
	// invalid_request
}

// EncodeResponse writes a canonical answer as a Messages response body.
func ExampleEncodeResponse() {
	resp := &gw.Response{
		Content:    []gw.Part{{Type: gw.PartText, Text: "Hi there."}},
		StopReason: gw.StopEndTurn,
		Usage:      gw.Usage{InputTokens: 12, OutputTokens: 4, Reported: true},
	}
	b, err := anthropic.EncodeResponse(resp, anthropic.ResponseMeta{ID: "msg_01", Model: "anthropic/claude-sonnet-5-5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"id":"msg_01","type":"message","role":"assistant","model":"anthropic/claude-sonnet-5-5","content":[{"type":"text","text":"Hi there."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":4}}
}
