package proxy

import (
	"bytes"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/billable"
)

// NoteUsageDisputed marks a record whose vendor reported more prompt
// tokens than the gateway's upper bound of what it sent: charged up to
// the bound, the rest recorded as DisputedCost.
const NoteUsageDisputed = "usage_disputed"

// hiddenMargin is the prompt the gateway allows a vendor beyond one token
// a byte of what it sent: system prompts a vendor adds for tools, and
// the framing of messages.
const hiddenMargin = 4096

// imageMargin is the most prompt tokens one image may bill beyond its
// bytes (a small file of large dimensions: a few thousand tokens at most
// on every vendor).
const imageMargin = 4096

// imageMarks and contextMarks are matched as written, as
// billable.ExternalInput matches (a JSON key, never text inside a
// string, where its quotes would be escaped).
var (
	imageMarks = [][]byte{
		[]byte(`"image_url"`), []byte(`"input_image"`), []byte(`"type":"image"`), []byte(`"type": "image"`),
		[]byte(`"inlineData"`), []byte(`"inline_data"`), []byte(`"input_audio"`),
	}
	// contextMarks are members that make a vendor bill prompt the body
	// does not hold and the gateway cannot size: documents (whose pages
	// are billed as text and images), a vendor-kept cache, conversation
	// or prompt template, a response continued without the gateway
	// knowing its size, server tools and plugins that fetch content.
	contextMarks = [][]byte{
		[]byte(`"document"`), []byte(`"input_file"`), []byte(`"file_data"`), []byte(`"file"`),
		[]byte(`"cachedContent"`), []byte(`"cached_content"`), []byte(`"conversation"`), []byte(`"prompt":{`), []byte(`"prompt": {`),
		[]byte(`"previous_response_id"`), []byte(`"container"`), []byte(`"mcp_servers"`), []byte(`"plugins"`), []byte(`"thread"`),
		[]byte(`"web_search`), []byte(`"file_search`), []byte(`"code_execution`), []byte(`"code_interpreter`),
		[]byte(`"googleSearch`), []byte(`"google_search`), []byte(`"urlContext`), []byte(`"url_context`),
	}
)

// PromptBound is the most prompt tokens the gateway accepts that a
// vendor bills for body (the vendor's request) with extraBytes of
// server-side context it knows of (a kept conversation): one token a
// byte of both (four times the gateway's own count, one token per four
// bytes), plus hiddenMargin, plus imageMargin per image or audio part. 0
// means unbounded: the body points at input whose size the gateway does
// not know (see contextMarks and billable.ExternalInput), or the answer
// used hosted tools whose results the vendor bills as prompt.
func PromptBound(body []byte, extraBytes int, h gw.Hosted) int64 {
	if len(body) == 0 || h.Calls() || billable.ExternalInput(body) {
		return 0
	}
	for _, m := range contextMarks {
		if bytes.Contains(body, m) {
			return 0
		}
	}
	n := int64(len(body)) + int64(max(extraBytes, 0)) + hiddenMargin
	for _, m := range imageMarks {
		n += int64(bytes.Count(body, m)) * imageMargin
	}
	return n
}
