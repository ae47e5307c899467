package proxy

import (
	"testing"

	gw "github.com/gwlabs/gateway"
)

func TestPromptBound(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	tight := func(n int64) int64 { own := (n + 2) / 3; return own + (own+1)/2 + frameMargin }
	if got, want := PromptBound(body, 0, gw.Hosted{}), tight(int64(len(body))); got != want {
		t.Errorf("plain: %d, want %d", got, want)
	}
	if got, want := PromptBound(body, 400, gw.Hosted{}), tight(int64(len(body))+400); got != want {
		t.Errorf("with a kept conversation: %d, want %d", got, want)
	}
	tools := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)
	if got, want := PromptBound(tools, 0, gw.Hosted{}), tight(int64(len(tools)))+toolMargin; got != want {
		t.Errorf("with tools: %d, want %d", got, want)
	}
	img := []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`)
	// (An image's marks may count it twice: the bound errs high.)
	if got, want := PromptBound(img, 0, gw.Hosted{}), tight(int64(len(img)))+imageMargin; got < want || got > want+imageMargin {
		t.Errorf("inline image: %d, want %d or one margin more", got, want)
	}
	for _, b := range []string{
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`,
		`{"model":"m","input":"x","previous_response_id":"resp_1"}`,
		`{"contents":[],"cachedContent":"cachedContents/1"}`,
		`{"model":"m","messages":[],"tools":[{"type":"web_search_20250305"}]}`,
	} {
		if got := PromptBound([]byte(b), 0, gw.Hosted{}); got != 0 {
			t.Errorf("%s: bound %d, want none (context the gateway cannot size)", b, got)
		}
	}
	if got := PromptBound(body, 0, gw.Hosted{WebSearches: 1}); got != 0 {
		t.Errorf("an answer that searched the web: bound %d, want none", got)
	}
}
